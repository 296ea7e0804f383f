#!/usr/bin/env bash
# `sonde mtb decode` on the MTB dumps that test_mtb_decode wrote from the VM
# (fixture mtb_dumps: buffer, base, POSITION, MASTER, and the PC of the store
# that stopped the MTB): text, json and csv agree with each other and end in
# mtb_disable; bad inputs give exit 1 and say what is wrong.
set -u
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
D="$SONDE_BUILD/mtb_dumps"
FW="$SONDE_BUILD/firmware"
[ -f "$D/mtb_m33.bin" ] || { echo "FAIL: no dumps in $D (test_mtb_decode writes them)"; exit 1; }
read -r B P M E < "$D/mtb_m33.regs"
dec() { "$SONDE" mtb decode -e "$FW/mtb_m33.elf" --raw "$D/mtb_m33.bin" --base "$B" "$@"; }

dec --position "$P" --master "$M" >"$tmp/t" 2>"$tmp/e"; rc=$?
[ $rc -eq 0 ] && head -1 "$tmp/t" | grep -q "^92 packets, 453 instructions, 6 exception entries, 6 returns, 0 tail-chains, 0 inconsistent" \
  && ok || bad "text: exit $rc: $(head -1 "$tmp/t") $(cat "$tmp/e")"
[ ! -s "$tmp/e" ] && ok || bad "text: stderr: $(cat "$tmp/e")"
tail -1 "$tmp/t" | grep -q "branch .* main+0x[0-9a-f]* (.*mtb_trace.c:[0-9]*) -> 0x[0-9a-f]* mtb_disable (.*mtb.c:[0-9]*)" \
  && ok || bad "text: last line: $(tail -1 "$tmp/t")"
grep -q "exception entry from .* -> 0x[0-9a-f]* SysTick_Handler" "$tmp/t" && ok || bad "no SysTick entry"
grep -q "exception return at .*SysTick_Handler+0x[0-9a-f]* (.*) (EXC_RETURN 0xf" "$tmp/t" && ok || bad "no SysTick return"
grep -q "PendSV_Handler" "$tmp/t" && ok || bad "no PendSV"
grep -q "trace session starts" "$tmp/t" && ok || bad "no S-bit session start"

# TSTART/TSTOP sessions (M0+: the MTBDWT's comparators; and the M33's DWT):
# three S-bit session starts, no inconsistent packet, the history ends at
# traced_stop's first instruction.
for c in m0plus m33; do
  read -r SB SP SM SE < "$D/mtb_sessions_$c.regs"
  "$SONDE" mtb decode -e "$FW/mtb_sessions_$c.elf" --raw "$D/mtb_sessions_$c.bin" --base "$SB" \
    --position "$SP" --master "$SM" --end-pc "$SE" --instructions >"$tmp/s" 2>"$tmp/se"; rc=$?
  [ $rc -eq 0 ] && [ "$(grep -c 'trace session starts (S-bit)' "$tmp/s")" -eq 3 ] \
    && head -1 "$tmp/s" | grep -q ", 0 inconsistent" && tail -1 "$tmp/s" | grep -q "traced_stop" \
    && ok || bad "sessions $c: exit $rc: $(head -1 "$tmp/s") / $(tail -1 "$tmp/s") $(cat "$tmp/se")"
done

# json: every instruction, newest last, ending at the stopping store (--end-pc)
dec --position "$P" --master "$M" --end-pc "$E" --instructions --format json >"$tmp/j"; rc=$?
n=$(grep -c '"kind":"instruction"' "$tmp/j")
[ $rc -eq 0 ] && [ "$n" -eq 457 ] && ok || bad "json: exit $rc, $n instructions"
last=$(tail -1 "$tmp/j")
[ "$last" = "$(tail -1 "$tmp/j" | grep "\"kind\":\"instruction\",\"packet\":91,\"pc\":$((E)),\"function\":\"mtb_disable\"")" ] \
  && ok || bad "json last: $last"
if command -v python3 >/dev/null; then
  python3 - "$tmp/j" <<'PY' && ok || bad "json lines do not parse or lack fields"
