#!/usr/bin/env bash
# LSU tracing with FrankenTrace on the VM (docs/benchmarks.md, "FrankenTrace LSU traces"):
# the runner image ft_lsu_bench (2000 rounds of ft_lsu.c: 68,099 transfers in flash, SRAM and
# GPIO, 139 iterations of which 9 are LSU) at --jobs 1 and 2, with and without the LSU trace
# (--lsu-out) and with its verification against `sonde run --trace-lsu`; and the noninvasive
# probe mode on demo.elf (4 ranges, 12 runs). Modes alternate, ROUNDS times; medians.
# usage: SONDE=build/src/cli/sonde SONDE_BUILD=build bench/frankentrace_lsu_bench.sh [ROUNDS]
set -u
S=${SONDE:-build/src/cli/sonde}
F=${SONDE_BUILD:-build}/firmware
R=${1:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
now() { date +%s.%N; }
declare -A T
time_it() { # <name> <command...>
  local n=$1
  shift
  local t0 t1
  t0=$(now)
  "$@" >/dev/null 2>&1
  t1=$(now)
  T[$n]="${T[$n]:-} $(echo "$t1 - $t0" | bc)"
}
median() { echo "$1" | tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }

"$S" run --trace-pc "$tmp/gt.pct" --trace-lsu "$tmp/gt.csv" "$F/ft_lsu_bench.elf" >/dev/null 2>&1
"$S" run --trace-lsu "$tmp/demo.csv" "$F/demo.elf" >/dev/null 2>&1
for ((i = 0; i < R; i++)); do
  for j in 1 2; do
    time_it "runner J=$j, PC trace only" "$S" frankentrace run -e "$F/ft_lsu_bench.elf" --jobs $j -o "$tmp/t.pct"
    time_it "runner J=$j, --lsu-out" "$S" frankentrace run -e "$F/ft_lsu_bench.elf" --jobs $j \
      --lsu-out "$tmp/l.csv" -o "$tmp/t.pct"
    time_it "runner J=$j, --lsu-out --truth --lsu-truth" "$S" frankentrace run -e "$F/ft_lsu_bench.elf" \
      --jobs $j --lsu-out "$tmp/l.csv" --truth "$tmp/gt.pct" --lsu-truth "$tmp/gt.csv" -o "$tmp/t.pct"
    time_it "probe demo J=$j, PC trace only" "$S" frankentrace run -e "$F/demo.elf" --probe --jobs $j \
      -o "$tmp/d.pct"
    time_it "probe demo J=$j, --lsu 4 ranges" "$S" frankentrace run -e "$F/demo.elf" --probe --jobs $j \
      --lsu 0x0000,0x2000,0x2001,0x400f --lsu-out "$tmp/d.csv" --lsu-truth "$tmp/demo.csv" -o "$tmp/d.pct"
  done
  time_it "plain sonde run --trace-lsu ft_lsu_bench (chained, whole plan)" "$S" run \
    --trace-lsu "$tmp/x.csv" "$F/ft_lsu_bench.elf"
done
for k in "${!T[@]}"; do printf '%-64s %8.3f s\n' "$k" "$(median "${T[$k]}")"; done | sort
