#!/bin/bash
# `sonde energy` (docs/monitor.md "Energy"): per function from a `monitor pc`
# CSV with the VM's current equals `monitor pc --energy` (exact uA-cycles);
# per value of a state variable from a `monitor watch` CSV; per task from the
# real Tonbandgerät trace (shared testdata), checked against the task slices
# of `sonde tband conv --format chrome-json` read independently in Python;
# bad input.
set -u
pass=0 fail=0
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*" >&2; fail=$((fail + 1)); }
check_eq() { if [ "$1" == "$2" ]; then ok; else bad "$3: got [$1] want [$2]"; fi; }
FW="$SONDE_BUILD/firmware/mon_demo.elf"
[ -f "$FW" ] || { echo "missing $FW" >&2; exit 1; }

"$SONDE" monitor pc -e "$FW" --format csv -o "$T/pc.csv"
"$SONDE" energy --changes "$T/pc.csv" -e "$FW" --vm-current --format csv -o "$T/e.csv"; check_eq $? 0 "energy csv"
"$SONDE" monitor pc -e "$FW" --energy --json > "$T/m.json"
python3 - "$T/e.csv" "$T/m.json" <<'EOP' && ok || bad "per function differs from monitor pc --energy"
import csv, json, sys
a = {r["label"]: int(r["ua_cycles"]) for r in csv.DictReader(open(sys.argv[1]))}
b = {r["label"]: r["ua_cycles"] for r in json.load(open(sys.argv[2]))["energy"]}
sys.exit(0 if a == b and a["div32"] > 0 else 1)
EOP
tot=$("$SONDE" energy --changes "$T/pc.csv" -e "$FW" --vm-current --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["total_uj"])')
check_eq "$tot" "14.881102" "total = the VM's energy_uj"

"$SONDE" monitor watch -e "$FW" --write mon_state --format csv -o "$T/w.csv"
"$SONDE" energy --events "$T/w.csv" --state mon_state -e "$FW" --vm-current --format csv -o "$T/s.csv"
check_eq $? 0 "per state value"
check_eq "$(cut -d, -f1,2 "$T/s.csv" | tr '\n' ' ')" "label,count 0,1 1,9 2,8 3,8 4,8 " "state values and counts"
# the state intervals tile the run from the first write to the end
python3 - "$T/s.csv" "$T/w.csv" <<'EOP' && ok || bad "state cycles"
import csv, sys
cyc = sum(int(r["cycles"]) for r in csv.DictReader(open(sys.argv[1])))
first = int(next(csv.DictReader(open(sys.argv[2])))["cycle"])
sys.exit(0 if cyc == 55094 - first else 1)
EOP
"$SONDE" energy --events "$T/w.csv" -e "$FW" --vm-current --json | grep -q '"by":"event window"' && ok || bad "event windows"

TB="$SONDE_TESTDATA/tonbandgeraet/posix_freertos.log.hex"
if [ -f "$TB" ]; then
  printf 'time_ms,current_ma\n0,1\n' > "$T/c.csv"
  "$SONDE" energy --current "$T/c.csv" --clock 1000000000 --voltage 3000 --tband "$TB" \
    --end 20000000000 --format csv -o "$T/t.csv"; check_eq $? 0 "per task"
  "$SONDE" tband conv --mode freertos --format chrome-json -o "$T/t.json" "$TB" 2>/dev/null
  python3 - "$T/t.csv" "$T/t.json" <<'EOP' && ok || bad "per task differs from the tband timeline"
import collections, csv, json, sys
ev = json.load(open(sys.argv[2]))["traceEvents"]
run = {(e["pid"], e["tid"]) for e in ev if e.get("ph") == "M" and e.get("name") == "thread_name"
       and e["args"]["name"] == "Running task"}
tot, cnt, op = collections.Counter(), collections.Counter(), {}
for e in ev:
    k = (e.get("pid"), e.get("tid"))
    if k not in run:
        continue
    if e["ph"] == "B":
        op[k] = (e["name"], e["ts"])
    elif e["ph"] == "E":
        n, t = op.pop(k)
        tot[n] += round((e["ts"] - t) * 1000)
        cnt[n] += 1
got = {r["label"]: (int(r["count"]), int(r["cycles"]), int(r["ua_cycles"])) for r in csv.DictReader(open(sys.argv[1]))}
want = {n: (cnt[n], tot[n], tot[n] * 1000) for n in tot}
if got != want or sum(c for c, _, _ in got.values()) != 855:
    print(got, want, file=sys.stderr)
    sys.exit(1)
EOP
else
  echo "note: $TB missing, per-task check skipped" >&2
fi

# bad input
printf 'when,amps\n0,1\n' > "$T/bad.csv"
err=$("$SONDE" energy --current "$T/bad.csv" --clock 1000 --changes "$T/pc.csv" 2>&1); check_eq $? 1 "bad current exit"
check_eq "${err%% (time*}" "sonde: $T/bad.csv: line 1 (offset 0): expected a header 'time,current'" "bad current message"
printf 'cycle,pc,function\n10,0x100,main\n5,0x200,f\n' > "$T/back.csv"
err=$("$SONDE" energy --changes "$T/back.csv" -e "$FW" --vm-current 2>&1); check_eq $? 1 "backwards exit"
check_eq "$err" "sonde: $T/back.csv: line 3 (offset 32): cycle goes backwards" "backwards message"
"$SONDE" energy --changes "$T/w.csv" -e "$FW" --vm-current 2>/dev/null; check_eq $? 1 "watch csv given as changes"
err=$("$SONDE" energy --current "$T/none.csv" --changes "$T/pc.csv" 2>&1); check_eq $? 1 "missing current exit"
check_eq "$err" "sonde: energy: '$T/none.csv': No such file or directory" "missing current message"
err=$("$SONDE" energy --changes "$T/none.csv" -e "$FW" --vm-current 2>&1); check_eq $? 1 "missing changes exit"
check_eq "$err" "sonde: energy: '$T/none.csv': No such file or directory" "missing changes message"
"$SONDE" energy --current "$T/c.csv" -e "$FW" --vm-current --changes "$T/pc.csv" 2>/dev/null; check_eq $? 2 "two current sources"
"$SONDE" energy -e "$FW" --vm-current 2>/dev/null; check_eq $? 2 "no intervals"
"$SONDE" energy --events "$T/w.csv" --state nope -e "$FW" --vm-current 2>/dev/null; check_eq $? 1 "unknown state trigger"

# a machine description file instead of a built-in: its clock and supply are used
printf 'machine mym3\ncore m3\nclock 12MHz\npower voltage=1800\nnvic irqs=64 prio-bits=3\nmemory flash 0x00000000 512K access=rx\nmemory sram 0x20000000 128K access=rwx retain\n' >"$T/m.txt"
hz=$("$SONDE" energy --changes "$T/pc.csv" -e "$FW" --vm-current --machine "$T/m.txt" --json 2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["clock_hz"], d["supply_mv"])')
check_eq "$hz" "12000000 1800" "machine file clock and supply"
"$SONDE" energy --changes "$T/pc.csv" -e "$FW" --vm-current --machine nosuch 2>"$T/err"; check_eq $? 1 "unknown machine"
grep -q "unknown machine 'nosuch' (not a built-in, not a file)" "$T/err" && ok || bad "unknown machine message"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
