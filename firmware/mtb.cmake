# MTB test firmwares (firmware/mtb/mtb_trace.c, tests/mtb/test_mtb.c).
set(_mtb_src mtb/mtb_trace.c ${CMAKE_SOURCE_DIR}/target/cortexm/mtb.c)
set(_mtb_inc ${CMAKE_SOURCE_DIR}/target/cortexm)
sonde_firmware(mtb_m33 SOURCES ${_mtb_src} CORE m33 MACHINE cm33 OPT -O1 INCLUDES ${_mtb_inc})
sonde_firmware(mtb_m0p SOURCES ${_mtb_src} CORE m0plus MACHINE cm0plus OPT -O1
               INCLUDES ${_mtb_inc})
# The M0+ register block where the machine file tests/mtb/m0p_regs.machine
# puts it (`mtb ... regs=0x41006000`, as on SAM D21).
sonde_firmware(mtb_m0p_regs SOURCES ${_mtb_src} CORE m0plus MACHINE cm0plus OPT -O1
               DEFINES MTB_SFR_BASE=0x41006000u INCLUDES ${_mtb_inc})
# 64-byte circle (MASK = 2): wraps many times.
sonde_firmware(mtb_wrap SOURCES ${_mtb_src} CORE m33 MACHINE cm33 OPT -O1
               DEFINES MTB_SIZE=64 INCLUDES ${_mtb_inc})
# Watermark at 0x40 (8 packets) with AUTOSTOP; and with AUTOHALT.
sonde_firmware(mtb_wm SOURCES ${_mtb_src} CORE m33 MACHINE cm33 OPT -O1
               DEFINES WATERMARK=0x40 FLOWBITS=1 INCLUDES ${_mtb_inc})
sonde_firmware(mtb_halt SOURCES ${_mtb_src} CORE m0plus MACHINE cm0plus OPT -O1
               DEFINES WATERMARK=0x40 FLOWBITS=2 INCLUDES ${_mtb_inc})
# Trace window from DWT comparators 0/1 (MTB TSTART/TSTOP, M33).
sonde_firmware(mtb_tstart SOURCES ${_mtb_src} CORE m33 MACHINE cm33 OPT -O1
               DEFINES TSTART_TEST=1 INCLUDES ${_mtb_inc})
# The same on the M0+, from the MTBDWT's comparators (cm0plus: mtbdwt=0xF0001000);
# three sessions on both cores: mtb_sessions_* below.
sonde_firmware(mtb_tstart_m0plus SOURCES ${_mtb_src} CORE m0plus MACHINE cm0plus OPT -O1
               DEFINES TSTART_TEST=1 INCLUDES ${_mtb_inc})
# The same with a 4 KiB buffer: every packet up to the first preemption at entry.
sonde_firmware(mtb_atentry_whole SOURCES ${_mtb_src} CORE m33 MACHINE cm33 OPT -O1
               DEFINES NEST_MODE=3 MTB_SIZE=4096 LOOPS=200000 INCLUDES ${_mtb_inc})
# Sessions forever, for `sonde mtb fetch` (tests/cli/mtb_fetch.sh): the fetch
# must leave TSTARTEN clear so that the next start cannot overwrite the buffer.
sonde_firmware(mtb_sessions_hang_m0plus SOURCES ${_mtb_src} CORE m0plus MACHINE cm0plus OPT -O1
               DEFINES TSTART_TEST=1 TSTART_FOREVER=1 TSTART_IRQ=1 INCLUDES ${_mtb_inc}
               CFLAGS -Wl,--build-id)
# Benchmark images (docs/benchmarks.md): the same long workload with the MTB on and off.
sonde_firmware(mtb_bench_on SOURCES ${_mtb_src} CORE m33 MACHINE cm33 OPT -O1
               DEFINES LOOPS=3000000 INCLUDES ${_mtb_inc})
sonde_firmware(mtb_bench_off SOURCES ${_mtb_src} CORE m33 MACHINE cm33 OPT -O1
               DEFINES LOOPS=3000000 USE_MTB=0 INCLUDES ${_mtb_inc})
