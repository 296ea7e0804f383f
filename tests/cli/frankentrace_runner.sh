#!/usr/bin/env bash
# `sonde frankentrace run` on runner images (target/cortexm/frankentrace
# linked in, firmware/ft/ft_prog.c: tight loops, function pointers, SysTick
# and timer interrupts, a busy-wait on the delay peripheral, WFI sleep):
# one VM through every SYSRESETREQ (--jobs 1) and one preloaded VM per
# iteration (--jobs 2) give the same bytes, equal to `sonde run --trace-pc`
# (a separate run, the retire hook) on every cycle, at several N and baud.
# Deliberate nondeterminism (a delay peripheral whose length varies per run,
# tests/frankentrace/jitter.machine) is reported in runner and probe mode and
# nothing wrong is emitted; SWO bit errors make iterations run again (or
# leave them marked); impossible plans and wrong images get clear errors.
set -u
F=$SONDE_BUILD/firmware
S=$SONDE
M=$(dirname "$0")/../frankentrace/jitter.machine
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check() { if [ "$2" = "$3" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1: '$2' != '$3'"; fi; }
field() { python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])[sys.argv[2]])' "$1" "$2"; }

# <fw> <N> <repeats> <cycles> <transitions> [extra]: J=1 chained and J=2
# preloaded, both == sonde run --trace-pc
runner() {
  local fw=$1 n=$2 rep=$3 cyc=$4 tr=$5 extra=${6:-}
  "$S" run --trace-pc "$tmp/$fw.gt.pct" "$F/$fw.elf" >/dev/null 2>&1
  for j in 1 2; do
    "$S" frankentrace run -e "$F/$fw.elf" --jobs $j $extra --truth "$tmp/$fw.gt.pct" --json \
      -o "$tmp/$fw.$j.pct" 2>"$tmp/$fw.$j.err"
    check "$fw J=$j rc" $? 0
    check "$fw J=$j == --trace-pc" "$(grep -c "truth .*; $cyc compared, $cyc equal, 0 different, 0 unrecoverable" "$tmp/$fw.$j.err")" 1
    check "$fw J=$j plan" "$(field "$tmp/$fw.$j.err" plan)" $((n + rep))
    check "$fw J=$j check" "$(grep -c "^check: all $tr transitions possible" "$tmp/$fw.$j.err")" 1
  done
  check "$fw VMs J=1" "$(field "$tmp/$fw.1.err" vms)" 1
  check "$fw VMs J=2" "$(field "$tmp/$fw.2.err" vms)" $((n + rep))
  cmp -s "$tmp/$fw.1.pct" "$tmp/$fw.2.pct"; check "$fw J=1 and J=2 same bytes" $? 0
}
runner ft_prog 512 2 7190 3195                # 8 Mbaud, the paper's row
runner ft_prog128 128 2 7190 3195 --jit       # 48 Mbaud, compiled (the default interprets)
runner ft_prog192 192 2 7190 3195             # 24 Mbaud
runner ft_prog2048 2048 2 7190 3195           # 2 Mbaud, CYCTAP 1 (2050 iterations)
runner ft_irq 256 3 4705 2654                 # 16 Mbaud: nesting, tail-chaining, SVC/PendSV, SysTick
check "preload at J=1 too" "$("$S" frankentrace run -e "$F/ft_prog.elf" --preload -o "$tmp/p.pct" 2>/dev/null; cmp -s "$tmp/p.pct" "$tmp/ft_prog.1.pct"; echo $?)" 0
"$S" frankentrace run -e "$F/ft_prog.elf" --format csv -o "$tmp/r.csv" 2>/dev/null
check "csv rows" "$(head -1 "$tmp/r.csv"),$(($(wc -l <"$tmp/r.csv") - 1))" "ts,val,valid,label,short_instr,7190"

