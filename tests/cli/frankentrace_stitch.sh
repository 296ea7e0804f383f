#!/usr/bin/env bash
# `sonde frankentrace stitch` on captures of firmware with the FrankenTrace
# runner linked (firmware/ft/ft_prog.c: loops, function pointers, SysTick,
# a busy-wait on the delay peripheral, WFI), run on the VM chained through
# SYSRESETREQ with the iteration state in .noinit: the stitched trace equals
# the VM's ground truth (--trace-pc of the same run, aligned on the preamble)
# on every cycle, from the raw SWO file and from UART line samples; deliberate
# nondeterminism is reported; bit errors on the wire mark iterations corrupt;
# cut captures, wrong ELF, wrong firmware id and garbage give clear errors.
set -u
B=$SONDE_BUILD/firmware
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check() { if [ "$2" = "$3" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1: '$2' != '$3'"; fi; }
S=$SONDE

for fw in ft_prog ft_prog128; do
  "$S" run --swo "$tmp/$fw.swo" --trace-pc "$tmp/$fw-gt.pct" "$B/$fw.elf" >/dev/null 2>&1
  check "$fw chained run exits 0" $? 0
  "$S" frankentrace stitch -e "$B/$fw.elf" --fw-id 0xF7000001 "$tmp/$fw.swo" --verify "$tmp/$fw-gt.pct" \
    -o "$tmp/$fw.pct" >"$tmp/out" 2>"$tmp/err"
  check "$fw stitch rc" $? 0
  check "$fw no warnings" "$(cat "$tmp/err")" ""
  check "$fw 0 different" "$(grep -c '7190 compared, 7190 equal, 0 different, 0 unrecoverable' "$tmp/out")" 1
  check "$fw preamble" "$(grep -c '^preamble: intact at cycles 6..69' "$tmp/out")" 1
  check "$fw check" "$(grep -c '^check: all .* transitions possible' "$tmp/out")" 1
done
check "ft_prog summary" "$(head -1 "$tmp/out" | sed 's/^frankentrace stitch: //')" \
  "N 128, 130 iterations (0 LSU, 0 cut, 0 corrupt), 128 of 128 phases, 2 redundant; 7190 cycles, 7303 samples, 0 lost, 0 overflows, 0 outside the ELF, 0 conflicts"

# the same capture as 8 Mbaud UART samples at 24 MS/s (3 per bit, as the paper's FX2 analyzer)
"$S" run --swo-samples "$tmp/la.bin" --sample-rate 24M "$B/ft_prog.elf" >/dev/null 2>&1
"$S" frankentrace stitch -e "$B/ft_prog.elf" --line uart:8000000 --sample-rate 24M "$tmp/la.bin" \
  --verify "$tmp/ft_prog-gt.pct" -o "$tmp/la.pct" >"$tmp/out" 2>&1
check "line samples rc" $? 0
cmp -s "$tmp/la.pct" "$tmp/ft_prog.pct"; check "line samples: same trace as the raw capture" $? 0

# bit errors on the wire: iterations flagged corrupt (never merged), the rest verified
"$S" run --swo-samples "$tmp/bad.bin" --sample-rate 24M --swo-bit-errors 0.00002 --swo-seed 3 \
  "$B/ft_prog.elf" >/dev/null 2>&1
"$S" frankentrace stitch -e "$B/ft_prog.elf" --line uart:8000000 --sample-rate 24M "$tmp/bad.bin" \
  --verify "$tmp/ft_prog-gt.pct" -o "$tmp/bad.pct" >"$tmp/out" 2>"$tmp/err"
check "bit errors rc" $? 1
corrupt=$(sed -n 's/.* 0 cut, \([0-9]*\) corrupt.*/\1/p' "$tmp/out")
[ "${corrupt:-0}" -gt 5 ]; check "bit errors: iterations flagged corrupt ($corrupt)" $? 0
check "bit errors: re-run advice" "$(grep -c 'is corrupt on the wire .*: not used; re-run it' "$tmp/err")" 10
check "bit errors: missing phases listed" "$(grep -c '^missing: [0-9]* phases have no usable iteration' "$tmp/out")" 1
# what the wire checks cannot see (a flipped bit inside a PC payload) the code check flags
check "bit errors: impossible transition flagged" "$(grep -c '^check: 1 impossible transitions' "$tmp/out")" 1

# deliberate nondeterminism (the delay peripheral's length changes per boot): reported
"$S" run --swo "$tmp/nd.swo" "$B/ft_nondet.elf" >/dev/null 2>&1
"$S" frankentrace stitch -e "$B/ft_nondet.elf" "$tmp/nd.swo" -o "$tmp/nd.pct" >"$tmp/out" 2>&1
check "nondeterminism rc" $? 1
check "nondeterminism reported" "$(grep '^nondeterminism' "$tmp/out")" \
  "nondeterminism: samples: iterations 0 and 128 (phase 0) differ from cycle 4224 (12 cycles)"

# a capture cut mid-way: the phases never seen are listed, exit 1, trace still written
head -c 40120 "$tmp/ft_prog.swo" >"$tmp/cut.swo"
"$S" frankentrace stitch -e "$B/ft_prog.elf" "$tmp/cut.swo" -o "$tmp/cut.pct" >"$tmp/out" 2>"$tmp/err"
check "cut rc" $? 1
check "cut missing" "$(grep '^missing' "$tmp/out")" \
  "missing: 304 phases have no usable iteration (first: 208 209 210 211 212 213 214 215); their cycles are unsampled"
check "cut: last iteration has no end" "$(grep -c 'has no end record: the capture is cut' "$tmp/err")" 1
[ -s "$tmp/cut.pct" ]; check "cut: trace written" $? 0

# wrong ELF, wrong firmware id, no iterations, garbage
"$S" frankentrace stitch -e "$B/demo.elf" "$tmp/ft_prog.swo" -o "$tmp/x" 2>"$tmp/err"
check "wrong ELF rc" $? 1
check "wrong ELF message" "$(cat "$tmp/err")" \
  "sonde: frankentrace stitch: '$B/demo.elf' has no ft_preamble: not an image with the FrankenTrace runner linked (wrong ELF?)"
"$S" frankentrace stitch -e "$B/ft_prog.elf" --fw-id 0x1234 "$tmp/ft_prog.swo" -o "$tmp/x" 2>"$tmp/err"
check "fw id rc" $? 1
check "fw id message" "$(cat "$tmp/err")" \
  "sonde: frankentrace stitch: $tmp/ft_prog.swo: offset 0: iteration 0 comes from firmware id 0xf7000001, not 0x00001234 (--fw-id): wrong ELF or capture"
"$S" run --swo "$tmp/demo.swo" "$B/demo_swo.elf" >/dev/null 2>&1
"$S" frankentrace stitch -e "$B/ft_prog.elf" "$tmp/demo.swo" -o "$tmp/x" 2>"$tmp/err"
check "no iterations rc" $? 1
check "no iterations message" "$(cat "$tmp/err")" \
  "sonde: frankentrace stitch: no FrankenTrace iteration in the capture (no begin record on stimulus port 31)"
head -c 20000 /dev/urandom >"$tmp/rnd.bin"
"$S" frankentrace stitch -e "$B/ft_prog.elf" "$tmp/rnd.bin" -o "$tmp/x" >/dev/null 2>&1
check "garbage: a failure, not a crash" $? 1
"$S" frankentrace stitch -e "$B/ft_prog.elf" 2>/dev/null; check "no capture is usage" $? 2
"$S" frankentrace stitch --help >/dev/null; check "help" $? 0

echo "frankentrace_stitch: $pass passed, $fail failed"
[ "$fail" = 0 ]
