#!/usr/bin/env bash
# `sonde frankentrace run --probe` on the VM: for programs with nested
# interrupts, SysTick, WFI sleep, a sort and the demo, at several N and SWO
# bauds, the stitched PC trace equals the VM's ground truth (`sonde run
# --trace-pc`, projected by the DWT rule) on every cycle; the same bytes for
# --jobs 1 and 2; an independent check with `frankentrace verify`; N and baud
# that cannot work are refused with the smallest N that can.
set -u
B=$SONDE_BUILD/firmware
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check() { if [ "$2" = "$3" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1: '$2' != '$3'"; fi; }
S=$SONDE

# name:machine:N:baud:cycles (cycles = the run's length from cycle 1)
for c in exc_nesting_m3:cm3:128:48000000:892 exc_systick_m3:cm3:256:24000000:10470 \
         exc_wfi_m3:cm3:512:8000000:40841 demo:cm3:192:48000000:361993 \
         exc_nesting_m3:cm3:3072:2000000:892 exc_wfi_m3:cm3:5120:1000000:40841; do
  IFS=: read -r f m n b len <<<"$c"
  for j in 1 2; do
    "$S" frankentrace run --probe -e "$B/$f.elf" -m "$m" -N "$n" --baud "$b" --jobs "$j" --verify \
      -o "$tmp/$f-$n-$j.pct" >"$tmp/out" 2>&1
    check "$f N=$n baud=$b jobs=$j rc" $? 0
    check "$f N=$n jobs=$j no difference" "$(grep -c ' 0 different, 1 unrecoverable, 0 missing, 0 extra' "$tmp/out")" 1
    grep -q ' 0 different,' "$tmp/out"; check "$f N=$n jobs=$j 0 different" $? 0
    [ -n "$len" ] && check "$f N=$n compared" "$(sed -n 's/^verify: \([0-9]*\) cycles compared.*/\1/p' "$tmp/out")" "$len"
  done
  cmp -s "$tmp/$f-$n-1.pct" "$tmp/$f-$n-2.pct"; check "$f N=$n same trace for --jobs 1 and 2" $? 0
done

# bit errors on the wire: corrupt runs are detected and re-run; the result is still exact
for j in 1 2; do
  "$S" frankentrace run --probe -e "$B/exc_wfi_m3.elf" -N 512 --baud 8000000 --swo-bit-errors 0.00005 \
    --jobs "$j" --verify -o "$tmp/be-$j.pct" >"$tmp/out" 2>&1
  check "bit errors jobs=$j rc" $? 0
  check "bit errors jobs=$j re-runs" "$(grep -c '^frankentrace run: 68 runs repeated for a corrupt capture, 0 phases still corrupt' "$tmp/out")" 1
  check "bit errors jobs=$j exact" "$(grep -c '40841 equal, 0 different' "$tmp/out")" 1
done
cmp -s "$tmp/be-1.pct" "$tmp/be-2.pct"; check "bit errors: same trace for --jobs 1 and 2" $? 0
cmp -s "$tmp/be-1.pct" "$tmp/exc_wfi_m3-512-1.pct"; check "bit errors: same trace as without" $? 0

# the stitched trace against ground truth with the host library's own verify command
"$S" run --trace-pc "$tmp/gt.pct" "$B/exc_wfi_m3.elf" >/dev/null 2>&1
"$S" frankentrace verify "$tmp/exc_wfi_m3-512-1.pct" "$tmp/gt.pct" >"$tmp/v" 2>&1
check "frankentrace verify rc" $? 0

# CSV output has one row per cycle
"$S" frankentrace run --probe -e "$B/exc_nesting_m3.elf" -N 128 --format csv -o "$tmp/t.csv" >/dev/null 2>&1
check "csv rc" $? 0
check "csv rows (cycle 0 unsampled)" "$(grep -c "^[0-9]" "$tmp/t.csv")" 893

# bad N and baud: why, and the smallest N that can
"$S" frankentrace run --probe -e "$B/demo.elf" -m cc2650 -N 448 --baud 8000000 -o "$tmp/x" 2>"$tmp/err"
check "N too small rc" $? 1
check "N too small message" "$(cat "$tmp/err")" \
  "sonde: frankentrace run: -N 448: 8000000 baud cannot carry a sample (8 bytes) every 448 cycles at 48000000 Hz; the smallest N that can is 512"
"$S" frankentrace run --probe -e "$B/demo.elf" -N 500 -o "$tmp/x" 2>"$tmp/err"
check "N shape rc" $? 1
check "N shape message" "$(cat "$tmp/err")" \
  "sonde: frankentrace run: -N 500: DWT samples every 64..1024 cycles in steps of 64 or 2048..16384 in steps of 1024"
"$S" frankentrace run --probe -e "$B/demo.elf" --baud 7000000 -o "$tmp/x" 2>"$tmp/err"
check "baud rc" $? 1
"$S" frankentrace run --probe -e "$B/demo.elf" --baud 100000 -o "$tmp/x" 2>"$tmp/err"
check "slow baud rc" $? 1
check "slow baud message" "$(cat "$tmp/err")" \
  "sonde: frankentrace run: 100000 baud cannot carry PC samples even every 16384 cycles at 48000000 Hz (8 bytes a sample)"
"$S" frankentrace run -e "$B/demo.elf" -N 512 -o "$tmp/x" 2>/dev/null
check "-N without --probe is usage" $? 2
# a runner image (firmware/ft/ft_prog.c) without --probe: one VM chained through SYSRESETREQ
"$S" frankentrace run -e "$B/ft_prog.elf" --verify -o "$tmp/chain.pct" >"$tmp/out" 2>&1
check "runner chain rc" $? 0
check "runner chain verified" "$(grep -c '7185 compared, 7185 equal, 0 different, 0 unrecoverable' "$tmp/out")" 1
"$S" frankentrace run -e "$B/demo.elf" -o "$tmp/x" 2>"$tmp/err"
check "no runner, no --probe rc" $? 1
"$S" frankentrace run --probe -e "$B/run_forever.elf" --max-cycles 100000 -N 1024 -o "$tmp/x" 2>"$tmp/err"
check "no exit rc" $? 1
check "no exit message" "$(cat "$tmp/err")" \
  "sonde: frankentrace run: phase 0: phase 0: the run did not exit within 100000 cycles"
"$S" frankentrace run --help >/dev/null; check "help" $? 0

echo "frankentrace_run: $pass passed, $fail failed"
[ "$fail" = 0 ]
