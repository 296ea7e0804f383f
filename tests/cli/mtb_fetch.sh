#!/usr/bin/env bash
# `sonde mtb fetch` against `sonde run --gdb` (the VM's GDB server, another
# process): firmware/mtb/mtb_fault.c (HANG_TEST) faults, its handler writes a
# bundle into RAM and spins. A live fetch (MTB registers + buffer through the
# GDB link) and a copy of the stored bundle (--stored mtb_bundle) decode to
# the same branch history.
set -u
. "$(dirname "$0")/lib.sh"
for core in m33 m0plus; do
  FW="$SONDE_BUILD/firmware/mtb_fault_hang_$core.elf"
  [ -f "$FW" ] || { echo "missing $FW"; exit 1; }
  mach=cm33; [ $core = m0plus ] && mach=cm0plus
  # one client per server: the firmware spins forever after it
  serve -m $mach --gdb 0 "$FW"
  "$SONDE" mtb fetch --link "gdb:127.0.0.1:$port" --core $core --run-ms 300 -e "$FW" -o "$T/live.smtb" 2>"$T/e"; rc=$?
  [ $rc -eq 0 ] && ok || bad "$core live fetch: exit $rc: $(cat "$T/e")"
  serve -m $mach --gdb 0 "$FW"
  "$SONDE" mtb fetch --gdb "127.0.0.1:$port" --core $core --run-ms 300 --stored mtb_bundle -e "$FW" -o "$T/stored.smtb" 2>"$T/e"; rc=$?
  [ $rc -eq 0 ] && ok || bad "$core stored fetch: exit $rc: $(cat "$T/e")"
  "$SONDE" mtb decode -e "$FW" "$T/live.smtb" --format json >"$T/live.json" 2>"$T/e"; rc=$?
  [ $rc -eq 0 ] && [ ! -s "$T/e" ] && ok || bad "$core decode live: exit $rc: $(cat "$T/e")"
  "$SONDE" mtb decode -e "$FW" "$T/stored.smtb" --format json >"$T/stored.json" 2>"$T/e"; rc=$?
  [ $rc -eq 0 ] && [ ! -s "$T/e" ] && ok || bad "$core decode stored: exit $rc: $(cat "$T/e")"
  # both carry the running firmware's build id (live: read from the target)
  tail -1 "$T/live.json" | grep -q '"build_id_match":true' && tail -1 "$T/stored.json" | grep -q '"build_id_match":true' \
    && ok || bad "$core: build ids"
  # the text of both ends with the history, then the halt (live) / the fault (stored)
  "$SONDE" mtb decode -e "$FW" "$T/live.smtb" >"$T/live.txt"
  grep -q "^halted at 0x[0-9a-f]* on_fault+0x[0-9a-f]* (.*mtb_fault.c:[0-9]*)" "$T/live.txt" && grep -q "^  r0 0x.* xpsr 0x" "$T/live.txt" \
    && grep -q "^  r4 0x" "$T/live.txt" && ok || bad "$core live text: $(tail -4 "$T/live.txt")"
  n=$(grep -c '"kind":"branch"' "$T/live.json")
  [ "$n" -gt 50 ] && ok || bad "$core live: only $n branches"
  cmp -s <(grep -v '"kind":"\(fault\|halt\)"' "$T/live.json") <(grep -v '"kind":"\(fault\|halt\)"' "$T/stored.json") \
    && ok || bad "$core: live and stored histories differ"
  tail -1 "$T/stored.json" | grep -q '"kind":"fault","pc":[0-9]*,"function":"culprit"' && ok || bad "$core stored: no fault in culprit"
  tail -1 "$T/live.json" | grep -q '"kind":"halt","pc":[0-9]*,"function":"on_fault"' && ok || bad "$core live: not halted in on_fault: $(tail -1 "$T/live.json")"
done
# TSTART/TSTOP sessions running forever on the M0+ (MTBDWT): the fetch stops
# the MTB with EN and TSTARTEN cleared (MASTER at bundle offset 20) and keeps
# TSTOPEN and MASK; --no-stop leaves TSTARTEN; the history has S-bit sessions.
FW="$SONDE_BUILD/firmware/mtb_sessions_hang_m0plus.elf"
mach=cm0plus
master_of() { python3 -c 'import struct,sys; print("%08x" % struct.unpack_from("<I", open(sys.argv[1],"rb").read(), 20)[0])' "$1"; }
serve -m $mach --gdb 0 "$FW"
"$SONDE" mtb fetch --gdb "127.0.0.1:$port" --core m0plus --run-ms 100 -e "$FW" -o "$T/s.smtb" 2>"$T/e"; rc=$?
[ $rc -eq 0 ] && [ "$(master_of "$T/s.smtb")" = "00000048" ] && ok \
  || bad "sessions fetch: exit $rc, MASTER $(master_of "$T/s.smtb" 2>&1) $(cat "$T/e")"
"$SONDE" mtb decode -e "$FW" "$T/s.smtb" >"$T/s.txt" 2>"$T/e"; rc=$?
[ $rc -eq 0 ] && head -1 "$T/s.txt" | grep -q ", 0 inconsistent" && grep -q "trace session starts (S-bit)" "$T/s.txt" \
  && ok || bad "sessions decode: exit $rc: $(head -1 "$T/s.txt") $(cat "$T/e")"
serve -m $mach --gdb 0 "$FW"
"$SONDE" mtb fetch --gdb "127.0.0.1:$port" --core m0plus --run-ms 100 --no-stop -o "$T/n.smtb" 2>"$T/e"; rc=$?
m=$(master_of "$T/n.smtb" 2>/dev/null)
[ $rc -eq 0 ] && [ $((0x$m & 0x7fffffff)) -eq $((0x68)) ] && ok || bad "--no-stop: exit $rc, MASTER $m"
"$SONDE" mtb fetch --link "gdb:127.0.0.1:1" --timeout-ms 500 -o "$T/x.smtb" 2>"$T/e"; rc=$?
[ $rc -eq 1 ] && grep -q "gdb:127.0.0.1:1" "$T/e" && ok || bad "refused link: exit $rc: $(cat "$T/e")"
"$SONDE" mtb fetch --gdb 127.0.0.1:1 --link gdb:127.0.0.1:1 -o "$T/x.smtb" 2>"$T/e"; rc=$?
[ $rc -eq 2 ] && grep -q "give one" "$T/e" && ok || bad "--gdb with --link: exit $rc"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
