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
# the Cortex-M port's assembly fast path (snapshot backend, a timestamp
# window): present on ARMv7-M/ARMv8-M Mainline and assembled in every variant
# (its CBZ/CBNZ reach 126 bytes): multiply or not, MOVS or MOVW for the ns
# factor, with and without the periodic drop report; absent on ARMv6-M. GCC
# and, where installed, Clang (naked functions with nothing but asm).
mkdir -p "$W/snap"
printf '#define tband_configENABLE 1\n#define tband_configUSE_BACKEND_SNAPSHOT 1\n#define tband_configBACKEND_SNAPSHOT_BUF_SIZE 1024\n' >"$W/snap/tband_config.h"
for v in "-DTBAND_CM_CPU_HZ=64000000u" "-DTBAND_CM_CPU_HZ=64000000u -Dtband_configTRACE_DROP_CNT_EVERY=0" \
         "-DTBAND_CM_CPU_HZ=3200000u" "-DTBAND_CM_CPU_HZ=100000000u" "-DTBAND_CM_CPU_HZ=64000000u -DTBAND_CM_TS_SHIFT=3"; do
  for cpu in cortex-m4 cortex-m7 cortex-m33 cortex-m0plus; do
    for cc in gcc clang; do
      case $cc in
      gcc) cmd="arm-none-eabi-gcc -mthumb -mcpu=$cpu" ;;
      clang)
        command -v clang >/dev/null || continue
        case $cpu in cortex-m33) tgt=thumbv8m.main-none-eabi ;; cortex-m0plus) tgt=thumbv6m-none-eabi ;; *) tgt=thumbv7em-none-eabi ;; esac
        cmd="clang --target=$tgt -mcpu=$cpu" ;;
      esac
      if $cmd -std=c99 -pedantic -Wall -Wextra -Werror -ffreestanding -O2 -c $v -I"$W/snap" \
           -I"$T/ports/cortex-m" -I"$T" "$T/ports/cortex-m/tband_port_cortexm.c" -o "$W/x.o" 2>"$W/err"; then
        n=$(arm-none-eabi-nm "$W/x.o" | grep -c ' U tband_c_')
        if [ $cpu = cortex-m0plus ]; then [ "$n" = 0 ] && ok || bad "asm path on ARMv6-M ($cc $v)"
        else [ "$n" = 6 ] && ok || bad "asm path missing ($cpu $cc $v): $n fallbacks referenced"; fi
      else
        bad "cortex-m port, snapshot ($cpu $cc $v) does not compile: $(head -3 "$W/err")"
      fi
    done
  done
done
# ... and streaming over ITM (the assembly writes the stimulus port itself)
mkdir -p "$W/itm"
printf '#define tband_configENABLE 1\n#define tband_configUSE_BACKEND_STREAMING 1\n' >"$W/itm/tband_config.h"
for v in "-DTBAND_CM_CPU_HZ=64000000u" "-DTBAND_CM_CPU_HZ=3200000u -DTBAND_CM_STREAM_ITM_PORT=31"; do
  for cc in "arm-none-eabi-gcc -mthumb -mcpu=cortex-m4" "clang --target=thumbv8m.main-none-eabi -mcpu=cortex-m33"; do
    command -v ${cc%% *} >/dev/null || continue
    if $cc -std=c99 -pedantic -Wall -Wextra -Werror -ffreestanding -O2 -c $v -I"$W/itm" \
         -I"$T/ports/cortex-m" -I"$T" "$T/ports/cortex-m/tband_port_cortexm.c" -o "$W/x.o" 2>"$W/err"; then
      n=$(arm-none-eabi-nm "$W/x.o" | grep -c ' U tband_c_')
      arm-none-eabi-nm "$W/x.o" | grep -q ' T tband_cm_itm_frame$' && [ "$n" = 6 ] && ok ||
        bad "ITM asm path missing (${cc%% *} $v): $n fallbacks referenced"
    else
      bad "cortex-m port, ITM streaming (${cc%% *} $v) does not compile: $(head -3 "$W/err")"
    fi
  done
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
