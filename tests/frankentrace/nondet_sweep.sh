#!/usr/bin/env bash
# Not in ctest (about 10 minutes): FrankenTrace under deliberate nondeterminism, many
# environments. For each jitter of the delay peripheral and seed (tests/frankentrace/
# jitter.machine), runner images through `frankentrace run --jobs 2` and through `sonde run
# --swo` + `frankentrace stitch`, and unmodified images through `run --probe`, each compared with
# the ground truth of the same environment: a line per case, and the cases where a cycle the
# trace claims valid differs from the ground truth (the marking of untrusted cycles fell short).
#   tests/frankentrace/nondet_sweep.sh <build dir>     (exit 1 if any case is wrong)
set -u
BUILD=${1:?usage: nondet_sweep.sh <build dir>}
S=$BUILD/src/cli/sonde B=$BUILD/firmware M=$(dirname "$0")/jitter.machine
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
wrong=0
for jit in 1 3 5 13 40 100 400 1000; do
  for seed in 1 2 3; do
    sed "s/seed=7/seed=$seed/; s/jitter=40/jitter=$jit/" "$M" >"$tmp/m"
    for fw in ft_prog ft_prog128 ft_prog2048 ft_nondet; do
      "$S" run -m "$tmp/m" --swo "$tmp/c.swo" --trace-pc "$tmp/gt.pct" "$B/$fw.elf" >/dev/null 2>&1
      r=$("$S" frankentrace run -e "$B/$fw.elf" -m "$tmp/m" --jobs 2 --truth "$tmp/gt.pct" -o "$tmp/r.pct" 2>&1 |
        grep -o '[0-9]* different' | head -1)
      s=$("$S" frankentrace stitch -e "$B/$fw.elf" "$tmp/c.swo" --verify "$tmp/gt.pct" -o "$tmp/s.pct" 2>&1 |
        grep -o '[0-9]* different' | head -1)
      echo "jitter $jit seed $seed $fw: run ${r:-?}; stitch ${s:-?}"
      [ "$r" = "0 different" ] && [ "$s" = "0 different" ] || wrong=$((wrong + 1))
    done
    for fw in ft_plain exc_wfi_m3; do
      for n in 128 512 2048; do
        p=$("$S" frankentrace run -e "$B/$fw.elf" -m "$tmp/m" --probe -N $n --jobs 2 --verify \
          -o "$tmp/p.pct" 2>&1 | grep 'verify:')
        echo "jitter $jit seed $seed $fw --probe -N $n: $p"
        case $p in *"equal to the VM's ground truth"*) ;; *) wrong=$((wrong + 1)) ;; esac
      done
    done
  done
done
echo "nondet_sweep: $wrong wrong cases"
[ "$wrong" = 0 ]