# src/mtb decoder against the ground truth (tests/mtb/test_mtb_decode.c):
# 512-byte circles that wrap many times, with SysTick and PendSV in the window.
sonde_firmware(mtb_wrap_long SOURCES ${_mtb_src} CORE m33 MACHINE cm33 OPT -O1
               DEFINES MTB_SIZE=512 LOOPS=400 INCLUDES ${_mtb_inc})
sonde_firmware(mtb_wrap_m0p SOURCES ${_mtb_src} CORE m0plus MACHINE cm0plus OPT -O1
               DEFINES MTB_SIZE=512 LOOPS=400 INCLUDES ${_mtb_inc})
# bench/mtb_bench.c: a 64 KiB circle (machine with `mtb ... 64K`) filled several times.
sonde_firmware(mtb_bench64 SOURCES ${_mtb_src} CORE m33 MACHINE cm33 OPT -O1
               DEFINES MTB_SIZE=65536 LOOPS=20000 INCLUDES ${_mtb_inc})
# Nested (PendSV preempts SysTick) and tail-chained (PendSV after SysTick) exceptions;
foreach(_core m33 m0plus)
  if(_core STREQUAL m33)
    set(_mach cm33)
  else()
    set(_mach cm0plus)
  endif()
  sonde_firmware(mtb_nest_${_core} SOURCES ${_mtb_src} CORE ${_core} MACHINE ${_mach} OPT -O1
                 DEFINES NEST_MODE=1 LOOPS=60 INCLUDES ${_mtb_inc})
  sonde_firmware(mtb_chain_${_core} SOURCES ${_mtb_src} CORE ${_core} MACHINE ${_mach} OPT -O1
                 DEFINES NEST_MODE=2 LOOPS=60 INCLUDES ${_mtb_inc})
  # The timer preempts SysTick before its first instruction, its SysTick
  # packet in-line (_fast) or in the 64-byte circle's last slot (_slow).
  sonde_firmware(mtb_atentry_fast_${_core} SOURCES ${_mtb_src} CORE ${_core} MACHINE ${_mach}
                 OPT -O1 DEFINES NEST_MODE=3 MTB_SIZE=64 LOOPS=200000 INCLUDES ${_mtb_inc})
  sonde_firmware(mtb_atentry_slow_${_core} SOURCES ${_mtb_src} CORE ${_core} MACHINE ${_mach}
                 OPT -O1 DEFINES NEST_MODE=3 NEST_SLOW_SLOT=1 MTB_SIZE=64 LOOPS=200000
                 INCLUDES ${_mtb_inc})
  # Three TSTART/TSTOP sessions with SysTick inside and outside them.
  sonde_firmware(mtb_sessions_${_core} SOURCES ${_mtb_src} CORE ${_core} MACHINE ${_mach} OPT -O1
                 DEFINES TSTART_TEST=1 WINDOWS=3 TSTART_IRQ=1 INCLUDES ${_mtb_inc})
endforeach()
# A real fault with a post-mortem bundle (firmware/mtb/mtb_fault.c).
sonde_firmware(mtb_fault_m33 SOURCES mtb/mtb_fault.c ${CMAKE_SOURCE_DIR}/target/cortexm/mtb.c
               CORE m33 MACHINE cm33 OPT -O1 INCLUDES ${_mtb_inc} CFLAGS -Wl,--build-id)
sonde_firmware(mtb_fault_m0plus SOURCES mtb/mtb_fault.c ${CMAKE_SOURCE_DIR}/target/cortexm/mtb.c
               CORE m0plus MACHINE cm0plus OPT -O1 INCLUDES ${_mtb_inc} CFLAGS -Wl,--build-id)
sonde_firmware(mtb_fault_reset_m33 SOURCES mtb/mtb_fault.c ${CMAKE_SOURCE_DIR}/target/cortexm/mtb.c
               CORE m33 MACHINE cm33 OPT -O1 DEFINES RESET_TEST=1 INCLUDES ${_mtb_inc} CFLAGS -Wl,--build-id)
sonde_firmware(mtb_fault_reset_m0plus SOURCES mtb/mtb_fault.c ${CMAKE_SOURCE_DIR}/target/cortexm/mtb.c
               CORE m0plus MACHINE cm0plus OPT -O1 DEFINES RESET_TEST=1 INCLUDES ${_mtb_inc} CFLAGS -Wl,--build-id)