import json, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    for k in ("kind", "pc", "function", "file", "line"):
        assert k in o, (k, line)
    assert o["kind"] in ("instruction", "branch", "exception", "session", "gap"), line
PY
fi
# --limit: the newest 5 instructions
dec --position "$P" --master "$M" --end-pc "$E" --instructions --limit 5 --format csv >"$tmp/c"
[ "$(grep -c '^instruction,' "$tmp/c")" -eq 5 ] && head -1 "$tmp/c" | grep -q '^kind,event,packet,pc,function,file,line' \
  && ok || bad "csv --limit 5: $(cat "$tmp/c")"
# POSITION as the absolute address of the write pointer: same result
dec --position "$(printf '0x%x' $((B + (P & ~7))))" --master "$M" >"$tmp/t2"
cmp -s "$tmp/t" "$tmp/t2" && ok || bad "absolute POSITION differs"

# wrapped buffer
read -r B2 P2 M2 E2 < "$D/mtb_wrap_long.regs"
"$SONDE" mtb decode -e "$FW/mtb_wrap_long.elf" --raw "$D/mtb_wrap_long.bin" --position "$P2" --master "$M2" >"$tmp/w"; rc=$?
[ $rc -eq 0 ] && head -1 "$tmp/w" | grep -q "^64 packets (buffer wrapped)" && ok || bad "wrap: $(head -1 "$tmp/w")"

# tail-chaining: PendSV after SysTick without going back to the thread
read -r B3 P3 M3 E3 < "$D/mtb_chain_m33.regs"
"$SONDE" mtb decode -e "$FW/mtb_chain_m33.elf" --raw "$D/mtb_chain_m33.bin" --position "$P3" --master "$M3" --format json >"$tmp/ch"
grep -q '"kind":"exception","event":"tail-chain",.*"function":"SysTick_Handler".*"dst_function":"PendSV_Handler"' "$tmp/ch" \
  && ok || bad "no tail-chain SysTick -> PendSV"

# bad input
dec --position 0x1000 --master "$M" >/dev/null 2>"$tmp/e"; rc=$?
[ $rc -eq 1 ] && grep -q "POSITION 0x00001000: its POINTER 0x00001000 is outside the 4096-byte MTB buffer" "$tmp/e" \
  && ok || bad "position outside: exit $rc: $(cat "$tmp/e")"
head -c 100 "$D/mtb_m33.bin" >"$tmp/t.bin"
"$SONDE" mtb decode -e "$FW/mtb_m33.elf" --raw "$tmp/t.bin" --position "$P" --master "$M" >/dev/null 2>"$tmp/e"; rc=$?
[ $rc -eq 1 ] && grep -q "t.bin: MTB buffer is 100 bytes, not a whole number of 8-byte packets" "$tmp/e" \
  && ok || bad "truncated 100: exit $rc: $(cat "$tmp/e")"
head -c 2048 "$D/mtb_m33.bin" >"$tmp/t.bin"
"$SONDE" mtb decode -e "$FW/mtb_m33.elf" --raw "$tmp/t.bin" --position "$P" --master "$M" >/dev/null 2>"$tmp/e"; rc=$?
[ $rc -eq 1 ] && grep -q "MTB buffer is 2048 bytes but MASTER 0x00000008 (MASK 8) describes a 4096-byte circle: truncated" "$tmp/e" \
  && ok || bad "truncated 2048: exit $rc: $(cat "$tmp/e")"
"$SONDE" mtb decode -e "$FW/mtb_m0p.elf" --raw "$D/mtb_m33.bin" --position "$P" --master "$M" >/dev/null 2>"$tmp/e"; rc=$?
[ $rc -eq 1 ] && grep -q "mtb_m0p.elf: .* of the 92 packets of .* are inconsistent with its code .*wrong ELF" "$tmp/e" \
  && ok || bad "wrong ELF: exit $rc: $(cat "$tmp/e")"
