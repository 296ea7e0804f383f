# Firmware test programs (firmware/tests/fw_*.c), each built for every core at
# -O0, -O2 and -Os: fw_<prog>_<core>_<opt>.elf. tests/firmware/tests.cmake
# runs them on the VM and compares with the same C built for the host.
include(${CMAKE_CURRENT_LIST_DIR}/tests/fwtests_list.cmake)
foreach(prog ${SONDE_FWTEST_PROGRAMS})
  foreach(cm ${SONDE_FWTEST_CORES})
    string(REPLACE ":" ";" cm ${cm})
    list(GET cm 0 core)
    list(GET cm 1 mach)
    foreach(opt ${SONDE_FWTEST_OPTS})
      sonde_firmware(fw_${prog}_${core}_${opt} SOURCES tests/fw_${prog}.c
                     CORE ${core} MACHINE ${mach} OPT -${opt} SEMIHOSTING LIBS -lm -u _printf_float)
    endforeach()
  endforeach()
endforeach()

# The QEMU comparison image (tests/firmware/qemu_compare.sh).
foreach(opt O0 O2 Os)
  sonde_firmware(qemu_cmp_m3_${opt} SOURCES tests/qemu_cmp.c CORE m3 MACHINE cm3 OPT -${opt})
  sonde_firmware(qemu_cmp_m4f_${opt} SOURCES tests/qemu_cmp.c CORE m4f MACHINE cm4f OPT -${opt})
  sonde_firmware(qemu_cmp_m0plus_${opt} SOURCES tests/qemu_cmp.c CORE m0plus MACHINE microbit OPT -${opt})
endforeach()

# Images for the `sonde run` CLI tests (tests/cli/run_*.sh).
sonde_firmware(run_lockup SOURCES tests/run_lockup.c CORE m3 MACHINE cm3 OPT -O1)
sonde_firmware(run_forever SOURCES tests/run_forever.c CORE m3 MACHINE cm3 OPT -O1)
sonde_firmware(run_exit_m0plus SOURCES tests/fw_crc32.c CORE m0plus MACHINE cm0plus OPT -O2 SEMIHOSTING)
# Interrupt-heavy image (SysTick and timer IRQs: entries, returns, tail-chains) for run_trace.sh.
sonde_firmware(run_irq SOURCES bench/bench_irq.c CORE m3 MACHINE cm3 OPT -O2 DEFINES BENCH_ROUNDS=4)

# The firmware test programs for the QEMU comparison: output through SYS_WRITE0
# (common/syscalls_write0.c) instead of rdimon, whose start-up probing differs
# between QEMU and the VM.
foreach(prog ${SONDE_FWTEST_PROGRAMS})
  sonde_firmware(qemu_fw_${prog}_m3 SOURCES tests/fw_${prog}.c common/syscalls_write0.c
                 CORE m3 MACHINE cm3 OPT -O2 LIBS -lm -u _printf_float)
  sonde_firmware(qemu_fw_${prog}_m4f SOURCES tests/fw_${prog}.c common/syscalls_write0.c
                 CORE m4f MACHINE cm4f OPT -O2 LIBS -lm -u _printf_float)
  sonde_firmware(qemu_fw_${prog}_m0plus SOURCES tests/fw_${prog}.c common/syscalls_write0.c
                 CORE m0plus MACHINE microbit OPT -Os LIBS -lm -u _printf_float)
endforeach()
sonde_firmware(run_vectors SOURCES tests/run_vectors.c CORE m3 MACHINE cm3 OPT -O2)
# A runner image built around exceptions (nesting, tail-chaining, SVC/PendSV; frankentrace_runner.sh).
sonde_firmware(ft_irq SOURCES ft/ft_irq.c ${CMAKE_SOURCE_DIR}/target/cortexm/frankentrace/ft_runner.c
               ${CMAKE_SOURCE_DIR}/target/cortexm/frankentrace/ft_setup.c
               ${CMAKE_SOURCE_DIR}/target/cortexm/cm_trace.c
               CORE m3 MACHINE cm3 OPT -O2 INCLUDES ${CMAKE_SOURCE_DIR}/target/cortexm/frankentrace)
