#!/bin/bash
# `sonde monitor pc --link openocd:...` live: real OpenOCD 0.12 attached to the
# virtual chip through `sonde run --jtag` (remote_bitbang, one core cycle per
# TCK so the run is long enough to poll), PC polling over OpenOCD's Tcl RPC
# port while the core runs; then breakpoint mode through OpenOCD.
set -u
. "$(dirname "$0")/lib.sh"
command -v openocd >/dev/null || { echo "openocd missing (scripts/install-deps)" >&2; exit 1; }
FW="$SONDE_BUILD/firmware/mon_bench.elf"
[ -f "$FW" ] || { echo "missing $FW" >&2; exit 1; }
JP=$(free_port)
TP=$(free_port)
"$SONDE" run --jtag "$JP" --jtag-cycles-per-tck 1 "$FW" > "$T/run.log" 2>&1 &
pids+=($!)
for i in $(seq 50); do grep -q listening "$T/run.log" && break; sleep 0.1; done
SONDE_JTAG_PORT=$JP openocd -c "gdb_port disabled; telnet_port disabled; tcl_port $TP" \
  -f "$SONDE_SRC/scripts/openocd/sonde-vm.cfg" > "$T/ocd.log" 2>&1 &
pids+=($!)
for i in $(seq 100); do grep -q "Listening on port $TP" "$T/ocd.log" && break; sleep 0.1; done

"$SONDE" monitor pc -e "$FW" --link "openocd:127.0.0.1:$TP" --max-ms 1000 --format csv -o "$T/pc.csv"
check_eq $? 0 "pc over openocd"
n=$(($(wc -l < "$T/pc.csv") - 1))
[ "$n" -ge 5 ] && ok || bad "only $n changes"
# every sampled PC is inside a named function, cycles increase
python3 - "$T/pc.csv" <<'EOP' && ok || bad "pc rows"
import csv, sys
last = -1
for r in csv.DictReader(open(sys.argv[1])):
    c = int(r["cycle"])
    if r["function"] == "?" or c <= last:
        print("bad row", r, file=sys.stderr); sys.exit(1)
    last = c
EOP
out=$("$SONDE" monitor pc -e "$FW" --link "openocd:127.0.0.1:$TP" --max-ms 500 --json)
echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(0 if d["polls"] >= 10 and d["polls_per_host_s"] >= 10 and d["mean_poll_cycles"] > 1 and d["unsampled"] == 0 else 1)' \
  && ok || bad "json: $out"
out=$("$SONDE" monitor break -e "$FW" --link "openocd:127.0.0.1:$TP" --at to_global --max-ms 2000 --format csv)
check_eq $? 0 "break over openocd"
check_eq "$(echo "$out" | tail -n +2 | cut -d, -f3 | sort -u)" "to_global" "break rows"
[ "$(echo "$out" | wc -l)" -ge 3 ] && ok || bad "break events: $out"

# the halt time as cycles a 48 MHz core would have run (a real target's perturbation)
out=$("$SONDE" monitor break -e "$FW" --link "openocd:127.0.0.1:$TP" --at div32 --max-ms 500 --clock 48000000 --json)
echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(0 if d["events"] >= 2 and abs(d["halt_cycles_per_event"] - d["halt_ns_per_event"] * 0.048) <= 1 else 1)' \
  && ok || bad "break json: $out"

# watchpoint mode over OpenOCD: entries of to_global drained from DWT_FUNCTION0.MATCHED
out=$("$SONDE" monitor watch -e "$FW" --link "openocd:127.0.0.1:$TP" --func to_global --max-ms 1500 --format csv)
check_eq $? 0 "watch over openocd"
n=$(echo "$out" | grep -c ',to_global,')
[ "$n" -ge 2 ] && ok || bad "watch events: $n"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