# nondeterminism, runner mode: J=1 and J=2 report the same, emit the same, and
# what they do not mark conflict equals the ground truth of the chained run
"$S" run -m "$M" --trace-pc "$tmp/nd.gt.pct" "$F/ft_prog.elf" >/dev/null 2>&1
for j in 1 2; do
  "$S" frankentrace run -e "$F/ft_prog.elf" -m "$M" --jobs $j --truth "$tmp/nd.gt.pct" -o "$tmp/nd.$j.pct" 2>"$tmp/nd.$j.err"
  check "runner nondeterminism J=$j rc" $? 1
  check "runner nondeterminism J=$j reported" "$(grep '^nondeterminism' "$tmp/nd.$j.err")" \
"nondeterminism: samples: iterations 0 and 512 (phase 0) differ from cycle 6656 (2 cycles)
nondeterminism: samples: iterations 239 and 513 (phase 239) differ from cycle 6895 (1 cycles)"
  check "runner nondeterminism J=$j untrusted from" "$(grep -c '^untrusted: cycles 4502.. marked conflict' "$tmp/nd.$j.err")" 1
  check "runner nondeterminism J=$j nothing wrong" "$(grep -c 'truth .*; 4502 compared, 4502 equal, 0 different' "$tmp/nd.$j.err")" 1
done
cmp -s "$tmp/nd.1.pct" "$tmp/nd.2.pct"; check "runner nondeterminism J=1 and J=2 same bytes" $? 0
# other environments (seed 1 once showed a wrong cycle just before the first impossible
# transition: a run that left the busy-wait early joins the loop's last branch consistently)
for seed in 1 4; do
  sed "s/seed=7/seed=$seed/" "$M" >"$tmp/s.machine"
  "$S" run -m "$tmp/s.machine" --trace-pc "$tmp/s.gt.pct" "$F/ft_prog.elf" >/dev/null 2>&1
  "$S" frankentrace run -e "$F/ft_prog.elf" -m "$tmp/s.machine" --jobs 2 --truth "$tmp/s.gt.pct" -o "$tmp/s.pct" 2>"$tmp/s.err"
  check "runner seed $seed rc" $? 1
  check "runner seed $seed marked" "$(grep -c '^untrusted: cycles [0-9]*.. marked conflict' "$tmp/s.err")" 1
  check "runner seed $seed nothing wrong" "$(grep -c 'truth .* compared, [0-9]* equal, 0 different' "$tmp/s.err")" 1
  "$S" frankentrace run -e "$F/exc_wfi_m3.elf" -m "$tmp/s.machine" --probe -N 512 --jobs 2 --verify -o "$tmp/s.pct" 2>"$tmp/s.err"
  check "probe seed $seed rc" $? 1
  check "probe seed $seed nothing wrong" "$(grep -c 'verify: equal to the VM.s ground truth on all' "$tmp/s.err")" 1
done

# nondeterminism, probe mode (exc_wfi waits on the delay peripheral)
for j in 1 2; do
  "$S" frankentrace run -e "$F/exc_wfi_m3.elf" -m "$M" --probe -N 128 --jobs $j --verify -o "$tmp/pn.$j.pct" 2>"$tmp/pn.$j.err"
  check "probe nondeterminism J=$j rc" $? 1
  check "probe nondeterminism J=$j first" "$(grep -m1 'nondeterminism: length' "$tmp/pn.$j.err")" \
    "  nondeterminism: length: runs 0 and 2 (phase 2) differ from cycle 40856 (14 cycles)"
  check "probe nondeterminism J=$j located" "$(grep 'environment run again' "$tmp/pn.$j.err")" \
    "  nondeterminism: length: run 2's environment run again at run 0's phase: their samples first differ at cycle 40832"
  check "probe nondeterminism J=$j untrusted" "$(grep -c '^  untrusted: cycles 40585.. marked conflict' "$tmp/pn.$j.err")" 1
  check "probe nondeterminism J=$j nothing wrong" "$(grep -c 'verify: equal to the VM.s ground truth on all 40584 compared cycles' "$tmp/pn.$j.err")" 1
