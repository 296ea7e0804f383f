#!/bin/sh
# The timing model and the executors cannot drift apart: firmware run on a
# machine with a memory system (`sonde run -m cc2650`, whose executor charges
# every instruction through the model, src/vm/exec_tm.c) gives a PC trace and
# an LSU trace; `sonde cycles compare` replays them through the same model
# from the recorded instruction stream (src/frankentrace/cycles.c) and must
# predict every instruction's duration exactly: on cc2650, on zero-wait memory
# systems and on the VIMS model with the cm3's memory map, over the CPU,
# exception (nesting, late arrival, WFI, faults) and interrupt-heavy images;
# and the command's errors.
set -u
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT

# zero wait states on the cc2650's map; zero wait states and the VIMS cache
# model on the cm3's (512 KiB flash, 128 KiB SRAM: the exception and CPU test
# images fit)
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
cat > "$t/big.machine" <<'M'
machine zerowait-cm3
core m3
clock 48MHz
nvic irqs=64 prio-bits=3
memory flash 0x00000000 512K access=rx
memory sram  0x20000000 128K access=rwx retain
peripheral uart  0x400F0000 irq=0
peripheral gpio  0x400F1000
peripheral timer 0x400F2000 irq=1
peripheral delay 0x400F3000 irq=2
memsys flash 0x00000000 512K wait=0
memsys fetch depth=3
memsys write-buffer 1
M
sed 's/^machine zerowait-cm3/machine vims-cm3/
s/^memsys flash 0x00000000 512K wait=0/memsys flash 0x00000000 512K wait=2 line=8/' \
  "$t/big.machine" > "$t/vims.machine"
cat >> "$t/vims.machine" <<'M'
memsys cache ctl=0x40034004 size=8K ways=4 line=8 tag=1 prefetch=1 mode=1
memsys latency 0x40000000 0x100000 read=3 write=2
M

replay() { # machine firmware...
  m=$1; shift
  for fw in "$@"; do
    elf="$SONDE_BUILD/firmware/$fw.elf"
    [ -f "$elf" ] || { bad "missing $elf"; continue; }
    "$SONDE" run -m "$m" --max-cycles 5M --trace-pc "$t/pc.pct" --trace-lsu "$t/lsu.csv" "$elf" \
      >/dev/null 2>&1
    [ -s "$t/pc.pct" ] && ok || { bad "$fw on $m: no trace"; continue; }
    "$SONDE" cycles compare -m "$m" -e "$elf" --lsu "$t/lsu.csv" --min 100 --json "$t/pc.pct" \
      > "$t/r.json" && ok || bad "$fw on $m: the replay disagrees with the executor: $(cat "$t/r.json")"
    grep -q '"compared": [1-9]' "$t/r.json" && ok || bad "$fw on $m: nothing compared"
    rm -f "$t/pc.pct" "$t/lsu.csv"
  done
}
replay cc2650 dbg_printf dbg_gts_short
replay "$t/zw.machine" dbg_printf dbg_gts_short
m3="fw_crc32_m3_O0 fw_crc32_m3_O2 exc_systick_m3 exc_nesting_m3 exc_basepri_m3 exc_svc_pendsv_m3
    exc_latearrival_m3 exc_wfi_m3 exc_faults_m3 bench_irq"
replay "$t/big.machine" $m3
replay "$t/vims.machine" $m3

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
