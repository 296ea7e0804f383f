#!/bin/bash
# `sonde monitor pc|break --link gdb:...` against `sonde run --gdb` (the VM's
# GDB server) in another process: halting-mode PC polling and FPB
# breakpoints through the GDB remote protocol; then the server runs the
# firmware to its end once the monitor detaches.
set -u
. "$(dirname "$0")/lib.sh"
FW="$SONDE_BUILD/firmware/mon_bench.elf"
[ -f "$FW" ] || { echo "missing $FW" >&2; exit 1; }
# one server per session: after the monitor detaches the server runs the
# firmware to its end and exits

serve --gdb 0 "$FW"
out=$("$SONDE" monitor break -e "$FW" --link "gdb:127.0.0.1:$port" --at div32 --max-ms 500 --format csv)
check_eq $? 0 "break over gdb"
n=$(echo "$out" | grep -c ',div32,')
[ "$n" -ge 3 ] && ok || bad "break events: $n"
wait "$pid"; check_eq $? 0 "the server ran the firmware to its exit after the detach"

serve --gdb 0 "$FW"
out=$("$SONDE" monitor pc -e "$FW" --link "gdb:127.0.0.1:$port" --max-ms 1500 --json)
check_eq $? 0 "pc over gdb"
echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(0 if d["polls"] >= 3 and d["changes"] >= 2 and d["link"].startswith("gdb:") else 1)' \
  && ok || bad "pc json: $out"
wait "$pid"; check_eq $? 0 "exit after the second detach"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
