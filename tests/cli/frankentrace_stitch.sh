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

# `frankentrace verify` aligns a runner trace on the preamble (or a given offset) by itself
"$S" frankentrace verify -e "$B/ft_prog.elf" --preamble "$tmp/ft_prog.pct" "$tmp/ft_prog-gt.pct" >"$tmp/v"
check "verify --preamble rc" $? 0
cyc=$(sed -n 's/.*phases, [0-9]* redundant; \([0-9]*\) cycles,.*/\1/p' "$tmp/out") # ft_prog128's = ft_prog's
check "verify --preamble" "$(head -1 "$tmp/v" | sed 's/; [0-9]* ground-truth cycles outside.*//')" \
  "compared $cyc cycles: $cyc equal, 0 different; 0 unrecoverable in the trace"
off=$(sed -n 's/^verify: trace cycle 0 = ground-truth cycle \([0-9]*\);.*/\1/p' "$tmp/out") # ft_prog128's
"$S" frankentrace verify --offset "$off" "$tmp/ft_prog128.pct" "$tmp/ft_prog128-gt.pct" >/dev/null
check "verify --offset $off rc" $? 0
"$S" frankentrace verify "$tmp/ft_prog.pct" "$tmp/ft_prog-gt.pct" >/dev/null
check "verify unaligned fails" $? 1
"$S" frankentrace verify --preamble "$tmp/ft_prog.pct" "$tmp/ft_prog-gt.pct" 2>/dev/null
check "verify --preamble without -e" $? 2

# a capture in two files: split at an iteration's begin record, the same trace; split inside an
# iteration, that iteration is corrupt (its packets cut), the rest the same
# (the offset of the 200th begin record, found by `sonde itm`)
at=$("$S" itm --format csv "$tmp/ft_prog.swo" 2>/dev/null | awk -F, '$3 == "sw" && $6 == "1179910401" {print $1}' | sed -n 200p)
head -c "$at" "$tmp/ft_prog.swo" >"$tmp/a.swo"; tail -c +$((at + 1)) "$tmp/ft_prog.swo" >"$tmp/b.swo"
"$S" frankentrace stitch -e "$B/ft_prog.elf" "$tmp/a.swo" "$tmp/b.swo" -o "$tmp/ab.pct" >/dev/null 2>&1
check "two files rc" $? 0
cmp -s "$tmp/ab.pct" "$tmp/ft_prog.pct"; check "two files: the same trace" $? 0
# (in the middle of the first PC packet of the 199th iteration: a split between two packets
# loses nothing, the decoder starts each file afresh)
at0=$("$S" itm --format csv "$tmp/ft_prog.swo" 2>/dev/null | awk -F, '$3 == "sw" && $6 == "1179910401" {print $1}' | sed -n 199p)
mid=$("$S" itm --format csv "$tmp/ft_prog.swo" 2>/dev/null | awk -F, -v a="$at0" '$3 == "pc" && $1 > a {print $1 + 2; exit}')
head -c "$mid" "$tmp/ft_prog.swo" >"$tmp/a.swo"; tail -c +$((mid + 1)) "$tmp/ft_prog.swo" >"$tmp/b.swo"
"$S" frankentrace stitch -e "$B/ft_prog.elf" "$tmp/a.swo" "$tmp/b.swo" -o "$tmp/ab.pct" >"$tmp/out" 2>"$tmp/err"
check "split inside an iteration rc" $? 1
check "split inside an iteration: flagged" "$(grep -c 'iteration 198 (phase 198) is corrupt on the wire' "$tmp/err"),$(grep -c 'corrupt on the wire' "$tmp/err")" 1,1
"$S" frankentrace verify --raw "$tmp/ab.pct" "$tmp/ft_prog.pct" >"$tmp/v" 2>&1
check "split inside an iteration: nothing wrong" "$(grep -c ' 0 different; [1-9][0-9]* unrecoverable' "$tmp/v")" 1

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

