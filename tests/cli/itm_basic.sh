#!/bin/bash
# `sonde itm`: text, csv, json and --stats output of a hand-built ITM stream,
# and bad usage (exit 2) / bad input (exit 1). Expected values are written
# out from the packet layouts of ARMv7-M ARM D4, not produced by sonde.
set -u
pass=0 fail=0
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*" >&2; fail=$((fail + 1)); }
check_eq() { if [ "$1" == "$2" ]; then ok; else bad "$3: got [$1] want [$2]"; fi; }
ELF="$SONDE_TESTDATA/frankentrace-cc2650/blink_if_see.elf"
[ -f "$ELF" ] || { echo "missing test data $ELF" >&2; exit 1; }

# sync; "Hi" on port 0; 0x12345678 on port 1; LTS1 +5; PC sample 0x2680;
# SysTick enter/exit; event counter Cyc; PC sleep; page 1 + port 33 'Z';
# reserved header 0x04 + 1 garbage byte; sync; port 0 '!'
printf '\x00\x00\x00\x00\x00\x80\x01H\x01i\x0b\x78\x56\x34\x12\xc0\x05\x17\x80\x26\x00\x00\x0e\x0f\x10\x0e\x0f\x20\x05\x20\x15\x00\x18\x09Z\x04\x33\x00\x00\x00\x00\x00\x80\x01!' >"$T/s.bin"

out=$("$SONDE" itm "$T/s.bin" 2>"$T/err"); rc=$?
check_eq "$rc" 0 "text exit"
check_eq "$out" "Hi!" "text port 0 as characters"
grep -q "2 bytes skipped at offset 35 (reserved header)" "$T/err" && ok || bad "loss warning: $(cat "$T/err")"

out=$("$SONDE" itm -c '1,%08x\n' -c '33,[%c]' "$T/s.bin" 2>/dev/null)
check_eq "$out" "12345678
[Z]" "-c formats"

"$SONDE" itm --format json -e "$ELF" "$T/s.bin" >"$T/j" 2>/dev/null
cat >"$T/want" <<'EOJ'
{"type":"sync","offset":0,"size":6}
{"type":"sw","offset":6,"port":0,"size":1,"value":72}
{"type":"sw","offset":8,"port":0,"size":1,"value":105}
{"type":"sw","offset":10,"port":1,"size":4,"value":305419896}
{"type":"lts","offset":15,"ts":5,"value":5,"tc":0,"format":1}
{"type":"pc","offset":17,"ts":5,"pc":9856,"fn":"start_trace+0x48"}
{"type":"exc","offset":22,"ts":5,"exc":15,"name":"SysTick","event":"enter","flags":1}
{"type":"exc","offset":25,"ts":5,"exc":15,"name":"SysTick","event":"exit","flags":2}
{"type":"evcnt","offset":28,"ts":5,"flags":32,"counters":"cyc"}
{"type":"pc_sleep","offset":30,"ts":5,"value":0}
{"type":"page","offset":32,"ts":5,"value":1}
{"type":"sw","offset":33,"ts":5,"port":33,"size":1,"value":90}
{"type":"skip","offset":35,"ts":5,"value":2,"reason":"reserved header"}
{"type":"sync","offset":37,"ts":5,"size":6}
{"type":"sw","offset":43,"ts":5,"port":0,"size":1,"value":33}
EOJ
if diff "$T/want" "$T/j" >&2; then ok; else bad "json output"; fi

"$SONDE" itm --format csv "$T/s.bin" >"$T/c" 2>/dev/null
check_eq "$(head -1 "$T/c")" "offset,ts,type,port,size,value,flags,info" "csv header"
check_eq "$(wc -l <"$T/c")" 16 "csv rows"
check_eq "$(sed -n 8p "$T/c")" "22,5,exc,0,2,15,1,enter SysTick" "csv exc row"

"$SONDE" itm --events -e "$ELF" "$T/s.bin" >"$T/e" 2>/dev/null
grep -q "pc       0x00002680 start_trace+0x48" "$T/e" && ok || bad "events pc line"
grep -q "exc      enter  SysTick (15)" "$T/e" && ok || bad "events exc line"
grep -q "skip     2 bytes from offset 35" "$T/e" && ok || bad "events skip line"

