#!/bin/sh
# sonde run --power / --power-rate (docs/vm.md "Power model"): a hand-assembled
# firmware (the one of tests/vm/test_power.c) runs 13 cycles, sleeps in WFI
# until a timer wakes it 1000 cycles after the enabling store (cycle 1010),
# then sends two UART bytes of 100 cycles each (1013-1113, 1120-1220) and
# stops on BKPT at cycle 1228. At 1 MHz and --power-rate 10k a sample is taken
# every 100 cycles: 1.000 mA (run), 0.100 (sleep) x10, 1.050 (run + UART) x2.
set -u
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
command -v python3 >/dev/null || { echo "python3 missing"; exit 1; }
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT

cat > "$t/p.machine" <<'M'
core m3
clock 1MHz
memory flash 0x00000000 64K access=rx
memory sram 0x20000000 16K
peripheral uart 0x400F0000 baud=100000
peripheral timer 0x400F2000 irq=1
power run=1000 sleep=100 uart=50 voltage=3000
M
python3 - "$t/fw.bin" <<'P'
import struct, sys
code = [0xB672, 0x480A, 0x2102, 0x6001, 0x4809, 0x490A, 0x6041, 0x2103, 0x6001, 0xBF30,
        0x2141, 0x4808, 0x6001, 0x6842, 0x07D2, 0xD5FC, 0x6001, 0x6842, 0x07D2, 0xD5FC,
        0xBE00, 0xBF00]
img = struct.pack('<II', 0x20004000, 0x09) + struct.pack('<%dH' % len(code), *code)
img += struct.pack('<IIII', 0xE000E100, 0x400F2000, 1000, 0x400F0000)
open(sys.argv[1], 'wb').write(img)
P

"$SONDE" run -m "$t/p.machine" --binary --uart "$t/uart.txt" --power "$t/pw.csv" \
  --power-rate 10k --json "$t/fw.bin" 2> "$t/err"
[ $? -eq 1 ] && ok || bad "exit status (BKPT stops with 1)"
grep -q 'breakpoint at pc 0x00000030' "$t/err" && ok || bad "stop: $(cat "$t/err")"
grep -q '"cycles": 1228,' "$t/err" && ok || bad "cycles: $(cat "$t/err")"
grep -q '"sleep_cycles": 997,' "$t/err" && ok || bad "sleep cycles"
# 340700 uA-cycles / 1 MHz = 0.3407 uC; x 3.0 V = 1.0221 uJ
grep -q '"energy_uj": 1.022,' "$t/err" && ok || bad "energy: $(cat "$t/err")"
[ "$(cat "$t/uart.txt")" = "AA" ] && ok || bad "uart output"
cat > "$t/want.csv" <<'W'
time_s,current_ma
0.000000000,1.000
0.000100000,0.100
0.000200000,0.100
0.000300000,0.100
0.000400000,0.100
0.000500000,0.100
0.000600000,0.100
0.000700000,0.100
0.000800000,0.100
0.000900000,0.100
0.001000000,0.100
0.001100000,1.050
0.001200000,1.050
W
cmp -s "$t/want.csv" "$t/pw.csv" && ok || { bad "samples"; diff "$t/want.csv" "$t/pw.csv"; }

# --stats prints the energy too
"$SONDE" run -m "$t/p.machine" --binary --uart "$t/uart.txt" --stats "$t/fw.bin" 2> "$t/err"
grep -q '^energy uJ     1.022$' "$t/err" && ok || bad "--stats energy: $(cat "$t/err")"

# bad input: clear errors
"$SONDE" run -m "$t/p.machine" --binary --power-rate 10 "$t/fw.bin" 2> "$t/err"
[ $? -eq 2 ] && grep -q 'sonde: run: --power-rate needs --power <file>' "$t/err" && ok ||
  bad "rate without --power: $(cat "$t/err")"
"$SONDE" run -m "$t/p.machine" --binary --power "$t/x.csv" --power-rate 2M "$t/fw.bin" 2> "$t/err"
[ $? -eq 2 ] && grep -q "power-rate: '2M' is not a rate in Hz from 1 to the core clock" "$t/err" &&
  ok || bad "rate above the clock: $(cat "$t/err")"
printf 'core m3\nclock 1MHz\nmemory flash 0 64K\npower run=1 sleep=x\n' > "$t/bad.machine"
"$SONDE" run -m "$t/bad.machine" --binary "$t/fw.bin" 2> "$t/err"
[ $? -ne 0 ] && grep -q "bad.machine:4: power: expected run=MICROAMPS sleep=MICROAMPS, got 'sleep=x'" \
  "$t/err" && ok || bad "bad power line: $(cat "$t/err")"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
