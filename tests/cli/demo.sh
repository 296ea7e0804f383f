#!/bin/sh
# The main job (`make demo`, scripts/demo) runs and tells the truth: the UART
# output of the demo firmware, and the profile `sonde top` builds from SWO PC
# samples alone agrees with the exact ground-truth shares (crc32, sort, sleep)
# within 2 percentage points; the tband section converts with no error; the
# FrankenTrace trace is verified; the MTB post-mortem names the culprit.
set -u
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
bash "$SONDE_SRC/scripts/demo" "$SONDE_BUILD" >"$t/out" 2>&1 && ok || { bad "scripts/demo failed"; cat "$t/out"; }
grep -q '^done after 18 SysTick interrupts$' "$t/out" && ok || bad "demo UART output"
# ground truth: "  <cycles> <share>% <instructions>  <function>" before the SWO section
truth() { sed -n '/^== where the/,/^== the same trace/p' "$t/out" | awk -v f="$1" '$4 == f { sub("%", "", $2); print $2 }'; }
swo() { sed -n '/through the SWO pin/,/^== event tracing/p' "$t/out" | awk -v f="$1" '$3 == f { sub("%", "", $1); print $1 }'; }
for f in crc32.constprop.0 sort.constprop.0; do
  a=$(truth "$f") b=$(swo "$f")
  [ -n "$a" ] && [ -n "$b" ] && awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; exit !(d < 2 && d > -2) }' && ok ||
    bad "$f: ground truth ${a:-?}% vs SWO samples ${b:-?}%"
done
a=$(truth "(sleep:WFI)") b=$(swo "[sleep]")
[ -n "$a" ] && [ -n "$b" ] && awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; exit !(d < 2 && d > -2) }' && ok ||
  bad "sleep: ground truth ${a:-?}% vs SWO samples ${b:-?}%"
grep -q 'SysTick  *18 ' "$t/out" && ok || bad "exception trace: 18 SysTick entries"
grep -q 'tband conv: .* 0 errors, 0 dropped' "$t/out" && ok || bad "tband conversion"
[ -s "$SONDE_BUILD/demo.perfetto-trace" ] && ok || bad "no demo.perfetto-trace"
# FrankenTrace: the stitched trace equals the ground truth on every cycle but cycle 0
grep -q "frankentrace run: .*: 514 runs of 361994 cycles" "$t/out" && ok || bad "frankentrace runs"
grep -q "ft_prog.elf: runner plan of 514 iterations" "$t/out" && ok || bad "frankentrace runner"
grep -q "verify: trace cycle 0 = ground-truth cycle 3897; 7190 compared, 7190 equal, 0 different" "$t/out" && ok || bad "frankentrace runner verify"
grep -q "verify: equal to the VM's ground truth on all 361993 compared cycles" "$t/out" && ok || bad "frankentrace verify"
# MTB post-mortem: the fault and its culprit
# (a wild function pointer: the branch that went there, in dispatch(), on the line of the call)
ln=$(grep -n -F 'callbacks[i]();' "$SONDE_SRC/firmware/mtb/mtb_fault.c" | cut -d: -f1)
grep -q "^fault: exception 3 (HardFault) at 0x1fff0000 (not in the firmware)" "$t/out" \
  && grep -q "^  jumped there from 0x[0-9a-f]* dispatch+0x[0-9a-f]* (.*mtb_fault.c:$ln) (packet #[0-9]*)" "$t/out" \
  && ok || bad "MTB post-mortem"
grep -q "Every cycle of the run is in the trace" "$t/out" && ok || bad "the demo did not run to its end"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