if command -v arm-none-eabi-gcc >/dev/null; then
  printf 'void _start(void){for(;;);}\n' >"$tmp/w.c"
  arm-none-eabi-gcc -mthumb -mcpu=cortex-m33 -nostdlib -Ttext=0x08000000 -o "$tmp/w.elf" "$tmp/w.c"
  "$SONDE" mtb decode -e "$tmp/w.elf" --raw "$D/mtb_m33.bin" --position "$P" --master "$M" >/dev/null 2>"$tmp/e"; rc=$?
  [ $rc -eq 1 ] && grep -q "only 0 of the 172 code addresses in the 92 packets .* are in its code: wrong ELF" "$tmp/e" \
    && ok || bad "ELF elsewhere: exit $rc: $(cat "$tmp/e")"
fi
"$SONDE" mtb decode -e "$FW/mtb_m33.elf" --raw "$tmp/none.bin" --position 0 >/dev/null 2>"$tmp/e"; rc=$?
[ $rc -eq 1 ] && grep -q "none.bin: No such file" "$tmp/e" && ok || bad "missing file: exit $rc: $(cat "$tmp/e")"
dec --position zz >/dev/null 2>"$tmp/e"; rc=$?
[ $rc -eq 2 ] && grep -q "position 'zz' is not a hexadecimal" "$tmp/e" && ok || bad "bad hex: exit $rc"
"$SONDE" mtb decode -e "$FW/mtb_m33.elf" --position 0 >/dev/null 2>"$tmp/e"; rc=$?
[ $rc -eq 2 ] && grep -q "missing <bundle> or --raw" "$tmp/e" && ok || bad "missing raw: exit $rc"
# a corrupted packet in the middle: a warning naming it, the rest decodes
cp "$D/mtb_m33.bin" "$tmp/c.bin"
printf '\x00\x00\x00\x00' | dd of="$tmp/c.bin" bs=1 seek=$((8 * 40)) conv=notrunc 2>/dev/null
"$SONDE" mtb decode -e "$FW/mtb_m33.elf" --raw "$tmp/c.bin" --position "$P" --master "$M" >"$tmp/t" 2>"$tmp/e"; rc=$?
[ $rc -eq 0 ] && grep -q "c.bin: packet 40 (offset 0x140): inconsistent" "$tmp/e" && grep -q "#40 *--- gap" "$tmp/t" \
  && ok || bad "corrupted packet: exit $rc: $(cat "$tmp/e")"

# post-mortem bundles the fault handler wrote (test_mtb_decode: <fw>.smtb):
# the faulting load in culprit(), on the line of its source
load_line=$(grep -n -F 'return *p + acc;' "$SONDE_SRC/firmware/mtb/mtb_fault.c" | cut -d: -f1)
for fw in mtb_fault_m33 mtb_fault_m0plus; do
  "$SONDE" mtb decode -e "$FW/$fw.elf" "$D/$fw.smtb" --limit 3 >"$tmp/f" 2>"$tmp/e"; rc=$?
  [ $rc -eq 0 ] && grep -q "^fault: exception 3 (HardFault) at 0x[0-9a-f]* culprit (.*mtb_fault.c:$load_line)  ldr" "$tmp/f" \
    && ok || bad "$fw bundle: exit $rc: $(cat "$tmp/f" "$tmp/e")"
  "$SONDE" mtb decode -e "$FW/$fw.elf" "$D/$fw.smtb" --format json | tail -1 | grep -q '^{"kind":"fault","pc":[0-9]*,"function":"culprit"' \
    && ok || bad "$fw bundle json"
done
grep -q "CFSR 0x00008200 HFSR 0x40000000: PRECISERR BFARVALID FORCED; MMFAR 0x00000000 BFAR 0xcffffff0" \
  <("$SONDE" mtb decode -e "$FW/mtb_fault_m33.elf" "$D/mtb_fault_m33.smtb") && ok || bad "CFSR words"
