#!/usr/bin/env bash
# Stitching DWT PC samples taken from the virtual Cortex-M (sonde_vm_pc_at_cycle,
# one fresh VM per phase) equals `sonde run --trace-pc` ground truth on every
# cycle (tests/frankentrace/test_ft_vm.c), for the demo firmware (SysTick, WFI
# sleep) and run_irq (nested and tail-chained interrupts), at several N; and
# the LSU order rebuilt from every pair of 64 KiB ranges equals --trace-lsu,
# each transfer aligned onto the execution holding its cycle
# (tests/frankentrace/test_ft_lsu_vm.c).
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rc=0
for fw in demo run_irq; do
  elf=$SONDE_BUILD/firmware/$fw.elf
  "$SONDE" run --trace-pc "$tmp/$fw.pct" --trace-lsu "$tmp/$fw.lsu" "$elf" >/dev/null 2>&1 ||
    { echo "FAIL: sonde run $fw"; rc=1; continue; }
  "$SONDE_BUILD/tests/test_ft_vm" "$elf" "$tmp/$fw.pct" 1 2 7 61 128 512 || rc=1
  "$SONDE_BUILD/tests/test_ft_lsu_vm" "$tmp/$fw.pct" "$tmp/$fw.lsu" "$elf" || rc=1
done
exit $rc
