#!/bin/bash
# The tracer on the virtual Cortex-M (firmware/tband.cmake): the bare-metal
# demo streamed over the UART, over ITM/SWO, and as a snapshot; the decoded traces must match
# what the firmware did (its own counts, traced as value markers 90/91) and
# what the VM saw (the number of exceptions it took).
set -u
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*" >&2; fail=$((fail + 1)); }
F="${SONDE_FIRMWARE_DIR:-$SONDE_BUILD/firmware}"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

check_demo() { # <name> <elf>
  local n=$1 elf=$2
  [ -f "$elf" ] || { bad "$n: firmware $elf not built"; return; }
  if [ "$n" = itm ]; then
    # ITM stimulus port 0 over the SWO pin: sonde itm decodes the packets, and
    # the port-0 payload bytes become hex text for sonde tband
    "$SONDE" run --machine cm3 --swo "$W/$n.swo" --json "$elf" 2>"$W/$n.stats" >/dev/null; rc=$?
    "$SONDE" itm --format csv "$W/$n.swo" |
      awk -F, '$3 == "sw" && $4 == 0 { for (i = 0; i < $5; i++) printf "%02x ", int($6 / 2^(8 * i)) % 256 }' >"$W/$n.bin"
    [ -s "$W/$n.bin" ] && ok || bad "itm: no port-0 payload in the SWO stream"
  else
    "$SONDE" run --machine cm3 --uart "$W/$n.bin" --json "$elf" 2>"$W/$n.stats" >/dev/null; rc=$?
  fi
  [ $rc -eq 0 ] && ok || bad "$n: sonde run exit $rc: $(cat "$W/$n.stats")"
  "$SONDE" tband dump --format json "$W/$n.bin" >"$W/$n.json" 2>"$W/$n.err" && ok || bad "$n: dump: $(cat "$W/$n.err")"
  local jobs isrs vm_exc
  jobs=$(grep '"valmarker_id":90,' "$W/$n.json" | sed 's/.*"val":\([0-9]*\).*/\1/')
  isrs=$(grep '"valmarker_id":91,' "$W/$n.json" | sed 's/.*"val":\([0-9]*\).*/\1/')
  vm_exc=$(sed -n 's/.*"exceptions": *\([0-9]*\).*/\1/p' "$W/$n.stats")
  [ "$jobs" = 40 ] && ok || bad "$n: jobs reported '$jobs'"
  [ "$(grep -c '"evt":"evtmarker_begin","ts":[0-9]*,"core":0,"evtmarker_id":1,"msg":"job"}' "$W/$n.json")" = "$jobs" ] && ok || bad "$n: begin count"
  [ "$(grep -c '"evt":"evtmarker_end"' "$W/$n.json")" = "$jobs" ] && ok || bad "$n: end count"
  [ "$(grep -c '"evt":"isr_enter","ts":[0-9]*,"core":0,"isr_id":15}' "$W/$n.json")" = "$isrs" ] && ok || bad "$n: isr_enter count != $isrs"
  [ "$(grep -c '"evt":"isr_exit"' "$W/$n.json")" = "$isrs" ] && ok || bad "$n: isr_exit count"
  [ "$isrs" = "$vm_exc" ] && [ "$isrs" -gt 5 ] && ok || bad "$n: firmware saw $isrs interrupts, the VM took $vm_exc exceptions"
  # value marker 1 counts 0..39 in order; enter/exit alternate; time never goes back
  grep '"evt":"valmarker",.*"valmarker_id":1,' "$W/$n.json" | sed 's/.*"val":\([0-9]*\).*/\1/' | awk '$1 != NR - 1 { exit 1 }' && ok || bad "$n: valmarker order"
  awk -F'"' '/isr_enter/ { if (inisr) exit 1; inisr = 1 } /isr_exit/ { if (!inisr) exit 1; inisr = 0 }' "$W/$n.json" && ok || bad "$n: ISR nesting"
  awk -F'"ts":' 'NF > 1 { split($2, a, ","); t = a[1] + 0; if (t < last) exit 1; last = t }' "$W/$n.json" && ok || bad "$n: time goes back"
  ! grep -q '"evt":"error"' "$W/$n.json" && ok || bad "$n: decode errors"
  "$SONDE" tband conv --mode bare-metal -o "$W/$n.perfetto-trace" "$W/$n.bin" 2>"$W/$n.conv" && grep -q " 0 errors" "$W/$n.conv" && ok || bad "$n: conv: $(cat "$W/$n.conv")"
}

