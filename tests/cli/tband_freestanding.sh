#!/bin/bash
# The on-target tracer is portable C99 that needs no libc: compile every
# target file for Cortex-M4 with -std=c99 -pedantic -ffreestanding -Werror in
# each backend configuration and check that nothing outside the tracer is
# referenced (no memcpy, no libgcc helpers).
set -u
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*" >&2; fail=$((fail + 1)); }
command -v arm-none-eabi-gcc >/dev/null || { echo "arm-none-eabi-gcc missing (scripts/install-deps)" >&2; exit 1; }
T="$SONDE_SRC/target/tband"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
for cfg in "" -DTBAND_DEMO_SNAPSHOT -DTBAND_DEMO_POSTMORTEM; do
  cpus=cortex-m4
  [ -z "$cfg" ] && cpus="cortex-m3 cortex-m4" # M3 once: the code is the same C
  for cpu in $cpus; do
    for f in tband_core.c tband_backend_stream.c tband_backend_snapshot.c tband_backend_postmortem.c \
             tband_backend_external.c ports/cortex-m/tband_port_cortexm.c; do
      if arm-none-eabi-gcc -mthumb -mcpu=$cpu -std=c99 -pedantic -Wall -Wextra -Werror -ffreestanding -O2 \
           -c $cfg -I"$T/examples/vm" -I"$T/ports/vm" -I"$T" "$T/$f" -o "$W/x.o" 2>"$W/err"; then
        ext=$(arm-none-eabi-nm -u "$W/x.o" | awk '{print $2}' | grep -v '^tband_' | tr '\n' ' ')
        [ -z "$ext" ] && ok || bad "$f ($cpu $cfg) references $ext"
      else
        bad "$f ($cpu $cfg) does not compile: $(head -3 "$W/err")"
      fi
    done
  done
done
# the plain Cortex-M port: ITM streaming, BASEPRI and PRIMASK critical sections
printf '#define tband_configENABLE 1\n#define tband_configUSE_BACKEND_STREAMING 1\n#ifndef TBAND_CM_CPU_HZ\n#define TBAND_CM_CPU_HZ 168000000u\n#endif\n' >"$W/tband_config.h"
for crit in "" "-DTBAND_CM_CRITICAL_BASEPRI=0x50" "-DTBAND_CM_CPU_HZ=100000000u"; do
  for f in tband_core.c tband_backend_stream.c ports/cortex-m/tband_port_cortexm.c; do
    if arm-none-eabi-gcc -mthumb -mcpu=cortex-m4 -std=c99 -pedantic -Wall -Wextra -Werror -ffreestanding -O2 \
         -c $crit -I"$W" -I"$T/ports/cortex-m" -I"$T" "$T/$f" -o "$W/x.o" 2>"$W/err"; then
      ext=$(arm-none-eabi-nm -u "$W/x.o" | awk '{print $2}' | grep -v '^tband_' | tr '\n' ' ')
      [ -z "$ext" ] && ok || bad "$f (cortex-m port $crit) references $ext"
    else
      bad "$f (cortex-m port $crit) does not compile: $(head -3 "$W/err")"
    fi
  done
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
