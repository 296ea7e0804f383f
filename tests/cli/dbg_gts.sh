#!/bin/sh
# ITM global timestamps on the SWO pin (firmware/dbg/dbg_gts.c, SHORT=1:
# GTSFREQ 01 then 11, 16 Mbaud NRZ at 48 MHz): the --swo-samples waveform
# decodes with sigrok-cli's uart decoder to the --swo bytes; `sonde itm`
# finds the same GTS values in both, and they are what the firmware asked for
# (GTSFREQ 01: consecutive multiples of 128). sigrok's arm_itm (0.5.3) does
# not decode GTS1/GTS2 (docs/vm.md), so it is not used for them.
set -u
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
fw="$SONDE_BUILD/firmware/dbg_gts_short.elf"
[ -f "$fw" ] || { echo "missing $fw"; exit 1; }
command -v sigrok-cli >/dev/null || { echo "sigrok-cli missing (scripts/install-deps)"; exit 1; }
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT

"$SONDE" run -m cc2650 --swo "$t/s.bin" --swo-samples "$t/s.la" --sample-rate 96M "$fw" &&
  ok || bad "run"

# the pin's bytes through sigrok's UART decoder
od -An -v -tx1 "$t/s.bin" | tr -s ' ' '\n' | grep . > "$t/want.txt"
sigrok-cli -i "$t/s.la" -I binary:numchannels=1:samplerate=96000000 \
  -P uart:rx=0:baudrate=16000000:format=hex -A uart=rx-data 2>"$t/err" |
  sed 's/^uart-1: //' | tr 'A-F' 'a-f' > "$t/got.txt"
cmp -s "$t/want.txt" "$t/got.txt" && ok || bad "sigrok uart bytes differ"

# GTS values: from the bytes, from the waveform, and from sigrok's bytes
gts() { sed -n 's/.*"type":"gts".*"value":\([0-9]*\),"format":\([12]\).*/\2 \1/p'; }
"$SONDE" itm --format json "$t/s.bin" | gts > "$t/gts_bin.txt"
"$SONDE" itm --format json --line uart:16000000 --sample-rate 96M "$t/s.la" | gts > "$t/gts_la.txt"
tr -d '\n' < "$t/got.txt" | sed 's/../\\x&/g' | xargs -0 printf > "$t/sigrok.bin"
"$SONDE" itm --format json "$t/sigrok.bin" | gts > "$t/gts_sigrok.txt"
[ "$(grep -c . "$t/gts_bin.txt")" -ge 15 ] && ok || bad "too few GTS packets"
cmp -s "$t/gts_bin.txt" "$t/gts_la.txt" && ok || bad "GTS from the waveform differ"
cmp -s "$t/gts_bin.txt" "$t/gts_sigrok.txt" && ok || bad "GTS from sigrok's bytes differ"
# the first GTS after enabling is full (GTS1 + GTS2), then GTS1s 128 cycles apart
head -2 "$t/gts_bin.txt" | awk 'NR == 1 && $1 != 1 { e = 1 } NR == 2 && $1 != 2 { e = 1 } END { exit e }' &&
  ok || bad "first GTS not a full GTS1 + GTS2"
awk '$1 == 2 { next } { if (n++ && $2 - p != 128 && $2 % 128 == 0) e = 1; p = $2 } END { exit e }' \
  "$t/gts_bin.txt" && ok || bad "GTSFREQ 01 values not 128 cycles apart"
awk '$1 == 1 && $2 % 128 == 0 { n++ } END { exit !(n >= 15) }' "$t/gts_bin.txt" && ok ||
  bad "GTSFREQ 01 values not multiples of 128"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