check_demo stream "$F/tband_vm_stream.elf"
check_demo snapshot "$F/tband_vm_snapshot.elf"
check_demo basepri "$F/tband_vm_stream_basepri.elf"   # BASEPRI instead of PRIMASK critical sections
check_demo itm "$F/tband_vm_stream_itm.elf"           # ITM port 0 over SWO, DWT_CYCCNT timestamps
# the snapshot starts with the metadata buffer, then the buffer's core_id
sed -n 6p "$W/snapshot.json" | grep -q '"evt":"core_id"' && ok || bad "snapshot: core_id after the metadata"

# the fast path's timestamp window (Cortex-M port, 64 MHz): across counter
# wrap and window edges, a fast event (marker 1) and the generic one right
# after it (marker 2) are in order and a few microseconds apart
WF="$F/tband_vm_window.elf"
if [ -f "$WF" ]; then
  "$SONDE" run --machine cm4f --uart "$W/win.bin" "$WF" >/dev/null 2>&1 && ok || bad "window: run"
  "$SONDE" tband dump --format json "$W/win.bin" >"$W/win.json" 2>/dev/null && ok || bad "window: dump"
  awk -F'"ts":' 'NF > 1 { split($2, a, ","); t = a[1] + 0; if (t < last) exit 1; last = t }' "$W/win.json" && ok || bad "window: time goes back"
  awk '/"evtmarker_id":1,/ { match($0, /"ts":[0-9]+/); f = substr($0, RSTART + 5, RLENGTH - 5) + 0; n1++ }
       /"evtmarker_id":2,/ { match($0, /"ts":[0-9]+/); g = substr($0, RSTART + 5, RLENGTH - 5) + 0;
                             if (g < f || g - f > 20000) bad++; n2++ }
       END { exit !(n1 == 300 && n2 == 300 && bad == 0) }' "$W/win.json" && ok || bad "window: marker pairs out of step"
  grep -q '"valmarker_id":92,"val":1}' "$W/win.json" && ok || bad "window: the cycle counter did not wrap"
else
  bad "window firmware $WF not built"
fi

# the Cortex-M port's assembly fast path (snapshot, 64 MHz): the one-field
# events in every timestamp length, ids in and out of its range, messages,
# window edges, a full buffer; decoded by the host and checked against the
# generic encoder's announcements (tband_asmcheck.awk)
for v in "asmcheck 900 0" "asmcheck_every 750 7"; do
  set -- $v
  AF="$F/tband_vm_$1.elf"
  if [ -f "$AF" ]; then
    "$SONDE" run --machine cm4f --uart "$W/$1.bin" "$AF" >/dev/null 2>&1 && ok || bad "$1: run"
    "$SONDE" tband dump --format json "$W/$1.bin" >"$W/$1.json" 2>"$W/$1.err" && [ ! -s "$W/$1.err" ] && ok || bad "$1: dump: $(head -3 "$W/$1.err")"
    awk -v nwant="$2" -v every="$3" -f "$(dirname "$0")/tband_asmcheck.awk" "$W/$1.json" >"$W/$1.chk" && ok || bad "$1: $(head -5 "$W/$1.chk")"
    tail -1 "$W/$1.json" | grep -q '"evt":"isr_enter".*"isr_id":7}' && ok || bad "$1: the full buffer does not end with a whole frame"
    if command -v arm-none-eabi-nm >/dev/null 2>&1; then
      arm-none-eabi-nm "$AF" | grep -q ' T tband_c_evtmarker$' && ok || bad "$1: built without the assembly path"
    fi
  else
    bad "$1: firmware $AF not built"
  fi
