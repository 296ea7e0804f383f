#!/usr/bin/env bash
# The same firmware on QEMU and on the VM must execute the same instruction
# address sequence (issue 2, "Verification"); boards mps2-an385 (M3), mps2-an386
# (M4F) and microbit (M0: ARMv6-M, as the M0+). QEMU runs one instruction per
# translation block (-singlestep) without chaining and logs every executed
# block (-d exec,nochain), so each "Trace" line is one instruction; -icount
# shift=0 makes it deterministic. The VM's sequence is the instruction records
# of its binary PC trace (docs/formats.md). Semihosting output must match too.
# usage: qemu_compare.sh <sonde> <firmware.elf> <qemu-board> <vm-machine>
set -u
sonde=$1 elf=$2 board=$3 machine=$4
command -v qemu-system-arm >/dev/null || { echo "FAIL: qemu-system-arm not installed (scripts/install-deps)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
timeout 60 qemu-system-arm -M "$board" -nographic -monitor none -serial none \
  -semihosting-config enable=on,target=native -icount shift=0 -singlestep \
  -d exec,nochain -D "$tmp/qemu.log" -kernel "$elf" >"$tmp/qemu.out" 2>&1
qrc=$?
# "Trace 0: 0x7f.. [00800400/000000f4/00000110/ff020201] sym": the 2nd field is the PC.
# With -icount, an I/O access not at the end of a block makes QEMU re-execute
# the block ("cpu_io_recompile: rewound execution of TB"): the first, rewound
# execution did not complete, so its line is dropped; so is a block logged and
# then not run ("Stopped execution of TB chain before", an exit request).
awk '/^Trace/ { if (have) print last; split($4, f, "/"); s = tolower(f[2])
                while (length(s) < 8) s = "0" s; last = s; have = 1; next }
     /cpu_io_recompile: rewound|Stopped execution of TB chain before/ { have = 0 }
     END { if (have) print last }' "$tmp/qemu.log" >"$tmp/qemu.pc"
"$sonde" run --machine "$machine" --trace-pc "$tmp/vm.pct" "$elf" >"$tmp/vm.out" 2>"$tmp/vm.err"
vrc=$?
od -An -v -tx4 -w8 -j32 "$tmp/vm.pct" | awk '$1 ~ /[02468ace]$/ { print $1 }' >"$tmp/vm.pc"
pass=0 fail=0
check() { if [ "$1" = ok ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2"; fi; }
[ $qrc -eq $vrc ] && check ok || check bad "exit status: qemu $qrc, vm $vrc ($(head -c 300 "$tmp/vm.err"))"
cmp -s "$tmp/qemu.out" "$tmp/vm.out" && check ok || check bad "semihosting output differs: $(diff "$tmp/qemu.out" "$tmp/vm.out" | head -5)"
nq=$(wc -l <"$tmp/qemu.pc") nv=$(wc -l <"$tmp/vm.pc")
# Two empty sequences are equal but prove nothing: both sides must have run.
[ "$nq" -gt 0 ] && check ok || check bad "QEMU logged no instruction ($(head -c 300 "$tmp/qemu.out"))"
[ "$nv" -gt 0 ] && check ok || check bad "the VM's PC trace holds no instruction"
if [ "$nq" -gt 0 ] && [ "$nv" -gt 0 ] && cmp -s "$tmp/qemu.pc" "$tmp/vm.pc"; then
  check ok
  echo "identical instruction sequences: $nq instructions"
else
  first=$(cmp "$tmp/qemu.pc" "$tmp/vm.pc" 2>&1 | sed -n 's/.*line \([0-9]*\).*/\1/p')
  check bad "instruction sequences differ (qemu $nq, vm $nv instructions), first at instruction ${first:-?}"
  if [ -n "$first" ]; then
    lo=$((first > 5 ? first - 5 : 1))
    paste "$tmp/qemu.pc" "$tmp/vm.pc" | sed -n "${lo},$((first + 3))p" | sed 's/^/  qemu vm: /'
  fi
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