done
cmp -s "$tmp/pn.1.pct" "$tmp/pn.2.pct"; check "probe nondeterminism J=1 and J=2 same bytes" $? 0
"$S" frankentrace run -e "$F/exc_wfi_m3.elf" -m "$M" --probe -N 128 --json -o "$tmp/pn.pct" 2>"$tmp/pn.json"
check "probe nondeterminism json" "$(field "$tmp/pn.json" untrusted_from),$(field "$tmp/pn.json" length_first_difference),$(field "$tmp/pn.json" ok)" "40585,40832,False"
"$S" frankentrace run -e "$F/exc_wfi_m3.elf" --probe -N 128 -o "$tmp/x.pct" 2>/dev/null
check "probe: the same image on cm3 is deterministic" $? 0

# SWO bit errors: corrupt iterations run again; the result is the clean trace
for j in 1 2; do
  "$S" frankentrace run -e "$F/ft_prog.elf" --jobs $j --swo-bit-errors 0.00002 --swo-seed 3 --json \
    -o "$tmp/be.$j.pct" 2>"$tmp/be.$j.err"
  check "runner bit errors J=$j rc" $? 0
  cmp -s "$tmp/be.$j.pct" "$tmp/ft_prog.1.pct"; check "runner bit errors J=$j == clean trace" $? 0
  r=$(field "$tmp/be.$j.err" reruns); [ "$r" -gt 0 ]; check "runner bit errors J=$j re-ran ($r)" $? 0
  "$S" frankentrace run -e "$F/exc_nesting_m3.elf" --probe -N 192 --jobs $j --swo-bit-errors 0.0002 --json \
    -o "$tmp/pbe.$j.pct" 2>"$tmp/pbe.$j.err"
  check "probe bit errors J=$j rc" $? 0
  r=$(field "$tmp/pbe.$j.err" reruns); [ "$r" -gt 0 ]; check "probe bit errors J=$j re-ran ($r)" $? 0
done
"$S" frankentrace run -e "$F/exc_nesting_m3.elf" --probe -N 192 -o "$tmp/pclean.pct" 2>/dev/null
cmp -s "$tmp/pbe.1.pct" "$tmp/pclean.pct" && cmp -s "$tmp/pbe.2.pct" "$tmp/pclean.pct"
check "probe bit errors J=1/J=2 == clean trace" $? 0
# one attempt only: iterations stay corrupt, are marked (phases unsampled), never wrong
"$S" frankentrace run -e "$F/ft_prog.elf" --jobs 2 --swo-bit-errors 0.0001 --attempts 1 \
  --truth "$tmp/ft_prog.gt.pct" --json -o "$tmp/m.pct" 2>"$tmp/m.err"
check "marked rc" $? 1
c=$(field "$tmp/m.err" corrupt_left); [ "$c" -gt 10 ]; check "marked: iterations left corrupt ($c)" $? 0
check "marked: missing phases listed" "$(grep -c '^missing: [0-9]* phases have no usable iteration' "$tmp/m.err")" 1
check "marked: nothing wrong" "$(grep -c 'truth .*compared, [0-9]* equal, 0 different' "$tmp/m.err")" 1

# plans that cannot work, wrong images
"$S" frankentrace run -e "$F/ft_badn.elf" -o "$tmp/x.pct" 2>"$tmp/e"; check "N too small rc" $? 1
check "N too small why" "$(tail -1 "$tmp/e")" \
  "sonde: frankentrace run: the runner's configuration cannot work: N = 64 is too small for SWO at 8000000 baud (a sample is 7 bytes, 420 cycles on the line at 48000000 Hz); the smallest N that works is 512"
"$S" frankentrace run -e "$F/ft_badbaud.elf" --jobs 2 -o "$tmp/x.pct" 2>"$tmp/e"; check "bad baud rc" $? 1
check "bad baud why" "$(tail -1 "$tmp/e")" \
  "sonde: frankentrace run: the runner's configuration cannot work: SWO 7000000 baud does not divide the 48000000 Hz core clock by an integer 1..65536 (TPIU_ACPR + 1)"
"$S" frankentrace run -e "$F/demo.elf" -o "$tmp/x.pct" 2>"$tmp/e"; check "not a runner rc" $? 2
check "not a runner why" "$(cat "$tmp/e")" \
  "sonde: frankentrace run: '$F/demo.elf' is not a FrankenTrace runner image (no ft_preamble): give --probe to trace it unmodified through the debug port, or link target/cortexm/frankentrace into it (docs/frankentrace-target.md)"