# demos: the PC is outside the firmware; the culprit is the branch that went
# there, named with its function and the source line it is on (found here in
# the source by its text)
src="$SONDE_SRC/firmware/mtb/mtb_fault.c"
line_of() { grep -n -F "$1" "$src" | head -1 | cut -d: -f1; }
wild_line=$(line_of 'callbacks[i]();')
smash_line=$(line_of '__asm__ volatile("push {r4, lr}')
task_line=$(line_of 'task.on_done();')
fill_line=$(line_of 'buf[i] = 0xA5;')
for d in wild:dispatch:1fff0000:$wild_line smash:smash:1fff0000:$smash_line stack:run_task:a5a5a5a4:$task_line; do
  IFS=: read -r kind fn pc ln <<<"$d"
  for core in m33 m0plus; do
    fw=mtb_${kind}_$core
    [ "$kind" = stack ] && [ $core = m33 ] && continue # below: STKOF
    "$SONDE" mtb decode -e "$FW/$fw.elf" "$D/$fw.smtb" --limit 2 >"$tmp/f" 2>"$tmp/e"; rc=$?
    [ $rc -eq 0 ] && grep -q "^fault: exception 3 (HardFault) at 0x$pc (not in the firmware)" "$tmp/f" \
      && grep -q "^  jumped there from 0x[0-9a-f]* $fn+0x[0-9a-f]* (.*mtb_fault.c:$ln) (packet #[0-9]*)" "$tmp/f" \
      && [ ! -s "$tmp/e" ] && ok || bad "demo $fw: exit $rc: $(cat "$tmp/f" "$tmp/e")"
    "$SONDE" mtb decode -e "$FW/$fw.elf" "$D/$fw.smtb" --format json | tail -1 >"$tmp/j1"
    python3 - "$tmp/j1" "$fn" "$ln" <<'PY' && ok || bad "demo $fw json: $(cat "$tmp/j1")"
import json, sys
o = json.loads(open(sys.argv[1]).read())
assert o["kind"] == "fault" and o["exception"] == "HardFault" and o["function"] is None, o
assert o["from_function"] == sys.argv[2] and o["from_line"] == int(sys.argv[3]), o
assert o["build_id_match"] is True and len(o["build_id"]) == 40 and o["bundle_version"] == 2, o
assert all(("r%d" % i) in o for i in range(4, 12)) and "msp" in o and "psp" in o, o
PY
  done
done
# stack overflow on the M33: MSPLIM was crossed (STKOF), no frame pushed; the
# decoder names where the trace says the program was: recurse(), the buffer fill
"$SONDE" mtb decode -e "$FW/mtb_stack_m33.elf" "$D/mtb_stack_m33.smtb" --limit 2 >"$tmp/f" 2>"$tmp/e"; rc=$?
[ $rc -eq 0 ] && grep -q "^fault: exception 3 (HardFault) at 0x[0-9a-f]* recurse+0x[0-9a-f]* (.*mtb_fault.c:$fill_line)" "$tmp/f" \
  && grep -q "stack-limit fault (STKOF) pushed no frame" "$tmp/f" \
  && grep -q "CFSR 0x00100000 HFSR 0x40000000: STKOF FORCED" "$tmp/f" \
  && grep -q "msplim 0x2003f800" "$tmp/f" && ok || bad "stack m33: exit $rc: $(cat "$tmp/f" "$tmp/e")"
"$SONDE" mtb decode -e "$FW/mtb_stack_m33.elf" "$D/mtb_stack_m33.smtb" --format json | tail -1 \
  | grep -q "\"kind\":\"fault\",\"pc\":[0-9]*,\"function\":\"recurse\",\"file\":\"[^\"]*mtb_fault.c\",\"line\":$fill_line,.*\"pc_from_trace\":true,\"status\":\"STKOF FORCED\"" \
  && ok || bad "stack m33 json"
# the M0+ overflow's history shows the recursion unwinding just before the
# wild call: recurse's return (pop) goes 4 times into recurse, then to run_task
"$SONDE" mtb decode -e "$FW/mtb_stack_m0plus.elf" "$D/mtb_stack_m0plus.smtb" >"$tmp/f"
ret=$(sed -n 's/^#[0-9]* *branch   \(0x[0-9a-f]*\) recurse+.* -> 0x[0-9a-f]* run_task+.*/\1/p' "$tmp/f")
[ -n "$ret" ] && [ "$(grep -c "branch   $ret recurse+.* -> 0x[0-9a-f]* recurse+" "$tmp/f")" -eq 4 ] \
  && ok || bad "m0plus: recurse does not return 4 times into itself, then to run_task ($ret)"
