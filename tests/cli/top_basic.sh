#!/bin/bash
# `sonde top` on PC samples taken from a real trace: every 7th row of the
# FrankenTrace CC2650 PC trace (tests/data) becomes a DWT periodic PC
# sample packet (with an LTS1 after it); the expected per-function counts come
# from that file's `label` column (FrankenTrace's own symbolisation), so the
# counts must match exactly. Exceptions are added by hand with known
# durations and nesting. Also: sleep share, folded/callgrind/json formats,
# bad usage.
set -u
pass=0 fail=0
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*" >&2; fail=$((fail + 1)); }
check_eq() { if [ "$1" == "$2" ]; then ok; else bad "$3: got [$1] want [$2]"; fi; }
D="$SONDE_TESTDATA/frankentrace-cc2650"
ELF="$D/blink_if_see.elf"
[ -f "$ELF" ] && [ -f "$D/blink_if_see.pc_trace.csv.gz" ] || { echo "missing test data in $D" >&2; exit 1; }

python3 - "$D/blink_if_see.pc_trace.csv.gz" "$T" <<'EOP'
import csv, gzip, json, struct, sys, collections
src, d = sys.argv[1], sys.argv[2]
s = bytearray(b'\x00' * 5 + b'\x80')
want = collections.Counter()
n = 0
for i, row in enumerate(csv.DictReader(gzip.open(src, 'rt'))):
    if i % 7:
        continue
    pc = int(row['val'], 16)
    lab = row['label']
    if not lab or pc >= 0x10000000:
        name = None          # ROM or unlabelled: not in this ELF
    else:
        name = lab.rsplit('+', 1)[0]
    want[name if name else "0x%08x" % pc] += 1
    s += bytes([0x17]) + struct.pack('<I', pc)
    s += bytes([0xc0, 0x07])             # LTS1 +7 cycles
    n += 1
for k in range(10):                      # 10 sleeping samples
    s += bytes([0x15, 0x00])
# exceptions: SysTick (15) 3 times, 100/200/300 cycles; inside the 2nd, IRQ 5 (21)
# preempts for 50 cycles (nesting depth 2)
def lts1(v):
    g = []
    while True:
        g.append(v & 0x7f)
        v >>= 7
        if not v:
            break
    return bytes([0xc0]) + bytes([(x | 0x80) if i < len(g) - 1 else x for i, x in enumerate(g)])
def exc(num, fn):
    return bytes([0x0e, num & 0xff, ((num >> 8) & 1) | (fn << 4)])
s += exc(15, 1) + lts1(10) + exc(15, 2) + lts1(100) + exc(0, 3) + lts1(5)
s += exc(15, 1) + lts1(10) + exc(21, 1) + lts1(20) + exc(21, 2) + lts1(50) + exc(15, 3) + lts1(1) \
     + exc(15, 2) + lts1(129) + exc(0, 3) + lts1(5)
s += exc(15, 1) + lts1(10) + exc(15, 2) + lts1(300) + exc(0, 3) + lts1(5)
open(d + '/pc.bin', 'wb').write(s)
json.dump({"n": n, "want": want}, open(d + '/want.json', 'w'))
EOP

"$SONDE" top -e "$ELF" --format json "$T/pc.bin" >"$T/top.json" 2>"$T/err"; rc=$?
check_eq "$rc" 0 "top json exit"
python3 - "$T/top.json" "$T/want.json" <<'EOP' && ok || bad "per-function counts vs FrankenTrace labels"
import json, sys
got = json.load(open(sys.argv[1]))
w = json.load(open(sys.argv[2]))
want, n = w["want"], w["n"]
assert got["samples"] == n + 10, (got["samples"], n)
assert got["sleep"] == 10
rows = {}
for r in got["rows"]:
    name = r["function"] if r["function"] is not None else "0x%08x" % r["addr"]
    rows[name] = rows.get(name, 0) + r["samples"]
