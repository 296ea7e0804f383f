# Debug and trace block firmwares (firmware/dbg/dbg_trace.c, tests/dbg/test_dbg.c).
# PC sampling at every interval of FrankenTrace's Table 2 (cc2650, 48 MHz):
#   name:CTRL13:ACPR
foreach(t pc1209:0x1209:47 pc1205:0x1205:11 pc100f:0x100f:5 pc1005:0x1005:1 pc1003:0x1003:0
          ovf1003:0x1003:47)
  string(REPLACE ":" ";" t ${t})
  list(GET t 0 n)
  list(GET t 1 ctrl)
  list(GET t 2 acpr)
  sonde_firmware(dbg_${n} SOURCES dbg/dbg_trace.c ${CMAKE_SOURCE_DIR}/target/cortexm/cm_trace.c
                 CORE m3 MACHINE cc2650 OPT -O2 DEFINES CTRL13=${ctrl} ACPR=${acpr}
                 INCLUDES ${CMAKE_SOURCE_DIR}/target/cortexm)
endforeach()
sonde_firmware(dbg_excdt SOURCES dbg/dbg_trace.c ${CMAKE_SOURCE_DIR}/target/cortexm/cm_trace.c
               CORE m3 MACHINE cc2650 OPT -O2 DEFINES EXC=1 DT=1 ACPR=0
               INCLUDES ${CMAKE_SOURCE_DIR}/target/cortexm)
sonde_firmware(dbg_printf SOURCES dbg/dbg_trace.c ${CMAKE_SOURCE_DIR}/target/cortexm/cm_trace.c
               CORE m3 MACHINE cc2650 OPT -O2 DEFINES PRINTF=1 ACPR=47
               INCLUDES ${CMAKE_SOURCE_DIR}/target/cortexm)
sonde_firmware(dbg_printf_fmt SOURCES dbg/dbg_trace.c ${CMAKE_SOURCE_DIR}/target/cortexm/cm_trace.c
               CORE m3 MACHINE cc2650 OPT -O2 DEFINES PRINTF=1 ACPR=47 FORMATTER=1
               INCLUDES ${CMAKE_SOURCE_DIR}/target/cortexm)
# Benchmark images (docs/benchmarks.md): the same workload, long, with PC
# sampling every 128 cycles + exception trace at 48 Mbaud, and with no trace.
sonde_firmware(dbg_bench_on SOURCES dbg/dbg_trace.c ${CMAKE_SOURCE_DIR}/target/cortexm/cm_trace.c
               CORE m3 MACHINE cc2650 OPT -O2 DEFINES CTRL13=0x1003 EXC=1 ACPR=0 REPS=3000
               INCLUDES ${CMAKE_SOURCE_DIR}/target/cortexm)
sonde_firmware(dbg_bench_off SOURCES dbg/dbg_trace.c ${CMAKE_SOURCE_DIR}/target/cortexm/cm_trace.c
               CORE m3 MACHINE cc2650 OPT -O2 DEFINES ACPR=0 REPS=3000
               INCLUDES ${CMAKE_SOURCE_DIR}/target/cortexm)
# Combined benchmark (issue 3 "Performance", docs/benchmarks.md): on cm33 (64 MHz,
# has an MTB) the same workload with PC sampling every 128 cycles + exception
# trace + the MTB (4 KiB circle) all on, and with none of them.
sonde_firmware(dbg_bench_all_on SOURCES dbg/dbg_trace.c ${CMAKE_SOURCE_DIR}/target/cortexm/cm_trace.c
               ${CMAKE_SOURCE_DIR}/target/cortexm/mtb.c
               CORE m33 MACHINE cm33 OPT -O2 DEFINES CTRL13=0x1003 EXC=1 USE_MTB=1 ACPR=0 REPS=3000
               INCLUDES ${CMAKE_SOURCE_DIR}/target/cortexm)
# The combined image at the test length (tests/cli/dbg_observe.sh).
sonde_firmware(dbg_all SOURCES dbg/dbg_trace.c ${CMAKE_SOURCE_DIR}/target/cortexm/cm_trace.c
               ${CMAKE_SOURCE_DIR}/target/cortexm/mtb.c
               CORE m33 MACHINE cm33 OPT -O2 DEFINES CTRL13=0x1003 EXC=1 USE_MTB=1 ACPR=0
               INCLUDES ${CMAKE_SOURCE_DIR}/target/cortexm)
sonde_firmware(dbg_bench_all_off SOURCES dbg/dbg_trace.c ${CMAKE_SOURCE_DIR}/target/cortexm/cm_trace.c
               CORE m33 MACHINE cm33 OPT -O2 DEFINES ACPR=0 REPS=3000
               INCLUDES ${CMAKE_SOURCE_DIR}/target/cortexm)
# DWT CYCMATCH and linked data value comparators (firmware/dbg/dbg_cmp.c).
sonde_firmware(dbg_cmp SOURCES dbg/dbg_cmp.c ${CMAKE_SOURCE_DIR}/target/cortexm/cm_trace.c
               CORE m3 MACHINE cc2650 OPT -O2 DEFINES ACPR=0
               INCLUDES ${CMAKE_SOURCE_DIR}/target/cortexm)
# ITM global timestamps (firmware/dbg/dbg_gts.c).
sonde_firmware(dbg_gts SOURCES dbg/dbg_gts.c ${CMAKE_SOURCE_DIR}/target/cortexm/cm_trace.c
               CORE m3 MACHINE cc2650 OPT -O2 DEFINES ACPR=0
               INCLUDES ${CMAKE_SOURCE_DIR}/target/cortexm)
# The same, phases 1-2 only, at 16 Mbaud (ACPR 2) for the waveform CLI test.
sonde_firmware(dbg_gts_short SOURCES dbg/dbg_gts.c ${CMAKE_SOURCE_DIR}/target/cortexm/cm_trace.c
               CORE m3 MACHINE cc2650 OPT -O2 DEFINES ACPR=2 SHORT=1
               INCLUDES ${CMAKE_SOURCE_DIR}/target/cortexm)
# "The PC at cycle T" (tests/dbg/test_dbg_pcat.c): multi-cycle instructions,
# stalls, nested and tail-chained exceptions, WFI; the test sets the trace
# blocks through the debug port.
sonde_firmware(dbg_pcat SOURCES dbg/dbg_pcat.c CORE m3 MACHINE cc2650 OPT -O2)
