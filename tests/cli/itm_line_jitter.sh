#!/bin/sh
# `sonde itm --line auto` through the clock error `sonde run --swo-jitter`
# offers (issue 21 item 4): the ITM printf firmware's SWO pin at 1 Mbaud,
# sampled at 8 MHz, each byte's bit time scaled by up to +-5 %, must decode
# to exactly the text of the --swo bytes (auto-detected; with an explicit
# --line, which does not re-time, up to 4 %), for several seeds; sigrok-cli's uart decoder (which we did not
# write) reads the same bytes from the same waveform up to 4 %. Settings that decode
# (almost) nothing exit 1 with the reason, not 0 with a warning.
set -u
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
fw="$SONDE_BUILD/firmware/dbg_printf.elf"
# cm3: the table-timed Cortex-M3 the thresholds below were found on, so that
# cycle-model work on other machines does not move the waveforms. (An
# intermediate state of the cc2650 memory-system timing, issue 19, gave a
# waveform --line auto missed at 5 %, seed 1; with the final model, seeds 1-25
# at 5 % decode exactly on both cm3 and cc2650.)
[ -f "$fw" ] || { echo "missing $fw"; exit 1; }
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT

"$SONDE" run -m cm3 --swo "$t/s.bin" "$fw" >/dev/null && ok || bad "run"
"$SONDE" itm "$t/s.bin" > "$t/want.txt" && ok || bad "itm on the bytes"
[ "$(wc -c < "$t/want.txt")" -eq 480 ] && ok || bad "want 480 characters, got $(wc -c < "$t/want.txt")"
od -An -v -tx1 "$t/s.bin" | tr -s ' ' '\n' | grep . > "$t/want.hex"

for j in 0 2.5 3 4 5; do
  for seed in 1 2 3; do
    if [ $j = 0 ]; then imp=; [ $seed = 1 ] || continue; else imp="--swo-jitter $j --swo-seed $seed"; fi
    "$SONDE" run -m cm3 --swo-samples "$t/j.la" --sample-rate 8M $imp \
      "$fw" >/dev/null 2>&1 || { bad "run jitter $j seed $seed"; continue; }
    "$SONDE" itm --line auto --sample-rate 8M "$t/j.la" > "$t/auto.txt" 2>"$t/err" &&
      cmp -s "$t/want.txt" "$t/auto.txt" && ok ||
      bad "jitter $j % seed $seed: --line auto differs ($(wc -c < "$t/auto.txt") characters; $(head -c 200 "$t/err"))"
    # a given baud takes the fixed (faster) path: up to 4 %
    [ $j = 5 ] && continue
    "$SONDE" itm --line uart:1000000 --sample-rate 8M "$t/j.la" > "$t/uart.txt" 2>"$t/err" &&
      cmp -s "$t/want.txt" "$t/uart.txt" && ok ||
      bad "jitter $j % seed $seed: --line uart:1000000 differs ($(head -c 200 "$t/err"))"
  done
  # the reference: sigrok's uart decoder reads every byte of the last waveform
  # up to 4 % (at 5 % it misreads some bits, where ours re-times on every edge)
  if command -v sigrok-cli >/dev/null && [ $j != 5 ]; then
    sigrok-cli -i "$t/j.la" -I binary:numchannels=1:samplerate=8000000 \
      -P uart:rx=0:baudrate=1000000:format=hex -A uart=rx-data 2>/dev/null |
      sed 's/^uart-1: //' | tr 'A-F' 'a-f' > "$t/sigrok.hex"
    cmp -s "$t/want.hex" "$t/sigrok.hex" && ok || bad "jitter $j %: sigrok uart bytes differ"
  fi
done

# wrong settings: exit 1 and say why
"$SONDE" run -m cm3 --swo-samples "$t/s.la" --sample-rate 8M "$fw" >/dev/null 2>&1
"$SONDE" itm --line uart:2000000 --sample-rate 8M "$t/s.la" >/dev/null 2>"$t/err"; rc=$?
[ $rc -eq 1 ] && grep -q "were not ITM packets.*check --line" "$t/err" && ok || bad "wrong baud: exit $rc: $(cat "$t/err")"
head -c 100000 /dev/zero > "$t/flat.la"
"$SONDE" itm --line auto --sample-rate 8M "$t/flat.la" >/dev/null 2>"$t/err"; rc=$?
[ $rc -eq 1 ] && grep -q "no SWO bytes decoded from 100000 samples" "$t/err" && ok || bad "no signal: exit $rc: $(cat "$t/err")"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
