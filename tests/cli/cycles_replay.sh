#!/bin/sh
# The timing model and the executors cannot drift apart: firmware run on a
# machine with a memory system (`sonde run -m cc2650`, whose executor charges
# every instruction through the model, src/vm/exec_tm.c) gives a PC trace and
# an LSU trace; `sonde cycles compare` replays them through the same model
# from the recorded instruction stream (src/frankentrace/cycles.c) and must
# predict every instruction's duration exactly. Also with a zero-wait memory
# system (a machine file), and the command's errors.
set -u
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT

cat > "$t/zw.machine" <<'M'
machine zerowait
core m3
clock 48MHz
nvic irqs=34 prio-bits=3
memory flash 0x00000000 128K access=rx
memory sram  0x20000000 20K access=rwx retain
peripheral uart  0x400F0000 irq=0
memsys flash 0x00000000 128K wait=0
memsys fetch depth=3
memsys write-buffer 1
M

for fw in dbg_printf dbg_gts_short; do
  elf="$SONDE_BUILD/firmware/$fw.elf"
  [ -f "$elf" ] || { bad "missing $elf"; continue; }
  for m in cc2650 "$t/zw.machine"; do
    "$SONDE" run -m "$m" --trace-pc "$t/pc.pct" --trace-lsu "$t/lsu.csv" "$elf" >/dev/null 2>&1
    [ -s "$t/pc.pct" ] && ok || bad "$fw on $m: no trace"
    "$SONDE" cycles compare -m "$m" -e "$elf" --lsu "$t/lsu.csv" --min 100 --json "$t/pc.pct" \
      > "$t/r.json" && ok || bad "$fw on $m: the replay disagrees with the executor: $(cat "$t/r.json")"
    grep -q '"compared": [1-9]' "$t/r.json" && ok || bad "$fw on $m: nothing compared"
    rm -f "$t/pc.pct" "$t/lsu.csv"
  done
done

# errors: a machine without a memory system, a missing file, usage
elf="$SONDE_BUILD/firmware/dbg_printf.elf"
"$SONDE" run -m cc2650 --trace-pc "$t/pc.pct" "$elf" >/dev/null 2>&1
"$SONDE" cycles compare -m cm3 -e "$elf" "$t/pc.pct" 2>"$t/e1"; [ $? -eq 1 ] && ok || bad "cm3 accepted"
grep -q "declares no memory system" "$t/e1" && ok || bad "cm3 message: $(cat "$t/e1")"
"$SONDE" cycles compare -e "$elf" "$t/none.pct" 2>"$t/e2"; [ $? -eq 1 ] && ok || bad "missing trace accepted"
"$SONDE" cycles compare "$t/pc.pct" 2>/dev/null; [ $? -eq 2 ] && ok || bad "missing -e accepted"
"$SONDE" cycles 2>/dev/null; [ $? -eq 2 ] && ok || bad "no subcommand accepted"
"$SONDE" cycles compare --help | grep -q "impossible transition" && ok || bad "help"

echo "cycles_replay: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
