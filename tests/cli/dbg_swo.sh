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

# TPIU formatter left on (FFCR = 0x102): sigrok's arm_tpiu + arm_itm and
# `sonde itm --tpiu` find the same timestamps, and the text equals the bypass run's
fwf="$SONDE_BUILD/firmware/dbg_printf_fmt.elf"
"$SONDE" run -m cc2650 --swo "$t/f.bin" --swo-samples "$t/f.la" --sample-rate 8M "$fwf" && ok || bad "run fmt"
head -c 4 "$t/f.bin" | od -An -tx1 | grep -q 'ff ff ff 7f' && ok || bad "no full sync before the first frame"
[ $(( $(wc -c < "$t/f.bin") % 4 )) -eq 0 ] && ok || bad "formatted stream not whole frames and syncs"
"$SONDE" itm "$t/s.bin" > "$t/text_bypass.txt"
"$SONDE" itm --tpiu "$t/f.bin" > "$t/text_fmt.txt"
[ -s "$t/text_fmt.txt" ] && cmp -s "$t/text_bypass.txt" "$t/text_fmt.txt" && ok || bad "itm --tpiu text differs from bypass"
sigrok-cli -i "$t/f.la" -I binary:numchannels=1:samplerate=8000000 \
  -P uart:rx=0:baudrate=1000000,arm_tpiu:stream=1,arm_itm -A arm_itm 2>/dev/null |
  sed -n 's/^arm_itm-1: Timestamp: \([0-9]*\).*/\1/p' > "$t/fts_sigrok.txt"
"$SONDE" itm --tpiu --format json "$t/f.bin" | sed -n 's/.*"type":"lts".*"value":\([0-9]*\).*/\1/p' |
  awk '{ s += $1; print s }' > "$t/fts_sonde.txt"
[ "$(wc -l < "$t/fts_sonde.txt")" -gt 400 ] && cmp -s "$t/fts_sigrok.txt" "$t/fts_sonde.txt" && ok ||
  bad "formatted: arm_tpiu/arm_itm timestamps differ from sonde itm --tpiu"

# impairments: 3 % baud jitter still decodes exactly (sigrok uart); bit errors
# give frame errors, repeat with the same seed and change with another
dec() {
  sigrok-cli -i "$1" -I binary:numchannels=1:samplerate=8000000 \
    -P uart:rx=0:baudrate=1000000:format=hex -A uart=rx-data 2>/dev/null |
    sed 's/^uart-1: //' | tr 'A-F' 'a-f'
}
"$SONDE" run -m cc2650 --swo-samples "$t/j.la" --sample-rate 8M --swo-jitter 3 "$fw" && ok || bad "run jitter"
cmp -s "$t/j.la" "$t/s.la" && bad "jitter changed nothing" || ok
dec "$t/j.la" > "$t/j.txt"
cmp -s "$t/want.txt" "$t/j.txt" && ok || bad "3 % jitter: sigrok uart bytes differ"
"$SONDE" run -m cc2650 --swo-samples "$t/e1.la" --sample-rate 8M --swo-bit-errors 0.001 "$fw" 2>"$t/e1.err" && ok || bad "run bit errors"
grep -q 'inverted [1-9][0-9]* bit times' "$t/e1.err" && ok || bad "bit errors: no count on stderr"
sigrok-cli -i "$t/e1.la" -I binary:numchannels=1:samplerate=8000000 -P uart:rx=0:baudrate=1000000 \
  -A uart=rx-warnings 2>/dev/null | grep -q 'Frame error' && ok || bad "bit errors: sigrok sees no frame error"
dec "$t/e1.la" > "$t/e1.txt"
cmp -s "$t/want.txt" "$t/e1.txt" && bad "bit errors: bytes unchanged" || ok
"$SONDE" run -m cc2650 --swo-samples "$t/e2.la" --sample-rate 8M --swo-bit-errors 0.001 "$fw" 2>/dev/null
cmp -s "$t/e1.la" "$t/e2.la" && ok || bad "bit errors: same seed, different waveform"
"$SONDE" run -m cc2650 --swo-samples "$t/e3.la" --sample-rate 8M --swo-bit-errors 0.001 --swo-seed 2 "$fw" 2>/dev/null
cmp -s "$t/e1.la" "$t/e3.la" && bad "bit errors: seed ignored" || ok
"$SONDE" run -m cc2650 --swo "$t/x.bin" --swo-bit-errors 0.1 "$fw" 2>/dev/null; [ $? -eq 2 ] && ok || bad "bit errors without samples"
"$SONDE" run -m cc2650 --swo-samples "$t/x.la" --sample-rate 8M --swo-jitter 9 "$fw" 2>/dev/null; [ $? -eq 2 ] && ok || bad "jitter out of range"
"$SONDE" run -m cc2650 --swo-samples "$t/x.la" --sample-rate 8M --swo-bit-errors 2 "$fw" 2>/dev/null; [ $? -eq 2 ] && ok || bad "bit-error probability out of range"

# bad usage
"$SONDE" run -m cc2650 --swo-samples "$t/x.la" "$fw" 2>/dev/null; [ $? -eq 2 ] && ok || bad "samples without rate"
"$SONDE" run -m cc2650 --swo-samples "$t/x.la" --sample-rate fast "$fw" 2>/dev/null; [ $? -eq 2 ] && ok || bad "bad rate"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
