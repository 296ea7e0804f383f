#!/usr/bin/env bash
# `sonde frankentrace` on the real CC2650 FrankenTrace artifacts (shared
# testdata): the CSV reads; analyze finds the busy-wait polling the RF core's
# acknowledge register RFACKIFG (0x4004101c, read at sendCmd+0x72 = 0x1a32)
# from cycle 82,423 for 3,168 cycles as the paper reports, with the polled
# address from the real LSU trace; check finds no impossible transition before
# the oscillator switch at cycle ~96,500 and thousands after it (the stitched
# runs diverge there).
set -u
D="$SONDE_TESTDATA/frankentrace-cc2650"
TR="$D/blink_if_see.pc_trace.csv.gz" ELF="$D/blink_if_see.elf" LSU="$D/blink_if_see.lsu_trace.csv.gz"
for f in "$TR" "$ELF" "$LSU"; do
  [ -f "$f" ] || { echo "missing test data $f" >&2; echo "0 passed, 1 failed"; exit 1; }
done
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check() { if [ "$2" = "$3" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1: '$2' != '$3'"; fi; }
S=$SONDE

"$S" frankentrace analyze -e "$ELF" --lsu "$LSU" --range 0x4004101c --accesses 3 --clock 48M "$TR" >"$tmp/a.txt"
check "analyze rc" $? 0
check "rf loop" "$(grep -m1 'RFCorePrv___RFCore___sendCmd+0x72' "$tmp/a.txt")" \
  "  cycles 82423-85590: 3168 cycles (66.0 us), 318 iterations of 3 instructions at 0x00001a32-0x00001a36 (RFCorePrv___RFCore___sendCmd+0x72), 4 cycles unrecoverable; polls 0x4004101c"
check "trace line" "$(head -1 "$tmp/a.txt")" "trace: cycles 743..519359 (518617): 134824 known, 0 sleep, 383793 unrecoverable"
check "first access" "$(grep -m1 '^  run' "$tmp/a.txt")" \
  "  run    5 ts      85388  write 0x4004101c = 0x00000000 (4 bytes) at 0x00001a2e RFCorePrv___RFCore___sendCmd+0x6e"
"$S" frankentrace analyze -e "$ELF" --json "$TR" >"$tmp/a.json"; check "analyze json rc" $? 0
# Python re-derives the loop from the CSV on its own
python3 - "$TR" "$tmp/a.json" >"$tmp/py" <<'PY'
import csv, gzip, json, sys
rows = list(csv.reader(gzip.open(sys.argv[1], 'rt')))[1:]
pc = {int(r[0]): int(r[1], 16) for r in rows}
body = {0x1a32, 0x1a34, 0x1a36}
start = 82423
assert pc[start - 1] not in body and pc[start] == 0x1a32
end = start
while pc.get(end + 1) in body or (end + 1 in pc and rows and False):
    end += 1
# the loop continues across the 4 valid=false rows (same PCs): follow all rows
end = start
while (end + 1) in pc and pc[end + 1] in body:
    end += 1
d = json.load(open(sys.argv[2]))
loop = [l for l in d["busy_loops"] if l["head"] == 0x1a32][0]
print(end, end - start + 1, loop["first_cycle"], loop["last_cycle"], loop["loads"])
PY
check "python loop" "$(cat "$tmp/py")" "85590 3168 82423 85590 True"

"$S" frankentrace check -e "$ELF" --json --max 100000 "$TR" >"$tmp/c.json"; check "check rc (impossible found)" $? 1
check "check counts" "$(python3 -c '
import json,sys; d=json.load(open(sys.argv[1])); b=d["bad"]
print(d["transitions"], d["impossible"], len(b), min(x["cycle"] for x in b), sum(1 for x in b if x["cycle"] < 96584))' "$tmp/c.json")" "40173 6406 6406 96584 0"

# the paper's other case study: the last value written to GPIO DOE31_0 (0x400220d0) is
# 0x00106000 (output enabled on pins 13, 14 and 20)
"$S" frankentrace analyze -e "$ELF" --lsu "$LSU" --range 0x400220d0 --accesses 0 --json "$TR" >"$tmp/g.json"
check "doe31_0" "$(python3 -c '
import json,sys; d=json.load(open(sys.argv[1])); r=d["registers"]
print(len(r), hex(r[0]["addr"]), hex(r[0]["last_write"]), r[0]["runs"], d["accesses_matched"], len(d["accesses"]))' "$tmp/g.json")" "1 0x400220d0 0x106000 39 468 468"
# independently: the last write to it in the first run (pair) that traced it, from the raw CSV
check "doe31_0 python" "$(python3 -c '
import csv,gzip,sys
rows=[r for r in csv.DictReader(gzip.open(sys.argv[1],"rt")) if int(r["val_addr_16b"],16)==0x400220d0]
first=rows[0]["pair_id"]; w=[r["val_data"] for r in rows if r["pair_id"]==first and r["direction"]=="Write"]
print(w[-1])' "$LSU")" "0x00106000"

# the real trace converts to pct and back without losing a known cycle
"$S" frankentrace convert --format pct -o "$tmp/r.pct" "$TR"; check "convert rc" $? 0
"$S" frankentrace verify --raw --json "$tmp/r.pct" "$TR" >"$tmp/v.json"; check "verify rc" $? 0
check "verify counts" "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["compared"], d["different"], d["unrecoverable"])' "$tmp/v.json")" "134824 0 383793"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