sonde_firmware(mtb_fault_hang_m33 SOURCES mtb/mtb_fault.c ${CMAKE_SOURCE_DIR}/target/cortexm/mtb.c
               CORE m33 MACHINE cm33 OPT -O1 DEFINES HANG_TEST=1 INCLUDES ${_mtb_inc} CFLAGS -Wl,--build-id)
# Demos: a wild function pointer and a corrupted return address (docs/mtb.md).
foreach(_core m33 m0plus)
  if(_core STREQUAL m33)
    set(_mach cm33)
  else()
    set(_mach cm0plus)
  endif()
  sonde_firmware(mtb_wild_${_core} SOURCES mtb/mtb_fault.c ${CMAKE_SOURCE_DIR}/target/cortexm/mtb.c
                 CORE ${_core} MACHINE ${_mach} OPT -O1 DEFINES FAULT_KIND=1 INCLUDES ${_mtb_inc} CFLAGS -Wl,--build-id)
  sonde_firmware(mtb_smash_${_core} SOURCES mtb/mtb_fault.c ${CMAKE_SOURCE_DIR}/target/cortexm/mtb.c
                 CORE ${_core} MACHINE ${_mach} OPT -O1 DEFINES FAULT_KIND=2 INCLUDES ${_mtb_inc} CFLAGS -Wl,--build-id)
endforeach()
sonde_firmware(mtb_fault_hang_m0plus SOURCES mtb/mtb_fault.c ${CMAKE_SOURCE_DIR}/target/cortexm/mtb.c
               CORE m0plus MACHINE cm0plus OPT -O1 DEFINES HANG_TEST=1 INCLUDES ${_mtb_inc} CFLAGS -Wl,--build-id)
# Stack overflow demos (FAULT_KIND=3): MSPLIM/STKOF on the M33; on the M0+ a
# task stack (PSP) overflowing into the callback below it.
foreach(_core m33 m0plus)
  if(_core STREQUAL m33)
    set(_mach cm33)
  else()
    set(_mach cm0plus)
  endif()
  sonde_firmware(mtb_stack_${_core} SOURCES mtb/mtb_fault.c ${CMAKE_SOURCE_DIR}/target/cortexm/mtb.c
                 CORE ${_core} MACHINE ${_mach} OPT -O1 DEFINES FAULT_KIND=3 INCLUDES ${_mtb_inc}
                 CFLAGS -Wl,--build-id)
endforeach()
# Build-id checks (tests/cli/mtb_decode.sh): the same code as mtb_fault_m33
# with one more constant (another build id), and linked without a build id.
sonde_firmware(mtb_fault_other_m33 SOURCES mtb/mtb_fault.c ${CMAKE_SOURCE_DIR}/target/cortexm/mtb.c
               CORE m33 MACHINE cm33 OPT -O1 DEFINES BUILD_TAG=2 INCLUDES ${_mtb_inc}
               CFLAGS -Wl,--build-id)
sonde_firmware(mtb_fault_noid_m33 SOURCES mtb/mtb_fault.c ${CMAKE_SOURCE_DIR}/target/cortexm/mtb.c
               CORE m33 MACHINE cm33 OPT -O1 INCLUDES ${_mtb_inc})
# FPU registers in the bundle: the fault image built for the M33's FPv5-SP.
sonde_firmware(mtb_fault_fpu_m33 SOURCES mtb/mtb_fault.c ${CMAKE_SOURCE_DIR}/target/cortexm/mtb.c
               CORE m33f MACHINE cm33 OPT -O1 DEFINES FPU_TEST=1 INCLUDES ${_mtb_inc}
               CFLAGS -Wl,--build-id)
# `make demo` (scripts/demo): the wild function pointer on the M33, spinning
# after the capture so that `sonde mtb fetch` can copy the stored bundle.
sonde_firmware(mtb_wild_hang_m33 SOURCES mtb/mtb_fault.c ${CMAKE_SOURCE_DIR}/target/cortexm/mtb.c
               CORE m33 MACHINE cm33 OPT -O1 DEFINES FAULT_KIND=1 HANG_TEST=1 INCLUDES ${_mtb_inc}
               CFLAGS -Wl,--build-id)