# ... so the deepest call chain (rebuilt from those returns) shows the five
# nested recurse() frames on top of run_task, where SysTick came in
grep -q "^  deepest call chain in the window (7 frames, outermost first): run_task > recurse x5 > SysTick_Handler$" "$tmp/f" \
  && ok || bad "m0plus deepest chain: $(grep deepest "$tmp/f")"
"$SONDE" mtb decode -e "$FW/mtb_stack_m0plus.elf" "$D/mtb_stack_m0plus.smtb" --format json | tail -1 \
  | grep -q '"deepest_chain":\["run_task","recurse","recurse","recurse","recurse","recurse","SysTick_Handler"\]' \
  && ok || bad "m0plus deepest chain json"
# the M33's window is inside the recursion: recurse frames, then the HardFault
grep -q "^  deepest call chain in the window ([0-9]* frames, outermost first): recurse x[2-9] > HardFault_Handler$" \
  <("$SONDE" mtb decode -e "$FW/mtb_stack_m33.elf" "$D/mtb_stack_m33.smtb") && ok || bad "m33 deepest chain"
# the wild pointer: main called dispatch, which called the wild address
grep -q "^  deepest call chain in the window (4 frames, outermost first): main > dispatch > 0x1fff0000 > HardFault_Handler$" \
  <("$SONDE" mtb decode -e "$FW/mtb_wild_m33.elf" "$D/mtb_wild_m33.smtb") && ok || bad "wild deepest chain"

# after the reset the firmware sends the waiting bundle (mtb_bundle_send) as hex
# lines over semihosting, as it would over a UART: read back from `sonde run`
# and decoded, it names the fault and carries the ELF's build id
for core in m33 m0plus; do
  mach=cm33; [ $core = m0plus ] && mach=cm0plus
  "$SONDE" run -m $mach "$FW/mtb_fault_reset_$core.elf" >"$tmp/sent.txt" 2>"$tmp/e"; rc=$?
  sed -n 's/^MTB //p' "$tmp/sent.txt" | python3 -c 'import sys; sys.stdout.buffer.write(bytes.fromhex(sys.stdin.read().replace("\n", "")))' >"$tmp/sent.smtb"
  "$SONDE" mtb decode -e "$FW/mtb_fault_reset_$core.elf" "$tmp/sent.smtb" >"$tmp/f" 2>"$tmp/e2"; rc2=$?
  [ $rc -eq 4 ] && [ $rc2 -eq 0 ] && [ ! -s "$tmp/e2" ] && [ "$(stat -c %s "$tmp/sent.smtb")" -eq 1412 ] \
    && grep -q "^fault: exception 3 (HardFault) at 0x[0-9a-f]* culprit (.*mtb_fault.c:[0-9]*)  ldr" "$tmp/f" \
    && ok || bad "$core sent after reset: run exit $rc, decode exit $rc2: $(cat "$tmp/e" "$tmp/e2")"
done

# registers of bundle version 2: FPU (S0-S31 as main() set them)
"$SONDE" mtb decode -e "$FW/mtb_fault_fpu_m33.elf" "$D/mtb_fault_fpu_m33.smtb" >"$tmp/f" 2>"$tmp/e"; rc=$?
[ $rc -eq 0 ] && grep -q "^  s0 0x3fc00000 (1.5) s1 " "$tmp/f" && grep -q " s17 0xc0000000 (-2) " "$tmp/f" \
  && grep -q " s31 0x3e800000 (0.25)$" "$tmp/f" && grep -q "^  r4 0x" "$tmp/f" \
  && ok || bad "fpu registers: exit $rc: $(cat "$tmp/f" "$tmp/e")"
