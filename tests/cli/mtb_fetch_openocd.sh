#!/usr/bin/env bash
# `sonde mtb fetch --link openocd:...` against real OpenOCD (Debian 0.12)
# attached to the virtual chip through its JTAG debug port (`sonde run
# --jtag`, scripts/openocd/sonde-vm.cfg), on cm33 and cm0plus:
# firmware/mtb/mtb_fault.c (HANG_TEST) faults, its handler stores a bundle
# and spins. The live fetch (MTB registers, buffer, core registers through
# DCRSR, the build id read from the target) and the stored bundle decode to
# the same branch history; both carry the ELF's build id. And a 4 KiB buffer
# of M0+ TSTART/TSTOP sessions, read in several mdw commands.
set -u
. "$(dirname "$0")/lib.sh"
command -v openocd >/dev/null || { echo "FAIL: openocd missing (scripts/install-deps)"; exit 1; }
# start_ocd MACHINE FW: the firmware under `sonde run --jtag`, OpenOCD on it; TP = its Tcl port
start_ocd() {
  serve -m "$1" --jtag 0 "$2"
  JP=$port
  TP=$(free_port)
  SONDE_JTAG_PORT=$JP openocd -c "gdb_port disabled; telnet_port disabled; tcl_port $TP" \
    -f "$SONDE_SRC/scripts/openocd/sonde-vm.cfg" >"$T/ocd.log" 2>&1 &
  pids+=($!)
  for i in $(seq 100); do grep -q "Listening on port $TP" "$T/ocd.log" && break; sleep 0.1; done
}
for core in m33 m0plus; do
  FW="$SONDE_BUILD/firmware/mtb_fault_hang_$core.elf"
  [ -f "$FW" ] || { echo "FAIL: missing $FW"; exit 1; }
  mach=cm33; [ $core = m0plus ] && mach=cm0plus
  start_ocd $mach "$FW"
  "$SONDE" mtb fetch --link "openocd:127.0.0.1:$TP" --core $core --run-ms 300 -e "$FW" -o "$T/live.smtb" 2>"$T/e"; rc=$?
  [ $rc -eq 0 ] && ok || bad "$core live fetch over OpenOCD: exit $rc: $(cat "$T/e")"
  "$SONDE" mtb fetch --link "openocd:127.0.0.1:$TP" --core $core --stored mtb_bundle -e "$FW" -o "$T/stored.smtb" 2>"$T/e"; rc=$?
  [ $rc -eq 0 ] && ok || bad "$core stored fetch over OpenOCD: exit $rc: $(cat "$T/e")"
  grep -q "Cortex-M33 r0p4 processor detected\|Cortex-M0+ r0p1 processor detected" "$T/ocd.log" \
    && ok || bad "$core: OpenOCD did not find the core: $(tail -3 "$T/ocd.log")"
  for k in live stored; do
    "$SONDE" mtb decode -e "$FW" "$T/$k.smtb" --format json >"$T/$k.json" 2>"$T/e"; rc=$?
    [ $rc -eq 0 ] && [ ! -s "$T/e" ] && ok || bad "$core decode $k: exit $rc: $(cat "$T/e")"
    tail -1 "$T/$k.json" | grep -q '"build_id_match":true' && ok || bad "$core $k: build id not the ELF's"
  done
  n=$(grep -c '"kind":"branch"' "$T/live.json")
  [ "$n" -gt 50 ] && ok || bad "$core live: only $n branches"
  cmp -s <(grep -v '"kind":"\(fault\|halt\)"' "$T/live.json") <(grep -v '"kind":"\(fault\|halt\)"' "$T/stored.json") \
    && ok || bad "$core: live and stored histories differ"
  tail -1 "$T/stored.json" | grep -q '"kind":"fault","pc":[0-9]*,"function":"culprit"' && ok || bad "$core stored: no fault in culprit"
  tail -1 "$T/live.json" | grep -q '"kind":"halt","pc":[0-9]*,"function":"on_fault".*"r4":[0-9]*,.*"msp":[0-9]*' \
    && ok || bad "$core live: not halted in on_fault with registers: $(tail -1 "$T/live.json")"
  # the live r4-r11 are the handler's spin loop's, r4-r11 the stored bundle saw
  # at the fault entry: the handler does not change r8-r11
  python3 - "$T/live.json" "$T/stored.json" <<'PY' && ok || bad "$core: r8-r11 differ between live and stored"
import json, sys
a = json.loads(open(sys.argv[1]).read().splitlines()[-1])
b = json.loads(open(sys.argv[2]).read().splitlines()[-1])
assert all(a["r%d" % i] == b["r%d" % i] for i in range(8, 12)), (a, b)
PY
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  pids=()
done
# A whole 4 KiB buffer (more than one mdw answer holds) of TSTART/TSTOP
# sessions on the M0+ (MTBDWT): fetched over OpenOCD, it decodes with S-bit
# sessions and nothing inconsistent; MASTER (offset 20) keeps TSTOPEN and MASK.
FW="$SONDE_BUILD/firmware/mtb_sessions_hang_m0plus.elf"
start_ocd cm0plus "$FW"
"$SONDE" mtb fetch --link "openocd:127.0.0.1:$TP" --core m0plus --run-ms 100 -e "$FW" -o "$T/s.smtb" 2>"$T/e"; rc=$?
m=$(python3 -c 'import struct,sys; print("%08x" % struct.unpack_from("<I", open(sys.argv[1],"rb").read(), 20)[0])' "$T/s.smtb" 2>/dev/null)
[ $rc -eq 0 ] && [ "$m" = "00000048" ] && ok || bad "sessions fetch over OpenOCD: exit $rc, MASTER $m: $(cat "$T/e")"
"$SONDE" mtb decode -e "$FW" "$T/s.smtb" >"$T/s.txt" 2>"$T/e"; rc=$?
[ $rc -eq 0 ] && head -1 "$T/s.txt" | grep -q ", 0 inconsistent" && grep -q "trace session starts (S-bit)" "$T/s.txt" \
  && ok || bad "sessions decode: exit $rc: $(head -1 "$T/s.txt") $(cat "$T/e")"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