"$SONDE" itm --stats --json "$T/s.bin" >"$T/st" 2>/dev/null
python3 - "$T/st" <<'EOP' && ok || bad "stats json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["bytes"] == 45 and d["skipped"] == 2, d
assert isinstance(d["mb_per_s"], float) or isinstance(d["mb_per_s"], int)
assert isinstance(d["cpu_mb_per_s"], (float, int)) and d["cpu_mb_per_s"] >= 0
assert list(d)[:6] == ["bytes", "skipped", "losses", "mb_per_s", "cpu_mb_per_s", "packets"], list(d)
p = d["packets"]
want = {"sync": 2, "sw": 5, "lts": 1, "pc": 1, "exc": 2, "evcnt": 1, "pc_sleep": 1,
        "page": 1, "skip": 1}
for k in ["sync", "overflow", "sw", "lts", "gts", "pc", "pc_sleep", "exc", "evcnt",
          "dt_pc", "dt_addr", "dt_data", "page"]:
    assert p[k] == want.get(k, 0), (k, p[k])
EOP
"$SONDE" itm --stats "$T/s.bin" >"$T/st2" 2>/dev/null
grep -q "^skipped   2 bytes in 1 losses" "$T/st2" && ok || bad "stats text skipped"
grep -q "^  sw        5" "$T/st2" && ok || bad "stats text sw"

# truncated input: the cut packet is reported with its offset
head -c 20 "$T/s.bin" >"$T/cut.bin"
"$SONDE" itm --format json "$T/cut.bin" 2>/dev/null | tail -1 >"$T/t"
check_eq "$(cat "$T/t")" '{"type":"skip","offset":17,"ts":5,"value":3,"reason":"truncated packet"}' "truncated"

# --wait-sync skips the bytes before the first sync
printf '\x01A\x00\x00\x00\x00\x00\x80\x01B' >"$T/w.bin"
check_eq "$("$SONDE" itm --wait-sync "$T/w.bin" 2>/dev/null)" "B" "--wait-sync"
check_eq "$("$SONDE" itm "$T/w.bin" 2>/dev/null)" "AB" "default starts synced"

# --ts-next: packets take the time of the local timestamp that follows them
printf '\x01A\xc0\x05\x01B\x17\x80\x26\x00\x00\xc0\x0a\x01C' >"$T/tsn.bin"
got=$("$SONDE" itm --format csv --ts-next "$T/tsn.bin" 2>/dev/null | cut -d, -f1-3 | tr '\n' ' ')
check_eq "$got" "offset,ts,type 0,5,sw 2,5,lts 4,15,sw 6,15,pc 11,15,lts 13,15,sw " "--ts-next"
got=$("$SONDE" itm --format csv "$T/tsn.bin" 2>/dev/null | cut -d, -f1-3 | tr '\n' ' ')
check_eq "$got" "offset,ts,type 0,,sw 2,5,lts 4,5,sw 6,5,pc 11,15,lts 13,15,sw " "default ts"

# stdin
check_eq "$("$SONDE" itm - <"$T/s.bin" 2>/dev/null)" "Hi!" "stdin"

# bad usage: exit 2
for args in "--format xml $T/s.bin" "" "$T/s.bin $T/s.bin" "--line uart:1000000 $T/s.bin" \
    "--sample-rate 8M $T/s.bin" "-c nonsense $T/s.bin" "-c 1,%s $T/s.bin" \
    "-c 1,%d%d $T/s.bin" "--json $T/s.bin" "--ts-prescale 3 $T/s.bin" \
    "--tpiu=0x99 $T/s.bin" "--line bogus:12 --sample-rate 8M $T/s.bin" "--no-such-option $T/s.bin"; do
  # shellcheck disable=SC2086
  "$SONDE" itm $args >/dev/null 2>"$T/err"; rc=$?
  if [ "$rc" == 2 ]; then ok; else bad "usage '$args' exit $rc"; fi