# deliberate nondeterminism (the delay peripheral's length changes per boot; the udiv that
# computes it takes longer for some boot counts, so runs go apart at cycle 4106, unseen until
# 4224): reported, and every cycle from one interval before the first sign marked conflict, so
# what the trace claims equals the ground truth of the first iteration
"$S" run --swo "$tmp/nd.swo" --trace-pc "$tmp/nd-gt.pct" "$B/ft_nondet.elf" >/dev/null 2>&1
"$S" frankentrace stitch -e "$B/ft_nondet.elf" "$tmp/nd.swo" --verify "$tmp/nd-gt.pct" -o "$tmp/nd.pct" >"$tmp/out" 2>&1
check "nondeterminism rc" $? 1
check "nondeterminism reported" "$(grep '^nondeterminism' "$tmp/out")" \
  "nondeterminism: samples: iterations 0 and 128 (phase 0) differ from cycle 4224 (12 cycles)"
check "nondeterminism marked" "$(grep -c '^untrusted: cycles 4096.. marked conflict' "$tmp/out")" 1
check "nondeterminism: nothing wrong" "$(grep -c '^verify: .*; 4096 compared, 4096 equal, 0 different' "$tmp/out")" 1
"$S" frankentrace stitch -e "$B/ft_nondet.elf" "$tmp/nd.swo" --verify "$tmp/nd-gt.pct" --json -o "$tmp/nd.pct" >"$tmp/out" 2>&1
check "nondeterminism json" "$(tail -1 "$tmp/out" | python3 -c '
import json, sys; d = json.load(sys.stdin); k = d["conflicts"][0]
print(d["untrusted_from"], d["verify"]["compared"], d["verify"]["different"], k["iter_a"], k["iter_b"], k["first_cycle"], d["pc"] + d["sleep"] + d["unrecoverable"] == d["cycles"], d["ok"])')" \
  "4096 4096 0 0 128 4224 True False"
"$S" frankentrace convert --format csv -o "$tmp/nd.csv" "$tmp/nd.pct"
check "nondeterminism: marked cells are not valid" \
  "$(awk -F, 'NR > 1 && $1 >= 4096 && $3 == "true"' "$tmp/nd.csv" | wc -l),$(awk -F, 'NR > 1 && $1 < 4096 && $3 != "true"' "$tmp/nd.csv" | wc -l)" "0,0"
# a delay peripheral whose time varies per boot (jitter=, seeded by the boot count), three
# seeds: from the chained capture, the same marking; never a wrong cycle
M=$(dirname "$0")/../frankentrace/jitter.machine
for seed in 1 3 5; do
  sed "s/seed=7/seed=$seed/" "$M" >"$tmp/j.machine"
  "$S" run -m "$tmp/j.machine" --swo "$tmp/j.swo" --trace-pc "$tmp/j-gt.pct" "$B/ft_prog.elf" >/dev/null 2>&1
  "$S" frankentrace stitch -e "$B/ft_prog.elf" "$tmp/j.swo" --verify "$tmp/j-gt.pct" -o "$tmp/j.pct" >"$tmp/out" 2>&1
  check "jitter seed $seed rc" $? 1
  check "jitter seed $seed marked" "$(grep -c '^untrusted: cycles [0-9]*.. marked conflict' "$tmp/out")" 1
  check "jitter seed $seed nothing wrong" "$(grep -c '^verify: .* compared, [0-9]* equal, 0 different' "$tmp/out")" 1
done

# a capture cut mid-way: the phases never seen are listed, exit 1, trace still written
head -c 40120 "$tmp/ft_prog.swo" >"$tmp/cut.swo"
"$S" frankentrace stitch -e "$B/ft_prog.elf" "$tmp/cut.swo" -o "$tmp/cut.pct" >"$tmp/out" 2>"$tmp/err"
check "cut rc" $? 1
check "cut missing" "$(grep '^missing' "$tmp/out")" \
  "missing: 304 phases have no usable iteration (first: 208 209 210 211 212 213 214 215); their cycles are unsampled"