"$SONDE" mtb decode -e "$FW/mtb_fault_fpu_m33.elf" "$D/mtb_fault_fpu_m33.smtb" --format json | tail -1 \
  | python3 -c 'import json,sys; o=json.load(sys.stdin); sys.exit(0 if o["s"][0] == 0x3fc00000 and len(o["s"]) == 32 and o["fpscr"] == 0 else 1)' \
  && ok || bad "fpu json"

# build id: the bundle's against the ELF's
"$SONDE" mtb decode -e "$FW/mtb_fault_m33.elf" "$D/mtb_fault_m33.smtb" >"$tmp/ok.txt" 2>"$tmp/e"; rc=$?
[ $rc -eq 0 ] && [ ! -s "$tmp/e" ] && ok || bad "build id match: exit $rc: $(cat "$tmp/e")"
id=$(arm-none-eabi-readelf -n "$FW/mtb_fault_m33.elf" 2>/dev/null | sed -n 's/.*Build ID: //p')
oid=$(arm-none-eabi-readelf -n "$FW/mtb_fault_other_m33.elf" 2>/dev/null | sed -n 's/.*Build ID: //p')
"$SONDE" mtb decode -e "$FW/mtb_fault_other_m33.elf" "$D/mtb_fault_m33.smtb" >"$tmp/f" 2>"$tmp/e"; rc=$?
[ $rc -eq 1 ] && [ ! -s "$tmp/f" ] && [ -n "$id" ] && [ -n "$oid" ] \
  && grep -q "^sonde: .*mtb_fault_m33.smtb: build id $id is not .*mtb_fault_other_m33.elf's ($oid): the bundle comes from another build of the firmware (--force decodes it anyway)$" "$tmp/e" \
  && ok || bad "build id mismatch: exit $rc: $(cat "$tmp/e")"
"$SONDE" mtb decode -e "$FW/mtb_fault_other_m33.elf" "$D/mtb_fault_m33.smtb" --force >"$tmp/f" 2>"$tmp/e"; rc=$?
[ $rc -eq 0 ] && grep -q "build id $id is not .*: decoding anyway (--force)" "$tmp/e" \
  && [ "$(sed 's|_other||' "$tmp/f" | grep -c .)" -eq "$(grep -c . "$tmp/ok.txt")" ] \
  && grep -q "^fault: exception 3 (HardFault) at 0x[0-9a-f]* culprit" "$tmp/f" \
  && ok || bad "build id --force: exit $rc: $(cat "$tmp/e")"
"$SONDE" mtb decode -e "$FW/mtb_fault_noid_m33.elf" "$D/mtb_fault_noid_m33.smtb" >"$tmp/f" 2>"$tmp/e"; rc=$?
[ $rc -eq 0 ] && grep -q "mtb_fault_noid_m33.smtb: the bundle carries no build id: cannot check that it comes from .*mtb_fault_noid_m33.elf" "$tmp/e" \
  && grep -q "^fault: exception 3 (HardFault) at 0x[0-9a-f]* culprit" "$tmp/f" \
  && ok || bad "bundle without build id: exit $rc: $(cat "$tmp/e")"
"$SONDE" mtb decode -e "$FW/mtb_fault_noid_m33.elf" "$D/mtb_fault_m33.smtb" >/dev/null 2>"$tmp/e"; rc=$?
[ $rc -eq 0 ] && grep -q "mtb_fault_noid_m33.elf has no build id (link with -Wl,--build-id): cannot check" "$tmp/e" \
  && ok || bad "ELF without build id: exit $rc: $(cat "$tmp/e")"

# version 1 bundles (before r4-r11) still decode: the v2 bundle rewritten as v1
python3 - "$D/mtb_fault_m33.smtb" "$tmp/v1.smtb" <<'PY' && ok || bad "make v1"
import struct, sys, zlib
b = open(sys.argv[1], "rb").read()
nbuf, nstack = struct.unpack_from("<II", b, 32)
h = bytearray(b[:128])
struct.pack_into("<HHI", h, 4, 1, 128, 128 + nbuf + nstack + 4)
struct.pack_into("<I", h, 124, 0)
body = bytes(h) + b[320:320 + nbuf + nstack]
open(sys.argv[2], "wb").write(body + struct.pack("<I", zlib.crc32(body)))
PY
"$SONDE" mtb decode -e "$FW/mtb_fault_m33.elf" "$tmp/v1.smtb" >"$tmp/f" 2>"$tmp/e"; rc=$?
[ $rc -eq 0 ] && [ ! -s "$tmp/e" ] && cmp -s <(grep -v "^  \(r4\|msp\) " "$tmp/ok.txt") "$tmp/f" \
  && ok || bad "v1 bundle: exit $rc: $(cat "$tmp/e"; diff "$tmp/ok.txt" "$tmp/f")"
