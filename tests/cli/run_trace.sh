#!/usr/bin/env bash
# `sonde run --trace-pc/--trace-lsu` on the demo firmware (SysTick interrupts,
# WFI sleep): the PC trace's cycles are contiguous and sum to the run's total,
# its instructions are the run's instruction count, every exception entry is
# in it, binary and CSV agree, and the LSU trace is well formed
# (docs/formats.md "PC trace", "LSU trace").
set -u
fw=$SONDE_BUILD/firmware/demo.elf
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check() { if [ "$2" = "$3" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1: '$2' != '$3'"; fi; }
json() { sed -n "s/.*\"$1\": \"\{0,1\}\([^,\"}]*\).*/\1/p" "$tmp/stats"; }

"$SONDE" run --json --trace-pc "$tmp/t.pct" --trace-lsu "$tmp/t.lsu" "$fw" >"$tmp/uart" 2>"$tmp/stats"
check "exit status" $? 0
cycles=$(json cycles) insns=$(json instructions) exc=$(json exceptions) sleep=$(json sleep_cycles)
# tracing never changes the run: the same cycles and instructions without hooks
"$SONDE" run --json "$fw" >/dev/null 2>"$tmp/stats_fast"
check "untraced cycles" "$(sed -n 's/.*"cycles": \([0-9]*\).*/\1/p' "$tmp/stats_fast")" "$cycles"
check "untraced instructions" "$(sed -n 's/.*"instructions": \([0-9]*\).*/\1/p' "$tmp/stats_fast")" "$insns"
# header: magic, version 1, header size 32, clock 48 MHz (cm3), first cycle 0
check "magic" "$(head -c 8 "$tmp/t.pct")" "SONDEPCT"
check "version/size/flags" "$(od -An -v -tu2 -j8 -N4 "$tmp/t.pct" | tr -s ' ')" " 1 32"
check "clock" "$(od -An -v -tu8 -j16 -N8 "$tmp/t.pct" | tr -d ' ')" "48000000"
check "first cycle" "$(od -An -v -tu8 -j24 -N8 "$tmp/t.pct" | tr -d ' ')" "0"
check "whole records" "$((($(stat -c %s "$tmp/t.pct") - 32) % 8))" "0"
# records: word, cycles
od -An -v -tx4 -w8 -j32 "$tmp/t.pct" | awk '{ print $1 }' >"$tmp/words"
od -An -v -tu4 -w8 -j32 "$tmp/t.pct" | awk '{ print $2 }' >"$tmp/cycles"
check "cycles sum to the run's total" "$(awk '{ s += $1 } END { print s }' "$tmp/cycles")" "$cycles"
check "no empty record" "$(grep -c '^0$' "$tmp/cycles")" "0"
check "instruction records" "$(grep -c '[02468ace]$' "$tmp/words")" "$insns"
check "exception entries (SysTick = 15)" "$(grep -c '^00000f05$' "$tmp/words")" "$exc"
check "exception returns" "$(grep -c '^00000f07$' "$tmp/words")" "$exc"
sleep_trace=$(paste "$tmp/words" "$tmp/cycles" | awk '$1 == "00000003" { s += $2 } END { print s + 0 }')
check "sleep cycles" "$sleep_trace" "$sleep"
[ "$exc" -gt 10 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: too few exceptions ($exc)"; }

# CSV: one row per cycle, contiguous from 0, the same sequence as the binary
"$SONDE" run --trace-pc "$tmp/t.csv" --trace-format csv "$fw" >/dev/null 2>&1
check "csv header" "$(head -1 "$tmp/t.csv")" "cycle,pc"
check "csv rows" "$(($(wc -l <"$tmp/t.csv") - 1))" "$cycles"
check "csv contiguous" "$(awk -F, 'NR > 1 && $1 != NR - 2 { bad++ } END { print bad + 0 }' "$tmp/t.csv")" "0"
paste "$tmp/words" "$tmp/cycles" | awk '{
  w = $1; n = $2
  if (w ~ /[02468ace]$/) label = "0x" w
  else if (w == "00000003") label = "sleep"
  else if (w ~ /05$/) label = "exc_entry:15"
  else if (w ~ /07$/) label = "exc_return:15"
  else label = "?" w
  for (i = 0; i < n; i++) print label
}' >"$tmp/expanded"
tail -n +2 "$tmp/t.csv" | cut -d, -f2 >"$tmp/csvpc"
if cmp -s "$tmp/expanded" "$tmp/csvpc"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: csv and binary traces differ"; fi

# LSU: header, well-formed rows, cycles non-decreasing, the UART writes are there
check "lsu header" "$(head -1 "$tmp/t.lsu")" "cycle,pc,addr,size,value,rw"
check "lsu malformed rows" "$(tail -n +2 "$tmp/t.lsu" | grep -cvE '^[0-9]+,0x[0-9a-f]{8},0x[0-9a-f]{8},[124],0x[0-9a-f]+,[rw]$')" "0"
check "lsu order" "$(tail -n +2 "$tmp/t.lsu" | awk -F, '$1 < prev { bad++ } { prev = $1 } END { print bad + 0 }')" "0"
uart_bytes=$(wc -c <"$tmp/uart")
check "lsu UART writes" "$(grep -c ',0x400f0000,[14],0x[0-9a-f]*,w$' "$tmp/t.lsu")" "$uart_bytes"
# ... and their values are the bytes the UART printed, in order
awk -F, '$3 == "0x400f0000" && $6 == "w" { print substr($5, 3) }' "$tmp/t.lsu" |
  while read -r v; do printf "\\x$v"; done >"$tmp/uart_from_lsu"
cmp -s "$tmp/uart" "$tmp/uart_from_lsu" && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: LSU UART values differ from the UART output"; }
# interrupt-heavy image: SysTick (15) and timer (IRQ 1 = 17) entries, returns, tail-chains
"$SONDE" run --json --trace-pc "$tmp/irq.pct" "$SONDE_BUILD/firmware/run_irq.elf" >/dev/null 2>"$tmp/stats"
check "irq exit status" $? 0
cycles=$(json cycles) insns=$(json instructions) exc=$(json exceptions)
od -An -v -tx4 -w8 -j32 "$tmp/irq.pct" | awk '{ print $1 }' >"$tmp/words"
od -An -v -tu4 -w8 -j32 "$tmp/irq.pct" | awk '{ print $2 }' >"$tmp/cycles"
check "irq cycles sum" "$(awk '{ s += $1 } END { print s }' "$tmp/cycles")" "$cycles"
check "irq instructions" "$(grep -c '[02468ace]$' "$tmp/words")" "$insns"
entries=$(grep -c '05$' "$tmp/words") chains=$(grep -c '09$' "$tmp/words") returns=$(grep -c '07$' "$tmp/words")
check "irq entries + tail-chains = exceptions" "$((entries + chains))" "$exc"
check "irq every entry returns once" "$((returns + chains))" "$exc"
[ "$chains" -gt 0 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: no tail-chain in the interrupt-heavy run"; }
check "irq span kinds" "$(grep '[13579bdf]$' "$tmp/words" | sort -u | tr '\n' ' ')" "00000f05 00000f07 00001105 00001107 00001109 "

# --trace-stacking: the interrupt-heavy image's LSU trace also lists every exception frame:
# 8 words pushed per entry (W) and popped per return (R), the stacked PC in the pc column,
# the instruction rows unchanged, and every popped word equal to what memory last held there
"$SONDE" run --trace-lsu "$tmp/irq_plain.csv" "$SONDE_BUILD/firmware/run_irq.elf" >/dev/null 2>&1
"$SONDE" run --trace-lsu "$tmp/irq_stk.csv" --trace-stacking "$SONDE_BUILD/firmware/run_irq.elf" >/dev/null 2>&1
check "stacking exit status" $? 0
grep -v '[RW]$' "$tmp/irq_stk.csv" | cmp -s - "$tmp/irq_plain.csv" && pass=$((pass + 1)) ||
  { fail=$((fail + 1)); echo "FAIL: --trace-stacking changed the instruction rows"; }
check "pushed words = 8 x entries" "$(grep -c 'W$' "$tmp/irq_stk.csv")" "$((8 * entries))"
check "popped words = 8 x returns" "$(grep -c 'R$' "$tmp/irq_stk.csv")" "$((8 * returns))"
awk -F, 'NR > 1 && $1 + 0 < prev { bad++ } { prev = $1 + 0 }
  $6 == "W" && ++wi % 8 == 7 { p = $2; sub(/^0x0*/, "", p); v = $5; sub(/^0x/, "", v)
                                if (p == "") p = "0"; if (p != v) bad++ }
  $6 == "w" || $6 == "W" { if ($4 == 4) mem[$3] = $5; else delete mem[$3] }
  $6 == "R" && ($3 in mem) && mem[$3] != $5 { bad++ }
  END { exit bad > 0 }' "$tmp/irq_stk.csv" && pass=$((pass + 1)) ||
  { fail=$((fail + 1)); echo "FAIL: stacking rows: cycles, stacked PC or popped values inconsistent"; }
"$SONDE" run --trace-stacking "$SONDE_BUILD/firmware/run_irq.elf" >/dev/null 2>&1
check "--trace-stacking without --trace-lsu" $? 2

# every exception test image (faults, lockup, reset with SRAM retained, lazy FP, WFI, nesting,
# late arrival...): the trace still accounts for every cycle and instruction
for e in "$SONDE_BUILD"/firmware/exc_*.elf; do
  [ -e "$e" ] || continue
  n=$(basename "$e" .elf)
  case $n in
  *_m4f) m=cm4f ;; *_m33) m=cm33 ;; *_m0plus) m=cm0plus ;;
  *_an505) m=$SONDE_SRC/tests/vm/an505.machine ;; # QEMU mps2-an505's map (test_exc_qemu.c)
  *) m=cm3 ;;
  esac
  "$SONDE" run --machine "$m" --json --trace-pc "$tmp/e.pct" "$e" >/dev/null 2>"$tmp/stats"
  cycles=$(json cycles) insns=$(json instructions)
  check "$n cycles" "$(od -An -v -tu4 -w8 -j32 "$tmp/e.pct" | awk '{ s += $2 } END { print s + 0 }')" "$cycles"
  check "$n instructions" "$(od -An -v -tx4 -w8 -j32 "$tmp/e.pct" | awk '{ print $1 }' | grep -c '[02468ace]$')" "$insns"
done

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
