#!/bin/sh
# sonde run --swo / --swo-timed / --swo-samples on the ITM printf firmware
# (firmware/dbg/dbg_trace.c, PRINTF=1: 1 Mbaud NRZ at 48 MHz): the waveform
# decodes with sigrok-cli's own uart decoder (and arm_itm) to the --swo bytes.
set -u
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
fw="$SONDE_BUILD/firmware/dbg_printf.elf"
[ -f "$fw" ] || { echo "missing $fw"; exit 1; }
command -v sigrok-cli >/dev/null || { echo "sigrok-cli missing (scripts/install-deps)"; exit 1; }
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT

"$SONDE" run -m cc2650 --swo "$t/s.bin" --swo-timed "$t/s.csv" --swo-samples "$t/s.la" \
  --sample-rate 8M "$fw" && ok || bad "run"
[ -s "$t/s.bin" ] && ok || bad "no SWO bytes"

# the same bytes through sigrok's UART decoder
od -An -v -tx1 "$t/s.bin" | tr -s ' ' '\n' | grep . > "$t/want.txt"
sigrok-cli -i "$t/s.la" -I binary:numchannels=1:samplerate=8000000 \
  -P uart:rx=0:baudrate=1000000:format=hex -A uart=rx-data 2>"$t/err" |
  sed 's/^uart-1: //' | tr 'A-F' 'a-f' > "$t/got.txt"
cmp -s "$t/want.txt" "$t/got.txt" && ok || bad "sigrok uart bytes differ ($(wc -l < "$t/got.txt") vs $(wc -l < "$t/want.txt"))"

# sigrok's arm_itm decoder on top of uart: the same local time as the LTS
# packets `sonde itm` finds in the --swo bytes
sigrok-cli -i "$t/s.la" -I binary:numchannels=1:samplerate=8000000 \
  -P uart:rx=0:baudrate=1000000,arm_itm -A arm_itm 2>/dev/null |
  sed -n 's/^arm_itm-1: Timestamp: \([0-9]*\).*/\1/p' > "$t/ts_sigrok.txt"
"$SONDE" itm --format json "$t/s.bin" | sed -n 's/.*"type":"lts".*"value":\([0-9]*\).*/\1/p' |
  awk '{ s += $1; print s }' > "$t/ts_sonde.txt" # sigrok shows the running sum
[ "$(wc -l < "$t/ts_sonde.txt")" -gt 400 ] && cmp -s "$t/ts_sigrok.txt" "$t/ts_sonde.txt" && ok ||
  bad "arm_itm timestamps differ from sonde itm's"

# --swo-timed: header, the same bytes, frames back to back or later, 480 cycles each
head -1 "$t/s.csv" | grep -q '^# sonde swo-timed v1 clock_hz=48000000$' && ok || bad "timed header"
tail -n +3 "$t/s.csv" | awk -F, '{ printf "%s\n", substr($3, 3) }' > "$t/timed.txt"
cmp -s "$t/want.txt" "$t/timed.txt" && ok || bad "timed bytes differ"
tail -n +3 "$t/s.csv" | awk -F, 'NR > 1 && $1 < prev { e = 1 } $2 - $1 != 480 { e = 1 } { prev = $2 } END { exit e }' \
  && ok || bad "timed cycles not in pin order at 480 cycles/byte"

# bad usage
"$SONDE" run -m cc2650 --swo-samples "$t/x.la" "$fw" 2>/dev/null; [ $? -eq 2 ] && ok || bad "samples without rate"
"$SONDE" run -m cc2650 --swo-samples "$t/x.la" --sample-rate fast "$fw" 2>/dev/null; [ $? -eq 2 ] && ok || bad "bad rate"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
