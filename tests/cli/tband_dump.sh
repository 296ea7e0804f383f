#!/bin/bash
# sonde tband dump on the real trace from tests/data and on corrupt input.
set -u
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*" >&2; fail=$((fail + 1)); }
T="$SONDE_TESTDATA/tonbandgeraet/posix_freertos.log.hex"
[ -f "$T" ] || { echo "missing test data $T" >&2; exit 1; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

"$SONDE" tband dump --format json "$T" >"$W/d.json" 2>"$W/err"; rc=$?
[ $rc -eq 0 ] && ok || bad "dump exit $rc: $(cat "$W/err")"
n=$(wc -l <"$W/d.json")
[ "$n" -eq 3231 ] && ok || bad "expected 3231 frames, got $n"
n=$(grep -c '"evt":"task_switched_in"' "$W/d.json")
[ "$n" -eq 855 ] && ok || bad "expected 855 task switches, got $n"
n=$(grep -c '"evt":"error"' "$W/d.json")
[ "$n" -eq 0 ] && ok || bad "expected no errors, got $n"
# timestamps never decrease
awk -F'"ts":' 'NF > 1 { split($2, a, ","); t = a[1] + 0; if (t < last) { print "back at " NR; exit 1 } last = t }' "$W/d.json" && ok || bad "timestamps decrease"
# exact first lines: documented names and fields
head -1 "$W/d.json" | grep -qx '{"evt":"task_name","core":0,"task_id":1,"name":"mytask1"}' && ok || bad "first line: $(head -1 "$W/d.json")"
grep -m1 '"evt":"task_switched_in"' "$W/d.json" | grep -qE '^\{"evt":"task_switched_in","ts":[0-9]+,"core":0,"task_id":[0-9]+\}$' && ok || bad "switch line format"
grep -m1 '"evt":"valmarker"' "$W/d.json" | grep -qE '^\{"evt":"valmarker","ts":[0-9]+,"core":0,"valmarker_id":[0-9]+,"val":-?[0-9]+\}$' && ok || bad "valmarker line format"
# file@core puts every frame on that core
"$SONDE" tband dump --format json "$T@3" | grep -vc '"core":3' | grep -qx 0 && ok || bad "file@3"
# text output
"$SONDE" tband dump "$T" | sed -n 4p | grep -q 'queue_kind queue_id=1 kind=3(FRQK_MUTEX)' && ok || bad "text line"

# corrupt input: binary with a bad frame in the middle, decoding continues
printf '\x04\x04\x01\x05\x00\x03\xee\x01\x00\x04\x05\x02\x05\x00' >"$W/c.bin"
"$SONDE" tband dump --format json "$W/c.bin" >"$W/c.json" 2>"$W/c.err"; rc=$?
[ $rc -eq 1 ] && ok || bad "corrupt: exit $rc"
[ "$(wc -l <"$W/c.json")" -eq 3 ] && ok || bad "corrupt: 3 frames expected"
sed -n 2p "$W/c.json" | grep -q '"evt":"error","core":0,"offset":5,"error":"unknown event id 0xee' && ok || bad "corrupt: $(sed -n 2p "$W/c.json")"
sed -n 3p "$W/c.json" | grep -qx '{"evt":"isr_exit","ts":2,"core":0,"isr_id":5}' && ok || bad "corrupt: recovery"
grep -q "1 corrupt frame(s) of 3" "$W/c.err" && ok || bad "corrupt: stderr $(cat "$W/c.err")"
# usage errors
"$SONDE" tband dump >/dev/null 2>&1; [ $? -eq 2 ] && ok || bad "no input should be usage error"
"$SONDE" tband dump /nonexistent/x 2>"$W/e"; [ $? -eq 1 ] && grep -q "nonexistent" "$W/e" && ok || bad "missing file"
"$SONDE" tband frob 2>/dev/null; [ $? -eq 2 ] && ok || bad "unknown subcommand"
"$SONDE" tband dump --help | grep -q -- "--format" && ok || bad "help"

# every option in --help is documented in docs/cli.md
for sub in dump conv; do
  for o in $("$SONDE" tband $sub --help | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
    [ "$o" = "--help" ] && continue
    grep -q -- "$o" "$SONDE_SRC/docs/cli.md" && ok || bad "tband $sub: $o missing from docs/cli.md"
  done
done
# a directory is not a trace
"$SONDE" tband dump "$W" 2>"$W/e"; [ $? -eq 1 ] && grep -q "sonde: tband dump:" "$W/e" && ok || bad "directory input"

# JSON output is valid UTF-8 JSON whatever bytes a message holds: the first
# frame of the real trace (task 1's name "mytask1") with 0xff and 0x7f in it
printf '0a 5f 01 6d ff 7f 61 73 6b 31 00\n' >"$W/bytes.hex"
"$SONDE" tband dump --format json "$W/bytes.hex" >"$W/bytes.json" 2>"$W/e" && ok || bad "dump of odd bytes: $(cat "$W/e")"
python3 -c '
import json, sys
raw = open(sys.argv[1], "rb").read()
lines = raw.decode("utf-8", "strict").splitlines()   # raises on invalid UTF-8
objs = [json.loads(l) for l in lines]
names = [v for o in objs for v in o.values() if isinstance(v, str) and v.startswith("m")]
assert "m\u00ff\u007fask1" in names, names
assert b"\x7f" not in raw and b"\xff" not in raw
' "$W/bytes.json" && ok || bad "tband dump --format json is not valid UTF-8 JSON: $(od -c "$W/bytes.json" | head -5)"

# <input>@<core> that is not a core is a usage error naming it, not "No such file"
"$SONDE" tband dump "$W/bytes.hex@-1" >/dev/null 2>"$W/e"; rc=$?
[ $rc -eq 2 ] && grep -q "the core after '@' must be a number" "$W/e" && ok || bad "x@-1: exit $rc: $(cat "$W/e")"
"$SONDE" tband conv --mode freertos -o "$W/c.pftrace" "$T@2x" >/dev/null 2>"$W/e"; rc=$?
[ $rc -eq 2 ] && ok || bad "conv x@2x: exit $rc: $(cat "$W/e")"
# tcp: inputs (docs/cli.md): the same dump as from the file
"$SONDE" tband dump "$T" >"$W/file.txt" 2>/dev/null
python3 -c '
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1); s.settimeout(20)
open(sys.argv[2] + ".tmp", "w").write(str(s.getsockname()[1]))
import os; os.rename(sys.argv[2] + ".tmp", sys.argv[2])   # the port, once listening
c, _ = s.accept(); c.sendall(open(sys.argv[1], "rb").read()); c.close()
' "$T" "$W/port" &
srv=$!
for i in $(seq 100); do [ -s "$W/port" ] && break; sleep 0.05; done
port=$(cat "$W/port")
"$SONDE" tband dump "tcp:127.0.0.1:$port" >"$W/tcp.txt" 2>"$W/e" && cmp -s "$W/file.txt" "$W/tcp.txt" && ok ||
  bad "tband dump tcp: differs from the file: $(cat "$W/e")"
wait $srv 2>/dev/null

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