printf '\x03' | dd of="$tmp/v1.smtb" bs=1 seek=4 conv=notrunc 2>/dev/null
"$SONDE" mtb decode -e "$FW/mtb_fault_m33.elf" "$tmp/v1.smtb" >/dev/null 2>"$tmp/e"; rc=$?
[ $rc -eq 1 ] && grep -q "offset 4: bundle version 3 (this sonde reads versions 1 and 2)" "$tmp/e" \
  && ok || bad "version 3: exit $rc: $(cat "$tmp/e")"
cp "$D/mtb_fault_m33.smtb" "$tmp/h.smtb"
printf '\x80\x00' | dd of="$tmp/h.smtb" bs=1 seek=6 conv=notrunc 2>/dev/null
"$SONDE" mtb decode -e "$FW/mtb_fault_m33.elf" "$tmp/h.smtb" >/dev/null 2>"$tmp/e"; rc=$?
[ $rc -eq 1 ] && grep -q "offset 6: header size 128, version 2 has 320" "$tmp/e" \
  && ok || bad "v2 with a v1 header size: exit $rc: $(cat "$tmp/e")"

# Perfetto: function slices and instants, checked with protoc against our subset .proto
"$SONDE" mtb decode -e "$FW/mtb_stack_m0plus.elf" "$D/mtb_stack_m0plus.smtb" --format perfetto -o "$tmp/s.pftrace"; rc=$?
[ $rc -eq 0 ] && ok || bad "perfetto: exit $rc"
if command -v protoc >/dev/null; then
  protoc --decode=perfetto.protos.Trace -I"$SONDE_SRC/tests/export" "$SONDE_SRC/tests/export/perfetto_subset.proto" \
    <"$tmp/s.pftrace" >"$tmp/s.txt"; rc=$?
  [ $rc -eq 0 ] && ok || bad "protoc: exit $rc"
  b=$(grep -c TYPE_SLICE_BEGIN "$tmp/s.txt"); e=$(grep -c TYPE_SLICE_END "$tmp/s.txt")
  [ "$b" -gt 10 ] && [ "$b" -eq "$e" ] && ok || bad "perfetto slices: $b begins, $e ends"
  grep -q 'name: "recurse"' "$tmp/s.txt" && grep -q 'name: "run_task"' "$tmp/s.txt" && ok || bad "perfetto: no recurse/run_task slices"
  # one instant per branch and exception event of the text history
  nb=$(grep -c "^#[0-9]* *\(branch\|exception\)" "$tmp/f.m0" 2>/dev/null || true)
  "$SONDE" mtb decode -e "$FW/mtb_stack_m0plus.elf" "$D/mtb_stack_m0plus.smtb" >"$tmp/f.m0"
  nb=$(grep -c "^#[0-9]* *\(branch\|exception\)" "$tmp/f.m0")
  ni=$(grep -c TYPE_INSTANT "$tmp/s.txt")
  [ "$ni" -eq $((nb + 1)) ] && ok || bad "perfetto: $ni instants for $nb branches/exceptions + the fault"
  grep -q 'name: "fault: exception 3 HardFault"' "$tmp/s.txt" && grep -q 'string_value: "0xa5a5a5a4"' "$tmp/s.txt" \
    && ok || bad "perfetto: no fault instant"
  # --limit: the newest branches only
  "$SONDE" mtb decode -e "$FW/mtb_stack_m0plus.elf" "$D/mtb_stack_m0plus.smtb" --format perfetto --limit 3 -o "$tmp/l.pftrace"
  protoc --decode=perfetto.protos.Trace -I"$SONDE_SRC/tests/export" "$SONDE_SRC/tests/export/perfetto_subset.proto" \
    <"$tmp/l.pftrace" >"$tmp/l.txt"
  [ "$(grep -c TYPE_INSTANT "$tmp/l.txt")" -eq 4 ] && ok || bad "perfetto --limit 3: $(grep -c TYPE_INSTANT "$tmp/l.txt") instants"
