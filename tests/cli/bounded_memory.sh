#!/usr/bin/env bash
# Wrong or hostile inputs cost little memory and time: `run` checks the ELF
# header before reading a file whole, `grammar stats` refuses binary junk at its
# first bytes, `top` keeps a bounded table however many distinct PCs a stream
# claims. Each command's peak memory (python's getrusage of the child) and time
# are bounded; the old code read a 2 GB sparse file whole (17 s, 2.1 GB) and took
# 212 MB for `top` on 1.5 M random PC samples. Under ASan (ASAN_OPTIONS set by
# make test-sanitize) the memory figures include the shadow and are only printed.
set -u
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
truncate -s 2G "$tmp/sparse"
# limited CMD...: run with a 120 s limit (a hang guard, not a timing check); fail (exit 99) if its peak RSS exceeds 256 MB
limited() {
  python3 -c '
import resource, subprocess, sys
p = subprocess.run(sys.argv[2:], timeout=120)
kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
open(sys.argv[1], "w").write(str(kb))
sys.exit(p.returncode)' "$tmp/kb" "$@"
  local rc=$?
  local kb; kb=$(cat "$tmp/kb" 2>/dev/null || echo 0)
  if [ -z "${ASAN_OPTIONS:-}" ] && [ "$kb" -gt 262144 ]; then
    echo "FAIL: $* used $kb KB" >&2
    return 99
  fi
  return $rc
}

limited "$SONDE" run "$tmp/sparse" >/dev/null 2>"$tmp/e"; rc=$?
[ $rc -eq 1 ] && grep -q "is not an ELF file" "$tmp/e" && ok || bad "run sparse: exit $rc: $(cat "$tmp/e")"
limited "$SONDE" run /dev/zero >/dev/null 2>"$tmp/e"; rc=$?
[ $rc -eq 1 ] && grep -q "is not an ELF file (it starts with 00 00 00 00" "$tmp/e" && ok || bad "run /dev/zero: exit $rc: $(cat "$tmp/e")"
limited "$SONDE" run "$tmp" >/dev/null 2>"$tmp/e"; rc=$?
[ $rc -eq 1 ] && grep -q "is a directory" "$tmp/e" && ok || bad "run dir: exit $rc: $(cat "$tmp/e")"
limited "$SONDE" run -m /dev/zero /dev/null >/dev/null 2>"$tmp/e"; rc=$?
[ $rc -ne 0 ] && grep -q "larger than 1 MiB" "$tmp/e" && ok || bad "run -m /dev/zero: exit $rc: $(cat "$tmp/e")"
for f in "$tmp/sparse" /dev/zero; do
  limited "$SONDE" grammar stats "$f" >/dev/null 2>"$tmp/e"; rc=$?
  [ $rc -eq 1 ] && grep -q "byte offset 0: a NUL byte" "$tmp/e" && ok || bad "grammar stats $f: exit $rc: $(cat "$tmp/e")"
done

# 1.5 M PC sample packets with random (distinct) PCs
python3 -c '
import random, struct, sys
r = random.Random(7)
out = bytearray()
for _ in range(1500000):
    out += b"\x17" + struct.pack("<I", r.getrandbits(32) & ~1)
sys.stdout.buffer.write(out)' >"$tmp/randpc.bin"
ELF="$SONDE_TESTDATA/frankentrace-cc2650/blink_if_see.elf"
limited "$SONDE" top -e "$ELF" --format json "$tmp/randpc.bin" >"$tmp/top.json" 2>"$tmp/e"
kb=$(cat "$tmp/kb")
echo "top on 1.5 M random PCs: $kb KB peak"
if [ -n "${ASAN_OPTIONS:-}" ]; then ok; else [ "$kb" -lt 200000 ] && ok || bad "top used $kb KB"; fi
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["samples"] == 1500000, d["samples"]
assert d["distinct_pcs"] == 1048576, d["distinct_pcs"]
assert d["untracked"] > 400000, d["untracked"]
assert d["untracked"] + sum(r["samples"] for r in d["rows"]) == d["samples"]
' "$tmp/top.json" && ok || bad "top json totals: $(head -c 300 "$tmp/top.json")"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