done
# the same streamed over ITM port 0 (the assembly writes the stimulus port);
# at the end three events with the port off: dropped, then counted
AF="$F/tband_vm_asmcheck_itm.elf"
if [ -f "$AF" ]; then
  "$SONDE" run --machine cm4f --swo "$W/ai.swo" "$AF" >/dev/null 2>&1 && ok || bad "asmcheck_itm: run"
  "$SONDE" itm --format csv "$W/ai.swo" |
    awk -F, '$3 == "sw" && $4 == 0 { for (i = 0; i < $5; i++) printf "%02x ", int($6 / 2^(8 * i)) % 256 }' >"$W/ai.hex"
  "$SONDE" tband dump --format json "$W/ai.hex" >"$W/ai.json" 2>"$W/ai.err" && [ ! -s "$W/ai.err" ] && ok ||
    bad "asmcheck_itm: dump: $(head -3 "$W/ai.err")"
  awk -v nwant=900 -f "$(dirname "$0")/tband_asmcheck.awk" "$W/ai.json" >"$W/ai.chk" && ok || bad "asmcheck_itm: $(head -5 "$W/ai.chk")"
  tail -3 "$W/ai.json" | sed 's/"ts":[0-9]*,//' | tr '\n' ' ' >"$W/ai.tail"
  grep -q '"isr_enter","core":0,"isr_id":7} {"evt":"isr_exit","core":0,"isr_id":7} {"evt":"dropped_evt_cnt","core":0,"cnt":3}' "$W/ai.tail" &&
    ok || bad "asmcheck_itm: the events with ITM off are not dropped and counted: $(cat "$W/ai.tail")"
else
  bad "asmcheck_itm: firmware $AF not built"
fi

# post-mortem: the ring survives a HardFault and a system reset; after the
# reboot the firmware dumps it: the newest events before the fault, the fault,
# then pm_boot(1)
P="$F/tband_vm_postmortem.elf"
if [ -f "$P" ]; then
  "$SONDE" run --machine cm3 --uart "$W/pm.bin" --json "$P" 2>"$W/pm.stats" >/dev/null && ok || bad "pm: run"
  grep -q '"exceptions": *1' "$W/pm.stats" && ok || bad "pm: expected exactly one exception (the fault): $(cat "$W/pm.stats")"
  "$SONDE" tband dump --format json "$W/pm.bin" >"$W/pm.json" 2>"$W/pm.err" && ok || bad "pm: dump: $(cat "$W/pm.err")"
  tail -6 "$W/pm.json" | sed 's/"ts":[0-9]*,//' >"$W/pm.tail"
  printf '%s\n' '{"evt":"valmarker","core":0,"valmarker_id":1,"val":99}' \
    '{"evt":"evtmarker","core":0,"evtmarker_id":1,"msg":"crash now"}' \
    '{"evt":"evtmarker","core":0,"evtmarker_id":2,"msg":"hardfault"}' \
    '{"evt":"pm_boot","core":0,"boot_cnt":1}' \
    '{"evt":"ts_resolution_ns","core":0,"ns_per_ts":1}' \
    '{"evt":"valmarker","core":0,"valmarker_id":2,"val":1}' >"$W/pm.want"
  cmp -s "$W/pm.tail" "$W/pm.want" && ok || bad "pm: tail differs: $(diff "$W/pm.want" "$W/pm.tail")"
  # the ring kept a consecutive run of the newest value markers, ending at 99
  grep '"evt":"valmarker","ts":[0-9]*,"core":0,"valmarker_id":1,' "$W/pm.json" | sed 's/.*"val":\([0-9]*\).*/\1/' >"$W/pm.vals"
  first=$(head -1 "$W/pm.vals")
  awk -v f="$first" '$1 != f + NR - 1 { exit 1 }' "$W/pm.vals" && [ "$(tail -1 "$W/pm.vals")" = 99 ] && [ "$first" -gt 0 ] && ok || bad "pm: value run"
  "$SONDE" tband conv --mode bare-metal -o "$W/pm.perfetto-trace" "$W/pm.bin" 2>"$W/pm.conv" && grep -q " 1 errors" "$W/pm.conv" && ok || bad "pm: conv (the reset is one error instant): $(cat "$W/pm.conv")"
else
  bad "pm: firmware $P not built"
fi