else
  bad "protoc missing (scripts/install-deps)"
fi
# Perfetto from a raw buffer too (no fault instant then): as many instants as
# branch/exception/session lines of the text
read -r B P M E < "$D/mtb_m33.regs"
"$SONDE" mtb decode -e "$FW/mtb_m33.elf" --raw "$D/mtb_m33.bin" --base "$B" --position "$P" --master "$M" \
  --format perfetto -o "$tmp/r.pftrace"; rc=$?
"$SONDE" mtb decode -e "$FW/mtb_m33.elf" --raw "$D/mtb_m33.bin" --base "$B" --position "$P" --master "$M" >"$tmp/r.txt"
if command -v protoc >/dev/null; then
  protoc --decode=perfetto.protos.Trace -I"$SONDE_SRC/tests/export" "$SONDE_SRC/tests/export/perfetto_subset.proto" \
    <"$tmp/r.pftrace" >"$tmp/r.ptxt"
  [ $rc -eq 0 ] && [ "$(grep -c TYPE_INSTANT "$tmp/r.ptxt")" -eq "$(grep -c '^#' "$tmp/r.txt")" ] \
    && ! grep -q 'name: "fault' "$tmp/r.ptxt" && grep -q 'name: "trace session starts"' "$tmp/r.ptxt" \
    && ok || bad "raw perfetto: exit $rc, $(grep -c TYPE_INSTANT "$tmp/r.ptxt") instants for $(grep -c '^#' "$tmp/r.txt") lines"
fi
"$SONDE" mtb decode -e "$FW/mtb_fault_m33.elf" "$D/mtb_fault_m33.smtb" --format xml >/dev/null 2>"$tmp/e"; rc=$?
[ $rc -eq 2 ] && grep -q "unknown --format 'xml' (text, json, csv or perfetto)" "$tmp/e" && ok || bad "bad format: exit $rc"
cp "$D/mtb_fault_m33.smtb" "$tmp/b.smtb"
printf '\x55' | dd of="$tmp/b.smtb" bs=1 seek=300 conv=notrunc 2>/dev/null
"$SONDE" mtb decode -e "$FW/mtb_fault_m33.elf" "$tmp/b.smtb" >/dev/null 2>"$tmp/e"; rc=$?
[ $rc -eq 1 ] && grep -q "b.smtb: offset 1408: CRC-32 0x[0-9a-f]* does not match the contents" "$tmp/e" \
  && ok || bad "corrupt bundle: exit $rc: $(cat "$tmp/e")"
head -c 1000 "$D/mtb_fault_m33.smtb" >"$tmp/b.smtb"
"$SONDE" mtb decode -e "$FW/mtb_fault_m33.elf" "$tmp/b.smtb" >/dev/null 2>"$tmp/e"; rc=$?
[ $rc -eq 1 ] && grep -q "b.smtb: truncated: 1000 bytes of a 1412-byte bundle" "$tmp/e" \
  && ok || bad "truncated bundle: exit $rc: $(cat "$tmp/e")"
"$SONDE" mtb decode -e "$FW/mtb_fault_m33.elf" "$D/mtb_m33.bin" >/dev/null 2>"$tmp/e"; rc=$?
[ $rc -eq 1 ] && grep -q 'offset 0: not an MTB bundle (no "SMTB" magic)' "$tmp/e" && ok || bad "raw as bundle: exit $rc"
"$SONDE" mtb decode -e "$FW/mtb_fault_m33.elf" "$D/mtb_fault_m33.smtb" --raw x >/dev/null 2>"$tmp/e"; rc=$?
[ $rc -eq 2 ] && ok || bad "bundle + --raw: exit $rc"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
