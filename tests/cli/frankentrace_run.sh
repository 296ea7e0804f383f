#!/usr/bin/env bash
# `sonde frankentrace run --probe` on the VM: unmodified firmware traced by DWT
# PC sampling over the SWO pin, N runs stitched; the result must equal the
# ground truth of `sonde run --trace-pc` (a separate run, a separate path:
# the retire hook and the span rules of `sonde run`) on every cycle after
# cycle 0, through `sonde frankentrace verify`; the same bytes for every
# --jobs; and clear errors for plans that cannot work.
set -u
fw=$SONDE_BUILD/firmware
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# <elf> <machine> <N> [baud]: trace at --jobs 1 and 2, verify both ways
trace() {
  local elf=$1 m=$2 n=$3 baud=${4:-} name
  name=$(basename "$elf" .elf)-$n
  "$SONDE" run -m "$m" --trace-pc "$tmp/$name.gt.pct" "$fw/$elf" >/dev/null 2>&1
  for j in 1 2; do
    "$SONDE" frankentrace run -e "$fw/$elf" -m "$m" --probe -N "$n" ${baud:+--baud $baud} \
      --jobs $j --verify --json -o "$tmp/$name.j$j.pct" 2>"$tmp/$name.j$j.json"
    local rc=$?
    [ $rc -eq 0 ] && ok || bad "$name --jobs $j: exit $rc: $(cat "$tmp/$name.j$j.json")"
  done
  cmp -s "$tmp/$name.j1.pct" "$tmp/$name.j2.pct" && ok || bad "$name: --jobs 1 and 2 differ"
  "$SONDE" frankentrace verify "$tmp/$name.j2.pct" "$tmp/$name.gt.pct" >"$tmp/$name.v" 2>&1 \
    && ok || bad "$name: verify against sonde run --trace-pc: $(cat "$tmp/$name.v")"
  grep -q " 0 different; 1 unrecoverable in the trace; 0 ground-truth cycles outside the trace; 0 trace cycles outside" "$tmp/$name.v" \
    && ok || bad "$name: $(cat "$tmp/$name.v")"
  python3 - "$tmp/$name.j2.json" "$n" <<'PY' && ok || bad "$name: json: $(cat "$tmp/$name.j2.json")"
import json, sys
d = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
n = int(sys.argv[2])
assert d["ok"] and d["n"] == n and d["runs"] == n + 2, d
assert d["lost"] == 0 and d["overflows"] == 0 and d["bad_runs"] == 0 and d["conflicts"] == 0, d
assert d["verify"]["different"] == 0 and d["verify"]["equal"] == d["cycles"] - 1, d
assert d["pc"] + d["sleep"] == d["cycles"] - 1, d
PY
  echo "$name: $(tail -1 "$tmp/$name.j2.json")"
}

trace demo.elf cm3 128              # UART, timer interrupts, WFI sleep
trace demo.elf cm3 512 8000000      # the paper's 8 Mbaud row (at 48 MHz)
trace exc_nesting_m3.elf cm3 192    # nested interrupts, preemption, tail-chaining
trace exc_wfi_m3.elf cm3 2048       # sleep and wake-up, CYCTAP = 1
trace exc_svc_pendsv_m3.elf cm3 1024 4800000  # SVC, PendSV; a slow line (ACPR 9)
trace exc_systick_m3.elf cm3 256 24000000    # SysTick; the paper's 24 Mbaud line (ACPR 1)
trace exc_nesting_m3.elf cm3 3072 2000000    # N 3072 (CYCTAP = 1) on a 2 Mbaud line
trace exc_wfi_m3.elf cm3 5120 1000000        # the paper's 1 Mbaud row, N 5120
trace ft_plain.elf cm3 128                   # ft_prog without its runner: calls through function
trace ft_plain.elf cm3 512 8000000           # pointers, a busy-wait on the delay peripheral, SysTick, WFI

# compiled (--jit) and interpreted (the default) give the same bytes
"$SONDE" frankentrace run -e "$fw/exc_nesting_m3.elf" --probe -N 192 --jit -o "$tmp/jit.pct" 2>/dev/null \
  && cmp -s "$tmp/jit.pct" "$tmp/exc_nesting_m3-192.j1.pct" && ok || bad "--jit: another trace"
"$SONDE" frankentrace run -e "$fw/demo.elf" --probe --jit --no-jit -o "$tmp/x" 2>/dev/null; [ $? -eq 2 ] && ok || bad "--jit --no-jit"

# Plans that cannot work: say why, name what would
"$SONDE" frankentrace run -e "$fw/demo.elf" --probe -N 64 -o "$tmp/x" 2>"$tmp/e"; rc=$?
[ $rc -eq 1 ] && grep -q "N = 64 is too small for SWO at 48000000 baud.*the smallest N that works is 128" "$tmp/e" \
  && ok || bad "N too small: exit $rc: $(cat "$tmp/e")"
"$SONDE" frankentrace run -e "$fw/demo.elf" --probe -N 100 -o "$tmp/x" 2>"$tmp/e"; rc=$?
[ $rc -eq 2 ] && grep -q "64, 128, ..., 1024" "$tmp/e" && ok || bad "N=100: exit $rc: $(cat "$tmp/e")"
"$SONDE" frankentrace run -e "$fw/demo.elf" --probe --baud 7000000 -o "$tmp/x" 2>"$tmp/e"; rc=$?
[ $rc -eq 1 ] && grep -q "divides the 48000000 Hz clock by an integer" "$tmp/e" && ok || bad "baud: exit $rc: $(cat "$tmp/e")"
"$SONDE" frankentrace run -e "$fw/demo.elf" --probe --baud 100000 -o "$tmp/x" 2>"$tmp/e"; rc=$?
[ $rc -eq 1 ] && grep -q "too slow" "$tmp/e" && ok || bad "slow line: exit $rc: $(cat "$tmp/e")"
"$SONDE" frankentrace run -e "$fw/run_forever.elf" --probe -N 1024 --max-cycles 100000 -o "$tmp/x" 2>"$tmp/e"; rc=$?
[ $rc -eq 1 ] && grep -q "did not end by exiting" "$tmp/e" && ok || bad "no exit: exit $rc: $(cat "$tmp/e")"
"$SONDE" frankentrace run -e /dev/null --probe -o "$tmp/x" 2>"$tmp/e"; rc=$?
[ $rc -eq 1 ] && grep -q "is not an ELF file" "$tmp/e" && ok || bad "not an ELF: exit $rc: $(cat "$tmp/e")"
"$SONDE" frankentrace run -e "$fw/demo.elf" -o "$tmp/x" 2>"$tmp/e"; rc=$?
[ $rc -eq 2 ] && grep -q "is not a FrankenTrace runner image (no ft_preamble): give --probe" "$tmp/e" && ok || bad "no --probe: exit $rc: $(cat "$tmp/e")"
"$SONDE" frankentrace run -e "$fw/demo.elf" --probe 2>"$tmp/e"; [ $? -eq 2 ] && ok || bad "no -o"
# other formats from the same run
"$SONDE" frankentrace run -e "$fw/exc_nesting_m3.elf" --probe -N 192 --format csv -o "$tmp/n.csv" 2>/dev/null \
  && head -1 "$tmp/n.csv" | grep -q "^ts,val,valid,label,short_instr" && ok || bad "csv output"
"$SONDE" frankentrace run -e "$fw/exc_nesting_m3.elf" --probe -N 192 --format perfetto -o "$tmp/n.pftrace" 2>/dev/null \
  && [ -s "$tmp/n.pftrace" ] && ok || bad "perfetto output"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