# FreeRTOS (ARM_CM3 port) on the VM, when built from FREERTOS_KERNEL
R="$F/tband_vm_freertos.elf"
if [ -f "$R" ]; then
  "$SONDE" run --machine cm3 --uart "$W/fr.bin" --json "$R" 2>"$W/fr.stats" >/dev/null && ok || bad "freertos: run: $(cat "$W/fr.stats")"
  "$SONDE" tband dump --format json "$W/fr.bin" >"$W/fr.json" 2>"$W/fr.err" && ok || bad "freertos: dump: $(cat "$W/fr.err")"
  c() { grep -c "$1" "$W/fr.json"; }
  [ "$(c '"evt":"queue_send","ts":[0-9]*,"core":0,"queue_id":1,')" = 30 ] && ok || bad "freertos: 30 sends on the queue"
  [ "$(c '"evt":"queue_receive","ts":[0-9]*,"core":0,"queue_id":1,')" = 30 ] && ok || bad "freertos: 30 receives"
  [ "$(c '"evt":"queue_kind","core":0,"queue_id":2,"kind":3}')" = 1 ] && ok || bad "freertos: mutex kind"
  [ "$(c '"evt":"queue_receive","ts":[0-9]*,"core":0,"queue_id":2,')" = 16 ] && ok || bad "freertos: 16 mutex takes"
  [ "$(c '"evt":"queue_send","ts":[0-9]*,"core":0,"queue_id":2,')" = 17 ] && ok || bad "freertos: 1 + 16 mutex gives"
  [ "$(c '"evt":"task_evtmarker_begin"')" = 16 ] && ok || bad "freertos: task markers"
  for t in producer consumer workerA workerB control IDLE "Tmr Svc"; do
    grep -q "\"evt\":\"task_name\".*\"name\":\"$t\"" "$W/fr.json" && ok || bad "freertos: task $t"
  done
  [ "$(c '"evt":"task_is_idle_task"')" = 1 ] && ok || bad "freertos: idle task"
  [ "$(c '"evt":"task_deleted"')" = 4 ] && ok || bad "freertos: 4 deletions"
  ! grep -q '"evt":"error"' "$W/fr.json" && ok || bad "freertos: decode errors"
  "$SONDE" tband conv --mode freertos --json -o "$W/fr.perfetto-trace" "$W/fr.bin" 2>"$W/fr.conv" && ok || bad "freertos: conv"
  grep -q '"errors":0' "$W/fr.conv" && ok || bad "freertos: conv errors: $(cat "$W/fr.conv")"
  sw=$(sed 's/.*"task_switches":\([0-9]*\).*/\1/' "$W/fr.conv")
  [ "$sw" = "$(c '"evt":"task_switched_in"')" ] && [ "$sw" -gt 20 ] && ok || bad "freertos: switches $sw"
else
  echo "*** SKIPPED: FreeRTOS on the VM was NOT tested (configure with -DFREERTOS_KERNEL=/path/to/FreeRTOS-Kernel) ***"
fi

# The fast path (target/tband/tband_fast.h) as compiled for the Cortex-M4:
# the benchmark streams 400 markers, value markers and ISR enters each, half at
# start-up (timestamps below 2^28 ns) and half as after 67 s of uptime
# (cached high timestamp bytes); the host decoder must read every frame, in
# time order, with the right fields.
b="$F/tband_vm_bench_stream.elf"
if [ -f "$b" ]; then
  "$SONDE" run --machine cm4f --uart "$W/bench.bin" "$b" >/dev/null 2>&1 && ok || bad "bench: sonde run failed"
  "$SONDE" tband dump --format json "$W/bench.bin" >"$W/bench.json" 2>"$W/bench.err" && ok || bad "bench: dump: $(cat "$W/bench.err")"
  [ "$(grep -c '"evt":"evtmarker","ts":[0-9]*,"core":0,"evtmarker_id":1,"msg":""}' "$W/bench.json")" = 400 ] && ok || bad "bench: marker count"
  [ "$(grep -c '"evt":"valmarker","ts":[0-9]*,"core":0,"valmarker_id":2,"val":12345}' "$W/bench.json")" = 400 ] && ok || bad "bench: value marker count"
  [ "$(grep -c '"evt":"isr_enter","ts":[0-9]*,"core":0,"isr_id":3}' "$W/bench.json")" = 400 ] && ok || bad "bench: isr_enter count"
  [ "$(grep -c '"error"' "$W/bench.json")" = 0 ] && ok || bad "bench: decode errors"
  # the second round is past 2^32 cycles = 67,108,864,000 ns
  [ "$(grep '"ts":' "$W/bench.json" | sed 's/.*"ts":\([0-9]*\).*/\1/' | awk '$1 >= 67108864000' | wc -l)" -ge 600 ] && ok || bad "bench: uptime timestamps"
  grep '"ts":' "$W/bench.json" | sed 's/.*"ts":\([0-9]*\).*/\1/' | awk 'NR > 1 && $1 < p { exit 1 } { p = $1 }' && ok || bad "bench: time went back"
else
  bad "bench firmware $b not built"
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
