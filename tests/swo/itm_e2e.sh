#!/bin/bash
# End to end through `sonde itm`: ITM software packets carried as
# logic-analyzer samples (UART and Manchester), inside TPIU frames, and over
# TCP, must print exactly the text the firmware "wrote" to stimulus port 0.
# env: SONDE (the sonde binary), SWO_WAVETOOL (tests/swo/swo_wavetool.c).
set -u
tool=${SWO_WAVETOOL:?}
sonde=${SONDE:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; [ -n "${spid:-}" ] && kill "$spid" 2>/dev/null' EXIT
pass=0 fail=0

text='Hello from SWO: the quick brown fox jumps over the lazy dog 0123456789
second line, with a tab	and punctuation !@#$%^&*()
'
printf '%s' "$text" >"$tmp/want.txt"
# ITM stream: a synchronization packet, then one 1-byte stimulus-port-0
# packet (header 0x01) per character.
{
  printf '\x00\x00\x00\x00\x00\x80'
  od -An -v -tx1 "$tmp/want.txt" | tr -s ' ' '\n' | sed '/^$/d' | while read -r h; do printf "\\x01\\x$h"; done
} >"$tmp/itm.bin"

expect() { # name command...
  local name=$1
  shift
  if "$@" >"$tmp/got.txt" 2>"$tmp/err.txt" && cmp -s "$tmp/want.txt" "$tmp/got.txt"; then
    pass=$((pass+1)); echo "ok   $name"
  else
    fail=$((fail+1)); echo "FAIL $name"; head -c 600 "$tmp/err.txt"; echo; head -c 300 "$tmp/got.txt" | od -c | head -5
  fi
}

expect "raw ITM file" "$sonde" itm "$tmp/itm.bin"

"$tool" wave uart 6000000 2000000 -0.03 3 "$tmp/itm.bin" "$tmp/uart.bin"
expect "UART samples, 3 samples/bit, -3%, channel 3" \
  "$sonde" itm --line uart:2000000 --sample-rate 6M --la-channel 3 "$tmp/uart.bin"
expect "UART samples, auto-detected" \
  "$sonde" itm --line auto --sample-rate 6M --la-channel 3 "$tmp/uart.bin"

"$tool" tpiu-wrap "$tmp/itm.bin" "$tmp/tpiu.bin"
expect "TPIU-formatted stream" "$sonde" itm --tpiu "$tmp/tpiu.bin"
"$tool" wave manchester 24000000 2000000 0.02 0 "$tmp/tpiu.bin" "$tmp/man.bin"
expect "TPIU in Manchester samples" \
  "$sonde" itm --tpiu --line manchester:2000000 --sample-rate 24M "$tmp/man.bin"
expect "stdin" bash -c "\"$sonde\" itm --tpiu - <\"$tmp/tpiu.bin\""

"$tool" serve "$tmp/tpiu.bin" "$tmp/port" &
spid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
expect "TCP source (bursts, then disconnect)" "$sonde" itm --tpiu "tcp:127.0.0.1:$(cat "$tmp/port")"
wait "$spid"; spid=

# bad names and options fail cleanly with exit status 1 or 2 and a message
for bad in "tcp:127.0.0.1:1" "serial:/dev/null@115200" "$tmp/nonexistent.bin"; do
  "$sonde" itm "$bad" >/dev/null 2>"$tmp/err.txt"; rc=$?
  if [ $rc -ge 1 ] && [ $rc -le 2 ] && grep -q '^sonde: ' "$tmp/err.txt"; then
    pass=$((pass+1)); echo "ok   clean error for '$bad'"
  else
    fail=$((fail+1)); echo "FAIL error for '$bad' (exit $rc)"; cat "$tmp/err.txt"
  fi
done

echo "$pass passed, $fail failed"
[ $fail = 0 ]