check "cut: last iteration has no end" "$(grep -c 'has no end record: the capture is cut' "$tmp/err")" 1
[ -s "$tmp/cut.pct" ]; check "cut: trace written" $? 0

# iterations missing from the middle (30 kB of the capture lost): the gap and the phases it
# leaves unsampled are said, the iteration the loss cut into is corrupt, exit 1
{ head -c 30000 "$tmp/ft_prog.swo"; tail -c +60001 "$tmp/ft_prog.swo"; } >"$tmp/gap.swo"
"$S" frankentrace stitch -e "$B/ft_prog.elf" "$tmp/gap.swo" -o "$tmp/gap.pct" >"$tmp/out" 2>"$tmp/err"
check "gap rc" $? 1
g=$(sed -n 's/^gap: \([0-9]*\) iterations are not in the capture (first: \([0-9]*\)\.\..*/\1 \2/p' "$tmp/out")
set -- $g
[ "${1:-0}" -gt 100 ]; check "gap said ($g)" $? 0
check "gap missing phases" "$(grep -c "^missing: $1 phases have no usable iteration" "$tmp/out")" 1
check "gap: the cut iteration is corrupt" "$(grep -c "iteration $(($2 - 1)) (phase $(($2 - 1))) is corrupt on the wire" "$tmp/err")" 1
"$S" frankentrace verify --raw "$tmp/gap.pct" "$tmp/ft_prog.pct" >"$tmp/v" 2>&1
check "gap: what is there is right" "$(grep -c ' 0 different;' "$tmp/v")" 1

# logic-analyzer samples decoded at the wrong baud: nothing usable, and the likely reason
for b in 4000000 6000000; do
  "$S" frankentrace stitch -e "$B/ft_prog.elf" --line uart:$b --sample-rate 24M "$tmp/la.bin" -o "$tmp/x" 2>"$tmp/err"
  check "wrong baud $b rc" $? 1
  check "wrong baud $b why" "$(grep -c "the line decoder dropped [0-9]* of [0-9]* frames (framing errors): is 'uart:$b' the runner's SWO baud" "$tmp/err")" 1
done

# N or baud that cannot work on the line the user names (--clock with --baud or --line): why,
# and the smallest N that works
"$S" frankentrace stitch -e "$B/ft_prog.elf" --clock 48M --baud 4000000 "$tmp/ft_prog.swo" -o "$tmp/x" >"$tmp/out"
check "N too small for the line rc" $? 1
check "N too small for the line why" "$(grep '^line' "$tmp/out")" \
  "line: N = 512 is too small for SWO at 4000000 baud (a sample is 8 bytes, 960 cycles on the line at 48000000 Hz); the smallest N that works is 960"
"$S" frankentrace stitch -e "$B/ft_prog.elf" --clock 48M --baud 7000000 "$tmp/ft_prog.swo" -o "$tmp/x" >"$tmp/out"
check "baud no divider rc" $? 1
check "baud no divider why" "$(grep -c '^line: SWO 7000000 baud does not divide the 48000000 Hz core clock' "$tmp/out")" 1
"$S" frankentrace stitch -e "$B/ft_prog.elf" --clock 48M --line uart:8000000 --sample-rate 24M "$tmp/la.bin" -o "$tmp/x" >"$tmp/out"
check "the paper's line fits rc" $? 0
check "the paper's line fits" "$(grep -c '^line' "$tmp/out")" 0

# the capture of one runner image stitched with another runner image's ELF
"$S" frankentrace stitch -e "$B/ft_irq.elf" "$tmp/ft_prog.swo" -o "$tmp/x" 2>"$tmp/err"
check "other runner ELF rc" $? 1
check "other runner ELF why" "$(grep -c "the capture does not fit the ELF's code: its preamble (ft_preamble) is never in the trace and [0-9]* of [0-9]* transitions are impossible in the code: wrong ELF?" "$tmp/err")" 1

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