# Runner images with the LSU plan (tests/cli/frankentrace_lsu.sh): flash, SRAM and GPIO with
# pended interrupts and a BASEPRI critical section; the same with PRIMASK (an ITM overflow the
# host reports); ft_irq with flash and SRAM; ft_lsu without its DebugMon_Handler (an error).
foreach(t ft_lsu:ft_lsu.c:NONE ft_lsu_primask:ft_lsu.c:FT_PRIMASK=1 ft_lsu_irq:ft_irq.c:FT_LSU=1
          ft_lsu_nomon:ft_lsu.c:FT_NO_MONITOR=1 ft_lsu_bench:ft_lsu.c:FT_ROUNDS=2000
          ft_lsu_one:ft_lsu.c:FT_ONE_RANGE=1)
  string(REPLACE ":" ";" t ${t})
  list(GET t 0 n)
  list(GET t 1 src)
  list(GET t 2 def)
  sonde_firmware(${n} SOURCES ft/${src} ${CMAKE_SOURCE_DIR}/target/cortexm/frankentrace/ft_runner.c
                 ${CMAKE_SOURCE_DIR}/target/cortexm/frankentrace/ft_setup.c
                 ${CMAKE_SOURCE_DIR}/target/cortexm/cm_trace.c
                 CORE m3 MACHINE cm3 OPT -O2 DEFINES ${def}
                 INCLUDES ${CMAKE_SOURCE_DIR}/target/cortexm/frankentrace)
endforeach()
# An unmodified program with sparse SRAM/GPIO transfers for the noninvasive probe mode.
sonde_firmware(ft_sparse SOURCES ft/ft_sparse.c CORE m3 MACHINE cm3 OPT -O2 SEMIHOSTING)
# About a million cycles per iteration (bench_frankentrace_run --runner).
sonde_firmware(ft_work SOURCES ft/ft_work.c ${CMAKE_SOURCE_DIR}/target/cortexm/frankentrace/ft_runner.c
               ${CMAKE_SOURCE_DIR}/target/cortexm/frankentrace/ft_setup.c
               ${CMAKE_SOURCE_DIR}/target/cortexm/cm_trace.c
               CORE m3 MACHINE cm3 OPT -O2 INCLUDES ${CMAKE_SOURCE_DIR}/target/cortexm/frankentrace)
# The same program without the runner, for `frankentrace run --probe` (frankentrace_run.sh).
sonde_firmware(ft_plain SOURCES ft/ft_prog.c CORE m3 MACHINE cm3 OPT -O2 DEFINES FT_UNMODIFIED=1)
# FrankenTrace runner firmware (target/cortexm/frankentrace; tests/cli/frankentrace_stitch.sh).
foreach(t ft_prog:512:8000000:0 ft_prog128:128:48000000:0 ft_nondet:128:48000000:1
          ft_prog192:192:24000000:0 ft_prog2048:2048:2000000:0 ft_badn:64:8000000:0
          ft_badbaud:512:7000000:0)
  string(REPLACE ":" ";" t ${t})
  list(GET t 0 n)
  list(GET t 1 ftn)
  list(GET t 2 baud)
  list(GET t 3 nondet)
  set(extra FT_PLAIN=1)
  if(nondet)
    set(extra NONDET=1)
  endif()
  sonde_firmware(${n} SOURCES ft/ft_prog.c ${CMAKE_SOURCE_DIR}/target/cortexm/frankentrace/ft_runner.c
                 ${CMAKE_SOURCE_DIR}/target/cortexm/frankentrace/ft_setup.c
                 ${CMAKE_SOURCE_DIR}/target/cortexm/cm_trace.c
                 CORE m3 MACHINE cm3 OPT -O2 DEFINES FT_N=${ftn} FT_BAUD=${baud} ${extra}
                 INCLUDES ${CMAKE_SOURCE_DIR}/target/cortexm/frankentrace)
endforeach()