if rows != want:
    diff = {k: (rows.get(k), want.get(k)) for k in set(rows) | set(want) if rows.get(k) != want.get(k)}
    print("mismatch:", list(diff.items())[:20], file=sys.stderr)
    sys.exit(1)
counts = [r["samples"] for r in got["rows"]]
assert counts == sorted(counts, reverse=True)
ex = {e["exc"]: e for e in got["exceptions"]}
assert ex[15]["count"] == 3 and ex[15]["timed"] == 3, ex[15]
assert ex[15]["total_cycles"] == 100 + 200 + 300, ex[15]
assert ex[15]["max_cycles"] == 300 and ex[15]["max_depth"] == 1 and ex[15]["nested"] == 0, ex[15]
assert ex[21]["count"] == 1 and ex[21]["total_cycles"] == 50 and ex[21]["max_depth"] == 2, ex[21]
assert ex[21]["nested"] == 1 and ex[21]["name"] == "IRQ5", ex[21]
assert got["unmatched"] == 0
print("top: %d samples, %d functions match FrankenTrace's labels" % (n, len(want)))
EOP

"$SONDE" top -e "$ELF" "$T/pc.bin" >"$T/top.txt" 2>/dev/null
grep -q "^samples .*, sleep 10 " "$T/top.txt" && ok || bad "text header"
grep -q "\[sleep\]" "$T/top.txt" && ok || bad "text sleep row"
grep -Eq "^ +15  SysTick +3 +600 +200 +300 +1 +0$" "$T/top.txt" && ok || bad "text exception row: $(grep SysTick "$T/top.txt")"

"$SONDE" top -e "$ELF" --format folded "$T/pc.bin" >"$T/f" 2>/dev/null
python3 - "$T/f" "$T/want.json" <<'EOP' && ok || bad "folded sums"
import json, sys
w = json.load(open(sys.argv[2]))
tot = 0
for line in open(sys.argv[1]):
    stack, c = line.rsplit(' ', 1)
    assert stack.startswith("Thread;") or stack == "[sleep]", stack
    tot += int(c)
assert tot == w["n"] + 10, tot
EOP
"$SONDE" top -e "$ELF" --format callgrind "$T/pc.bin" >"$T/cg" 2>/dev/null
head -1 "$T/cg" | grep -q "^# callgrind format" && ok || bad "callgrind header"
grep -q "^events: Samples" "$T/cg" && ok || bad "callgrind events"
"$SONDE" top -e "$ELF" --by line "$T/pc.bin" >/dev/null 2>"$T/err"; check_eq "$?" 0 "--by line without DWARF"
grep -q "no DWARF line table" "$T/err" && ok || bad "--by line warning"

for args in "$T/pc.bin" "-e $ELF" "-e $ELF --by file $T/pc.bin" "-e $ELF --format xml $T/pc.bin" \
    "-e $ELF --interval 0 $T/pc.bin"; do
  # shellcheck disable=SC2086
  "$SONDE" top $args >/dev/null 2>&1; rc=$?
  if [ "$rc" == 2 ]; then ok; else bad "usage '$args' exit $rc"; fi
done
"$SONDE" top -e "$T/nope.elf" "$T/pc.bin" >/dev/null 2>&1; check_eq "$?" 1 "missing ELF"
"$SONDE" top --help >/dev/null; check_eq "$?" 0 "help"
# --limit would be ignored by folded and callgrind output: refused (issue 21)
"$SONDE" top -e "$ELF" -n 5 --format folded "$T/pc.bin" >/dev/null 2>&1; check_eq "$?" 2 "--limit with folded"
"$SONDE" top -e "$ELF" -n 5 --format callgrind "$T/pc.bin" >/dev/null 2>&1; check_eq "$?" 2 "--limit with callgrind"
"$SONDE" top --la-channel 2 -e "$ELF" "$T/pc.bin" >/dev/null 2>&1; check_eq "$?" 2 "--la-channel without --line"

echo "$pass passed, $fail failed"
[ "$fail" == 0 ]
