#!/usr/bin/env bash
# LSU (data-transfer) traces with FrankenTrace on the VM, checked against
# `sonde run --trace-lsu` (the VM's transfer hook, a separate run).
# Runner mode: runner images with the LSU plan (firmware/ft/ft_lsu.c: flash,
# SRAM and GPIO ranges, pended interrupts, a BASEPRI critical section;
# ft_irq.c built with FT_LSU: nesting, tail-chaining, SVC/PendSV): every
# transfer of the traced ranges in the ground truth's iteration 0 window, in
# order, with its cycle, PC, address, size, value and direction, at --jobs 1
# (one VM through every SYSRESETREQ) and 2 (preloaded VMs), same bytes; the
# comparison is made here by python, independently of --lsu-truth. PRIMASK
# sections (ft_lsu_primask) overflow the ITM: reported, exit 1. Bad ranges
# and images without the LSU plan: clear errors.
set -u
F=$SONDE_BUILD/firmware
S=$SONDE
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check() { if [ "$2" = "$3" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1: '$2' != '$3'"; fi; }

# The ground truth's rows inside [off, off+len) in the ranges, cycles shifted by -off,
# against the LSU trace: prints "equal N" or the first difference.
cat >"$tmp/cmp.py" <<'EOF'
import sys
gt, lsu, off, length, ranges = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
rs = {int(r, 16) for r in ranges.split(',')}
def rows(path):
    with open(path) as f:
        assert f.readline().strip() == 'cycle,pc,addr,size,value,rw'
        for line in f:
            yield line.strip().split(',')
want = []
for c, pc, a, sz, v, rw in rows(gt):
    c = int(c)
    if off <= c < off + length and int(a, 16) >> 16 in rs and rw in 'rw':
        want.append((c - off, int(pc, 16), int(a, 16), int(sz), int(v, 16), rw))
got = [(int(c), int(pc, 16), int(a, 16), int(sz), int(v, 16), rw) for c, pc, a, sz, v, rw in rows(lsu)]
for i, (g, w) in enumerate(zip(got, want)):
    if g != w:
        print('differ at', i, g, w); sys.exit(0)
print('equal', len(got)) if len(got) == len(want) else print('count', len(got), len(want))
EOF

# <fw> <ranges> <transfers>
lsu_runner() {
  local fw=$1 ranges=$2 n=$3
  "$S" run --trace-pc "$tmp/$fw.gt.pct" --trace-lsu "$tmp/$fw.gt.csv" "$F/$fw.elf" >/dev/null 2>&1
  for j in 1 2; do
    "$S" frankentrace run -e "$F/$fw.elf" --jobs $j --lsu "$ranges" --lsu-out "$tmp/$fw.$j.csv" \
      --truth "$tmp/$fw.gt.pct" --lsu-truth "$tmp/$fw.gt.csv" -o "$tmp/$fw.$j.pct" 2>"$tmp/$fw.$j.err"
    check "$fw J=$j rc" $? 0
    check "$fw J=$j lsu-truth" "$(grep -c "lsu truth .*: equal on all $n transfers" "$tmp/$fw.$j.err")" 1
    check "$fw J=$j placed" "$(grep -c "$n transfers ordered, 0 not placed" "$tmp/$fw.$j.err")" 1
    local off len
    off=$(sed -n 's/.*trace cycle 0 = ground-truth cycle \([0-9]*\);.*/\1/p' "$tmp/$fw.$j.err")
    len=$(sed -n 's/.*; \([0-9]*\) compared, .*/\1/p' "$tmp/$fw.$j.err")
    check "$fw J=$j == --trace-lsu (python)" \
      "$(python3 "$tmp/cmp.py" "$tmp/$fw.gt.csv" "$tmp/$fw.$j.csv" "$off" "$len" "$ranges")" "equal $n"
  done
  cmp -s "$tmp/$fw.1.csv" "$tmp/$fw.2.csv"; check "$fw LSU J=1 and J=2 same bytes" $? 0
}
lsu_runner ft_lsu 0x0000,0x2000,0x400f 268   # three ranges: three pairs combined
lsu_runner ft_lsu_irq 0x0000,0x2000 117      # one pair, nested and tail-chained handlers
lsu_runner ft_lsu_one 0x400f 31               # one range alone (3 iterations)

# PRIMASK: DebugMonitor cannot preempt, the ITM overflows: said, exit 1
"$S" frankentrace run -e "$F/ft_lsu_primask.elf" --lsu-out "$tmp/p.csv" -o "$tmp/p.pct" 2>"$tmp/p.err"
check "primask rc" $? 1
check "primask overflow said" "$(grep -c "ITM overflow .*PRIMASK.*ft_critical_enter" "$tmp/p.err")" 1

# errors
"$S" frankentrace run -e "$F/ft_prog.elf" --lsu-out "$tmp/x.csv" -o "$tmp/x.pct" 2>"$tmp/e1"
check "no LSU plan rc" $? 1
check "no LSU plan said" "$(grep -c "ran no LSU iterations: its runner plan has none" "$tmp/e1")" 1
"$S" frankentrace run -e "$F/ft_lsu.elf" --lsu 0x2000,0x4000 -o "$tmp/x.pct" 2>"$tmp/e2"
check "other ranges rc" $? 1
check "other ranges said" "$(grep -c "the image's plan traces 0x0000,0x2000,0x400f" "$tmp/e2")" 1
"$S" frankentrace run -e "$F/ft_lsu.elf" --lsu 0x2000,zz -o "$tmp/x.pct" 2>"$tmp/e3"
check "bad range rc" $? 2
check "bad range said" "$(grep -c "'zz' is neither a number" "$tmp/e3")" 1
"$S" frankentrace run -e "$F/ft_lsu.elf" --lsu 0x2000,0x20001000 -o "$tmp/x.pct" 2>"$tmp/e4"
check "twice rc" $? 2
check "twice said" "$(grep -c "range 0x2000 is listed twice" "$tmp/e4")" 1
"$S" frankentrace run -e "$F/ft_lsu.elf" --lsu 0xe000e100 -o "$tmp/x.pct" 2>"$tmp/e5"
check "ppb rc" $? 2
check "ppb said" "$(grep -c "private peripheral bus" "$tmp/e5")" 1
# a range may be given by a symbol (the SRAM range of 'ring') and addresses
"$S" frankentrace run -e "$F/ft_lsu.elf" --lsu 0,ring,0x400f1000 -o "$tmp/x.pct" 2>"$tmp/e6"
check "symbol range rc" $? 0

# `sonde frankentrace stitch` on the capture a chained VM writes with --swo (as
# from silicon): the same LSU trace as `run`, equal to --trace-lsu of that run.
"$S" run --swo "$tmp/cap.swo" --trace-pc "$tmp/cap.pct" --trace-lsu "$tmp/cap.csv" "$F/ft_lsu.elf" \
  >/dev/null 2>&1
"$S" frankentrace stitch -e "$F/ft_lsu.elf" "$tmp/cap.swo" --verify "$tmp/cap.pct" --lsu-out "$tmp/st.csv" \
  --lsu-truth "$tmp/cap.csv" -o "$tmp/st.pct" >"$tmp/st.out" 2>&1
check "stitch rc" $? 0
check "stitch lsu-truth" "$(grep -c "lsu truth .*: equal on all 268 transfers" "$tmp/st.out")" 1
cmp -s "$tmp/st.csv" "$tmp/ft_lsu.1.csv"; check "stitch LSU == run LSU" $? 0
# cut inside the LSU iterations: the missing kind is said, exit 1
head -c 30500 "$tmp/cap.swo" >"$tmp/cut.swo"
"$S" frankentrace stitch -e "$F/ft_lsu.elf" "$tmp/cut.swo" --lsu-out "$tmp/cut.csv" -o "$tmp/cut.pct" \
  >"$tmp/cut.out" 2>&1
check "stitch cut rc" $? 1
check "stitch cut said" "$(grep -c "no sound iteration with .* packets (lost or corrupt)" "$tmp/cut.out")" 1
check "stitch cut spoiled" "$(grep -c "LSU iterations spoiled on the wire" "$tmp/cut.out")" 1

# Probe mode, noninvasive, on an unmodified image (firmware/ft/ft_sparse.c): no
# DebugMonitor, so what the ITM cannot take is lost. At the core clock's baud the
# GPIO range loses nothing: equal to --trace-lsu (cycles are the VM's own). At
# 4 Mbaud, and for SRAM (the start-up code's loops) even at full speed, gaps:
# marked, counted, exit 1; every transfer written is in the ground truth, every
# one missing lies in a gap of its range.
cat >"$tmp/sub.py" <<'EOF'
import sys
gt, lsu, ranges = sys.argv[1], sys.argv[2], {int(r, 16) for r in sys.argv[3].split(',')}
def rows(path):
    with open(path) as f:
        f.readline()
        for line in f:
            yield line.strip().split(',')
want = [(int(c), int(pc, 16), int(a, 16), int(sz), int(v, 16), rw) for c, pc, a, sz, v, rw in rows(gt)
        if int(a, 16) >> 16 in ranges and rw in 'rw']
got, gaps = [], []
for c, pc, a, sz, v, rw in rows(lsu):
    if rw == 'gap':
        gaps.append((int(a, 16) >> 16, int(c), int(c) + int(v, 16)))
    else:
        got.append((int(c), int(pc, 16), int(a, 16), int(sz), int(v, 16), rw))
j = 0
for t in want:
    if j < len(got) and got[j] == t:
        j += 1
    elif not any(r == t[2] >> 16 and lo <= t[0] < hi for r, lo, hi in gaps):
        print('missing outside any gap', t); sys.exit(0)
print('ok' if j == len(got) else 'extra', len(got), len(gaps) > 0)
EOF
"$S" run --trace-lsu "$tmp/sp.gt.csv" "$F/ft_sparse.elf" >/dev/null 2>&1
for j in 1 2; do
  "$S" frankentrace run -e "$F/ft_sparse.elf" --probe --jobs $j --lsu 0x400f --lsu-out "$tmp/sp.$j.csv" \
    --lsu-truth "$tmp/sp.gt.csv" -o "$tmp/sp.pct" 2>"$tmp/sp.$j.err"
  check "probe J=$j rc" $? 0
  check "probe J=$j no gaps" "$(grep -c "74 transfers, 0 gaps (0 overflow packets" "$tmp/sp.$j.err")" 1
  check "probe J=$j lsu-truth" "$(grep -c "lsu truth .*: equal on all 74 transfers" "$tmp/sp.$j.err")" 1
  check "probe J=$j == --trace-lsu (python)" \
    "$(python3 "$tmp/cmp.py" "$tmp/sp.gt.csv" "$tmp/sp.$j.csv" 0 100000000 0x400f)" "equal 74"
done
cmp -s "$tmp/sp.1.csv" "$tmp/sp.2.csv"; check "probe J=1 and J=2 same bytes" $? 0
# <baud> <ranges>: gaps said, counted, exit 1; the output a subsequence of the truth
gaps() {
  "$S" frankentrace run -e "$F/ft_sparse.elf" --probe --baud $1 --lsu $2 --lsu-out "$tmp/g.csv" \
    --lsu-truth "$tmp/sp.gt.csv" -o "$tmp/g.pct" 2>"$tmp/g.err"
  check "gaps $1 $2 rc" $? 1
  check "gaps $1 $2 said" "$(grep -c "lsu: GAPS: the ITM overflowed" "$tmp/g.err")" 1
  check "gaps $1 $2 counted" "$(grep -c "transfers, [1-9][0-9]* gaps" "$tmp/g.err")" 1
  check "gaps $1 $2 truth" "$(grep -c "lie in the [1-9][0-9]* gaps" "$tmp/g.err")" 1
  check "gaps $1 $2 subsequence (python)" \
    "$(python3 "$tmp/sub.py" "$tmp/sp.gt.csv" "$tmp/g.csv" $2 | cut -d' ' -f1,3)" "ok True"
}
gaps 4000000 0x400f
gaps 48000000 0x2000,0x400f
"$S" frankentrace run -e "$F/ft_sparse.elf" --probe --lsu-out "$tmp/x.csv" -o "$tmp/x.pct" 2>"$tmp/e7"
check "probe without ranges rc" $? 2
check "probe without ranges said" "$(grep -c "lsu RANGES is needed" "$tmp/e7")" 1

# an ARMv6-M machine has no DWT data trace: said before any run
"$S" frankentrace run -m cm0plus -e "$F/run_exit_m0plus.elf" --probe --lsu 0x2000 -o "$tmp/x.pct" 2>"$tmp/e8"
check "armv6-m rc" $? 1
check "armv6-m said" "$(grep -c "machine cm0plus: LSU: the machine's DWT has no registers" "$tmp/e8")" 1
# a runner image without its DebugMon_Handler: said
"$S" frankentrace run -e "$F/ft_lsu_nomon.elf" --lsu-out "$tmp/x.csv" -o "$tmp/x.pct" 2>"$tmp/e9"
check "no monitor rc" $? 1
check "no monitor said" "$(grep -c "has no DebugMon_Handler of its own (it is Default_Handler)" "$tmp/e9")" 1

echo "frankentrace_lsu: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
