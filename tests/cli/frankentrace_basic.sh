#!/usr/bin/env bash
# `sonde frankentrace verify|check|analyze|convert` on ground truth of the VM
# (`sonde run --trace-pc`, demo firmware: SysTick interrupts, WFI sleep):
# formats convert both ways (checked by Python's csv module and protoc), a
# DWT-projected trace verifies, one changed cycle is the first difference and
# an impossible transition, every transition of the VM's ground truth is one
# capstone's decoding of the compiled code allows, bad input and bad usage.
set -u
fw=$SONDE_BUILD/firmware/demo.elf
irq=$SONDE_BUILD/firmware/run_irq.elf
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check() { if [ "$2" = "$3" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1: '$2' != '$3'"; fi; }
S=$SONDE

"$S" run --trace-pc "$tmp/gt.pct" "$fw" >/dev/null 2>&1
check "run" $? 0
"$S" run --trace-pc "$tmp/gt.csv" --trace-format csv "$fw" >/dev/null 2>&1

# help and usage
"$S" frankentrace --help >"$tmp/help" ; check "help rc" $? 0
check "help lists convert" "$(grep -c '^  convert  between pct' "$tmp/help")" 1
for sub in verify check analyze convert; do
  "$S" frankentrace $sub --help >/dev/null; check "$sub --help" $? 0
done
"$S" frankentrace 2>/dev/null; check "no subcommand" $? 2
"$S" frankentrace frob 2>"$tmp/err"; check "unknown subcommand" $? 2
check "unknown message" "$(head -1 "$tmp/err")" "sonde: frankentrace: unknown subcommand 'frob'"
"$S" frankentrace check "$tmp/gt.pct" 2>"$tmp/err"; check "check without -e" $? 2
check "check usage" "$(head -1 "$tmp/err")" "sonde: frankentrace check: -e <elf> is required"
"$S" frankentrace convert --format xml -o "$tmp/x" "$tmp/gt.pct" 2>/dev/null; check "bad format" $? 2

# every transition of the ground truth is possible (exception spans are transparent)
"$S" frankentrace check -e "$fw" "$tmp/gt.pct" >"$tmp/out"; check "check gt rc" $? 0
check "check gt" "$(head -1 "$tmp/out" | sed 's/^[0-9]* transitions: .*, \([0-9]*\) impossible$/\1/')" 0
"$S" run --trace-pc "$tmp/irq.pct" "$irq" >/dev/null 2>&1
"$S" frankentrace check -e "$irq" --json "$tmp/irq.pct" >"$tmp/irq.json"; check "check irq rc" $? 0
check "irq exception entries seen" "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["impossible"], d["exception_entry"], d["exception_return"], d["indirect"])' "$tmp/irq.json")" "0 1781 1644 15"

# convert: pct -> DWT-projected CSV (labels from the ELF) -> pct; verify both ways
"$S" frankentrace convert --dwt -e "$fw" --format csv -o "$tmp/dwt.csv" "$tmp/gt.pct"; check "convert csv" $? 0
check "csv header" "$(head -1 "$tmp/dwt.csv")" "ts,val,valid,label,short_instr"
check "csv first row" "$(sed -n 2p "$tmp/dwt.csv")" '0,0x00000170,true,Reset_Handler,"ldr r4, [pc, #0x58]"'
"$S" frankentrace convert --format pct -o "$tmp/dwt.pct" "$tmp/dwt.csv"; check "convert pct" $? 0
"$S" frankentrace verify "$tmp/dwt.pct" "$tmp/gt.pct" >"$tmp/out"; check "verify rc" $? 0
check "verify last line" "$(tail -1 "$tmp/out")" "verified"
"$S" frankentrace verify --json "$tmp/dwt.csv" "$tmp/gt.csv" >"$tmp/v.json"; check "verify csv gt rc" $? 0
# an independent route: Python projects the VM's CSV ground truth itself
python3 - "$tmp/gt.csv" "$tmp/dwt.csv" "$tmp/v.json" >"$tmp/py" <<'PY'
import csv, json, sys
gt = list(csv.reader(open(sys.argv[1])))[1:]
ours = list(csv.reader(open(sys.argv[2])))[1:]
last, want = None, []
for cyc, pc in gt:
    if pc.startswith('0x'):
        last = pc
        want.append(pc)
    elif pc == 'sleep':
        want.append('sleep')
    else:  # exception entry/return/tail-chain: the last instruction started
        want.append(last)
got = [r[1] for r in ours]
bad = sum(1 for a, b in zip(got, want) if a != b)
v = json.load(open(sys.argv[3]))
print(len(got) == len(want), bad, v["different"], v["compared"] == len(want), v["ok"])
PY
check "python projection" "$(cat "$tmp/py")" "True 0 0 True True"
# raw comparison sees the exception spans
"$S" frankentrace verify --raw "$tmp/dwt.pct" "$tmp/gt.pct" >/dev/null; check "verify --raw fails" $? 1

# one changed cycle: first difference with context, and an impossible transition
python3 - "$tmp/dwt.csv" "$tmp/bad.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
assert rows[5001][0] == '5000' and rows[5001][1] == '0x000004ae', rows[5001]
rows[5001][1] = '0x00000170'
csv.writer(open(sys.argv[2], 'w'), lineterminator='\n').writerows(rows)
PY
"$S" frankentrace verify -e "$fw" --context 1 "$tmp/bad.csv" "$tmp/gt.pct" >"$tmp/out"; check "verify bad rc" $? 1
cat >"$tmp/want" <<'EOF2'
compared 361994 cycles: 361993 equal, 1 different; 0 unrecoverable in the trace; 0 ground-truth cycles outside the trace; 0 trace cycles outside the ground truth
first difference at cycle 5000:
         cycle  trace                                               ground truth
          4999  0x000004aa crc32.constprop.0+0x1e (eor.w r0, r3, r0, lsr #1)  0x000004aa crc32.constprop.0+0x1e (eor.w r0, r3, r0, lsr #1)
>         5000  0x00000170 Reset_Handler (ldr r4, [pc, #0x58])      0x000004ae crc32.constprop.0+0x22 (bne #0x4a2)
          5001  0x000004ae crc32.constprop.0+0x22 (bne #0x4a2)      0x000004ae crc32.constprop.0+0x22 (bne #0x4a2)
NOT verified
EOF2
check "verify bad output" "$(diff "$tmp/want" "$tmp/out" && echo same)" same
"$S" frankentrace check -e "$fw" "$tmp/bad.csv" >"$tmp/out"; check "check bad rc" $? 1
check "check bad" "$(tail -1 "$tmp/out")" "impossible at cycle 5001: 0x00000170 Reset_Handler (ldr r4, [pc, #0x58]) -> 0x000004ae crc32.constprop.0+0x22 (bne #0x4a2): not a branch: next is 0x00000172"
# a cut trace: the missing cycles are reported, not compared
head -1000 "$tmp/dwt.csv" >"$tmp/cut.csv"
"$S" frankentrace verify --json "$tmp/cut.csv" "$tmp/gt.pct" >"$tmp/out"; check "verify cut rc" $? 1
check "verify cut" "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["compared"], d["missing"], d["ok"])' "$tmp/out")" "999 360995 False"
# unrecoverable cycles (valid=false) are counted; --strict fails on them
sed '3s/,true,/,false,/' "$tmp/dwt.csv" >"$tmp/inv.csv"
"$S" frankentrace verify --json "$tmp/inv.csv" "$tmp/gt.pct" >"$tmp/out"; check "verify unrec rc" $? 0
check "verify unrec" "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["unrecoverable"], d["different"])' "$tmp/out")" "1 0"
"$S" frankentrace verify --strict "$tmp/inv.csv" "$tmp/gt.pct" >/dev/null; check "verify --strict" $? 1

# Perfetto: function slices, checked with protoc against our subset .proto
"$S" frankentrace convert -e "$fw" --format perfetto -o "$tmp/t.pftrace" "$tmp/gt.pct"; check "perfetto rc" $? 0
if command -v protoc >/dev/null; then
  protoc --decode=perfetto.protos.Trace -I"$SONDE_SRC/tests/export" "$SONDE_SRC/tests/export/perfetto_subset.proto" \
    <"$tmp/t.pftrace" >"$tmp/t.txt"; check "protoc" $? 0
  check "first slice" "$(grep -m1 '^    name: ' "$tmp/t.txt")" '    name: "Reset_Handler"'
  check "begins = ends" "$(grep -c TYPE_SLICE_BEGIN "$tmp/t.txt")" "$(grep -c TYPE_SLICE_END "$tmp/t.txt")"
  check "has sleep" "$(grep -c 'name: "(sleep)"' "$tmp/t.txt" | awk '{print ($1 > 0)}')" 1
  check "has exceptions" "$(grep -c 'name: "(exception)"' "$tmp/t.txt" | awk '{print ($1 > 0)}')" 1
else
  fail=$((fail + 1)); echo "FAIL: protoc missing (scripts/install-deps)"
fi

# analyze: functions add up to the instruction cycles
"$S" frankentrace analyze -e "$fw" --json --top 0 "$tmp/gt.pct" >"$tmp/a.json"; check "analyze rc" $? 0
check "analyze totals" "$(python3 -c '
import json,sys; d=json.load(open(sys.argv[1]))
print(sum(f["cycles"] for f in d["functions"]) == d["known"], sum(m["cycles"] for m in d["mnemonics"]) == d["known"], sum(i["cycles"] for i in d["instructions"]) == d["known"])' "$tmp/a.json")" "True True True"

# analyze, whole text output, on a hand-made CSV: a stall, a 3-instruction loop x12, a gap,
# two untrusted rows, sleep (numbers worked out by hand in the comment of each line)
python3 - >"$tmp/small.csv" <<'PY'
print("ts,val,valid,label,short_instr")
c = 100
def put(pc, n, valid="true"):
    global c
    for _ in range(n):
        print(f"{c},0x{pc:08x},{valid},,")
        c += 1
put(0x200, 3)
for i in range(12):
    put(0x1a32, 4); put(0x1a34, 1); put(0x1a36, 2)
put(0x1a38, 1)
c += 5
put(0x300, 2, "false")
print(f"{c},sleep,true,,")
PY
"$S" frankentrace analyze --top 3 "$tmp/small.csv" >"$tmp/out"; check "analyze small rc" $? 0
cat >"$tmp/want" <<'EOF2'
trace: cycles 100..195 (96): 88 known, 1 sleep, 7 unrecoverable

busy-wait loops: 1
  cycles 103-186: 84 cycles, 12 iterations of 3 instructions at 0x00001a32-0x00001a36

functions (1, by cycles):
        cycles instructions  function
            88           38  (no symbol)

instructions (5 PCs, by cycles):
          pc executions     cycles   min   max  where                                    instruction
  0x00001a32         12         48     4     4  0x00001a32
  0x00001a36         12         24     2     2  0x00001a36
  0x00001a34         12         12     1     1  0x00001a34

mnemonics (1, by cycles; histogram of durations in cycles):
  mnemonic   executions     cycles   min   max       1       2       3       4     5-8    9-16   17-32     33+
  (unknown)          38         88     1     4      13      12       1      12       0       0       0       0
EOF2
check "analyze small output" "$(diff "$tmp/want" "$tmp/out" && echo same)" same

# bad input: named file and offset, exit 1
printf 'ts,val,valid\n1,0x2,true\n1,0x4,true\n' >"$tmp/dup.csv"
"$S" frankentrace verify "$tmp/dup.csv" "$tmp/gt.pct" 2>"$tmp/err"; check "bad csv rc" $? 1
check "bad csv message" "$(cat "$tmp/err")" "sonde: frankentrace verify: $tmp/dup.csv: line 3, offset 24: ts goes backwards or repeats (rows must be in increasing ts)"
head -c 100 "$tmp/gt.pct" >"$tmp/cut.pct"
"$S" frankentrace check -e "$fw" "$tmp/cut.pct" 2>"$tmp/err"; check "cut pct rc" $? 1
check "cut pct message" "$(cat "$tmp/err")" "sonde: frankentrace check: $tmp/cut.pct: offset 96: truncated record (file ends inside it)"
"$S" frankentrace analyze "$tmp/none.csv" 2>"$tmp/err"; check "missing rc" $? 1
check "missing message" "$(cat "$tmp/err")" "sonde: frankentrace analyze: $tmp/none.csv: No such file or directory"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