arm-none-eabi-objcopy -N ft_st "$F/ft_prog.elf" "$tmp/nost.elf" 2>/dev/null || cp "$F/demo.elf" "$tmp/nost.elf"
"$S" frankentrace run -e "$tmp/nost.elf" -o "$tmp/x.pct" 2>"$tmp/e"; check "no ft_st rc" $? 2
check "no ft_st why" "$(grep -c 'ft_preamble but no runner state ft_st' "$tmp/e")" 1
"$S" frankentrace run -e "$F/ft_prog.elf" -N 512 -o "$tmp/x.pct" 2>"$tmp/e"; check "-N on a runner rc" $? 2
check "-N on a runner why" "$(grep -c 'its N, baud and repeats are compiled in' "$tmp/e")" 1
"$S" frankentrace run -e "$F/ft_prog.elf" --max-cycles 100000 -o "$tmp/x.pct" 2>"$tmp/e"; check "guard rc" $? 1
check "guard why" "$(grep -c 'the runner image did not exit after its plan' "$tmp/e")" 1
"$S" frankentrace run -e "$F/ft_prog.elf" --jobs 2 --max-cycles 2000 -o "$tmp/x.pct" 2>"$tmp/e"; check "guard J=2 rc" $? 1
check "guard J=2 why" "$(grep -c 'iteration 0 did not end with the runner.s reset' "$tmp/e")" 1
"$S" frankentrace run -e "$F/ft_prog.elf" --swo-bit-errors 2 -o "$tmp/x.pct" 2>/dev/null; check "bad probability" $? 2
# the machine options of the jitter
sed 's/jitter=40/jitter=2000000/' "$M" >"$tmp/bj.machine"
"$S" run -m "$tmp/bj.machine" "$F/ft_prog.elf" >/dev/null 2>"$tmp/e"; check "jitter range rc" $? 1
check "jitter range why" "$(cat "$tmp/e")" "sonde: run: $tmp/bj.machine:13: peripheral delay: bad jitter '2000000' (0 to 1000000 cycles)"
sed 's/irq=1$/irq=1 jitter=3/' "$M" >"$tmp/bj.machine"
"$S" run -m "$tmp/bj.machine" "$F/ft_prog.elf" >/dev/null 2>"$tmp/e"; check "jitter on a timer rc" $? 1
check "jitter on a timer why" "$(cat "$tmp/e")" "sonde: run: $tmp/bj.machine:12: peripheral timer: unknown key 'jitter'"
# another seed, another environment: still caught
sed 's/seed=7/seed=8/' "$M" >"$tmp/s8.machine"
"$S" frankentrace run -e "$F/ft_prog.elf" -m "$tmp/s8.machine" --jobs 2 -o "$tmp/x.pct" 2>"$tmp/e"; check "seed 8 rc" $? 1
[ "$(grep -c '^nondeterminism\|^check: [1-9]' "$tmp/e")" -ge 1 ]; check "seed 8 reported" $? 0
# a progress bar on a terminal (script(1) gives the command one), none otherwise
if command -v script >/dev/null 2>&1; then
  for mode in "$F/ft_prog.elf" "$F/ft_prog.elf --jobs 2" "$F/exc_nesting_m3.elf --probe -N 192"; do
    script -qec "'$S' frankentrace run -e $mode -o '$tmp/tty.pct'" /dev/null >"$tmp/tty" 2>&1
    check "progress bar on a terminal: $mode" "$(grep -c '\(iterations\|runs\) \[[# ]*\] *[0-9]*%' "$tmp/tty")" 1
  done
  "$S" frankentrace run -e "$F/ft_prog.elf" -o "$tmp/tty.pct" 2>"$tmp/notty"
  check "no bar off a terminal" "$(grep -c '%' "$tmp/notty")" 0
fi
"$S" frankentrace run --help >/dev/null; check "help" $? 0

echo "frankentrace_runner: $pass passed, $fail failed"
[ "$fail" = 0 ]