done
grep -q "^sonde: " "$T/err" && ok || bad "usage message prefix"
# bad input: exit 1
"$SONDE" itm "$T/nonexistent.bin" >/dev/null 2>"$T/err"; check_eq "$?" 1 "missing input"
grep -q "nonexistent.bin" "$T/err" && ok || bad "missing input names the file"
"$SONDE" itm -e "$T/s.bin" "$T/s.bin" >/dev/null 2>"$T/err"; check_eq "$?" 1 "bad ELF"
grep -q "not an ELF" "$T/err" && ok || bad "bad ELF message"
# -c: 256 stimulus ports (8 pages of 32), a sane field width; --la-channel needs --line
"$SONDE" itm -c '256,%c' "$T/s.bin" >/dev/null 2>"$T/err"; check_eq "$?" 2 "-c port 256"
grep -q "stimulus port out of range (0..255)" "$T/err" && ok || bad "-c 256 message: $(cat "$T/err")"
"$SONDE" itm -c '255,%c' "$T/s.bin" >/dev/null 2>"$T/err"; check_eq "$?" 0 "-c port 255"
"$SONDE" itm -c '0,%4294967296d' "$T/s.bin" >/dev/null 2>"$T/err"; check_eq "$?" 2 "-c huge width"
grep -q "field width above 64" "$T/err" && ok || bad "-c width message: $(cat "$T/err")"
"$SONDE" itm --la-channel 3 "$T/s.bin" >/dev/null 2>"$T/err"; check_eq "$?" 2 "--la-channel without --line"
grep -q -- "--la-channel needs --line" "$T/err" && ok || bad "--la-channel message: $(cat "$T/err")"
for a in "--events --format csv" "--events --format json" "--stats --events" "--stats --ts-next" \
         "--stats --format json" "-c 1,%d --format csv"; do
  "$SONDE" itm $a "$T/s.bin" >/dev/null 2>"$T/err"; check_eq "$?" 2 "itm $a (would be ignored)"
done
# -j: a 2.5 MB file (s.bin 60000 times, cut inside a packet: 39 chunks of 64 KiB, the
# joins, a loss at every copy, a truncated end) gives the same output with any thread count
for i in $(seq 100); do cat "$T/s.bin"; done >"$T/s100.bin"
for i in $(seq 600); do cat "$T/s100.bin"; done | head -c 2500001 >"$T/big.bin"
for a in "" "--events" "--format json --ts-prescale 4" "--stats --json" "--wait-sync --format csv"; do
  "$SONDE" itm -j 1 $a "$T/big.bin" 2>&1 | sed -E 's/"(mb_per_s|cpu_mb_per_s)":[0-9.]+//g' >"$T/j1"
  for j in 2 3 8; do
    "$SONDE" itm -j $j $a "$T/big.bin" 2>&1 | sed -E 's/"(mb_per_s|cpu_mb_per_s)":[0-9.]+//g' >"$T/jn"
    cmp -s "$T/j1" "$T/jn" && ok || bad "itm -j $j $a differs from -j 1"
  done
done
"$SONDE" itm -j 1025 "$T/s.bin" >/dev/null 2>&1; check_eq "$?" 2 "-j 1025"
# an input that cannot be opened: exit 1, the command and the reason named
err=$("$SONDE" itm "$T/none.bin" 2>&1); check_eq "$?" 1 "missing input exit"
check_eq "$err" "sonde: itm: '$T/none.bin': No such file or directory" "missing input message"
err=$("$SONDE" itm -j 1 "$T/none.bin" 2>&1); check_eq "$err" "sonde: itm: '$T/none.bin': No such file or directory" "missing input message, -j 1"
# help
"$SONDE" itm --help >"$T/h"; check_eq "$?" 0 "help exit"
for o in --tpiu --line --sample-rate --format --channel --events --stats --json --elf --threads; do
  grep -q -- "$o" "$T/h" && ok || bad "help mentions $o"
done

echo "$pass passed, $fail failed"
[ "$fail" == 0 ]
