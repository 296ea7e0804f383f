# The tracer (target/tband) on the virtual Cortex-M: a bare-metal demo,
# streamed over the UART and as a snapshot, a post-mortem ring that survives a
# fault and a reset, and a cycles-per-event benchmark
# on the Cortex-M4 model. Tests: tests/cli/tband_vm.sh.
set(_tb ${CMAKE_SOURCE_DIR}/target/tband)
set(_tb_src ${_tb}/examples/vm/demo.c ${_tb}/tband_core.c ${_tb}/tband_backend_stream.c
  ${_tb}/tband_backend_snapshot.c ${_tb}/ports/cortex-m/tband_port_cortexm.c)
set(_tb_inc ${_tb}/examples/vm ${_tb}/ports/vm ${_tb})
sonde_firmware(tband_vm_stream SOURCES ${_tb_src} CORE m3 MACHINE cm3 OPT -O2 INCLUDES ${_tb_inc})
sonde_firmware(tband_vm_snapshot SOURCES ${_tb_src} CORE m3 MACHINE cm3 OPT -O2 INCLUDES ${_tb_inc}
  DEFINES TBAND_DEMO_SNAPSHOT)
# streamed over ITM stimulus port 0 and the SWO pin, timestamps from DWT_CYCCNT
sonde_firmware(tband_vm_stream_itm SOURCES ${_tb_src} ${CMAKE_SOURCE_DIR}/target/cortexm/cm_trace.c
  CORE m3 MACHINE cm3 OPT -O2 INCLUDES ${_tb_inc} ${CMAKE_SOURCE_DIR}/target/cortexm
  DEFINES TBAND_VM_STREAM_ITM TBAND_VM_USE_DWT)
sonde_firmware(tband_vm_stream_basepri SOURCES ${_tb_src} CORE m3 MACHINE cm3 OPT -O2 INCLUDES ${_tb_inc}
  DEFINES "TBAND_CM_CRITICAL_BASEPRI=0x80")
sonde_firmware(tband_vm_bench_snapshot SOURCES ${_tb_src} CORE m4f MACHINE cm4f OPT -O2 INCLUDES ${_tb_inc}
  DEFINES TBAND_DEMO_SNAPSHOT TBAND_DEMO_BENCH TBAND_CM_CPU_HZ=64000000u)
# the same with a clock that divides 1 GHz, so raw cycles are traced (no ns
# conversion); only the cycle counts of this one are meaningful
sonde_firmware(tband_vm_bench_snapshot_rawts SOURCES ${_tb_src} CORE m4f MACHINE cm4f OPT -O2 INCLUDES ${_tb_inc}
  DEFINES TBAND_DEMO_SNAPSHOT TBAND_DEMO_BENCH TBAND_CM_CPU_HZ=100000000u)
# opt-in coarse timestamps: cycles >> 3 = 125 ns units at 64 MHz (no ns multiply)
sonde_firmware(tband_vm_bench_snapshot_ts3 SOURCES ${_tb_src} CORE m4f MACHINE cm4f OPT -O2 INCLUDES ${_tb_inc}
  DEFINES TBAND_DEMO_SNAPSHOT TBAND_DEMO_BENCH TBAND_CM_CPU_HZ=64000000u TBAND_CM_TS_SHIFT=3)
sonde_firmware(tband_vm_bench_stream_ts3 SOURCES ${_tb_src} CORE m4f MACHINE cm4f OPT -O2 INCLUDES ${_tb_inc}
  DEFINES TBAND_DEMO_BENCH TBAND_CM_CPU_HZ=64000000u TBAND_CM_TS_SHIFT=3)
# the same benchmark at -Os (docs/benchmarks.md compares the two)
sonde_firmware(tband_vm_bench_snapshot_os SOURCES ${_tb_src} CORE m4f MACHINE cm4f OPT -Os INCLUDES ${_tb_inc}
  DEFINES TBAND_DEMO_SNAPSHOT TBAND_DEMO_BENCH TBAND_CM_CPU_HZ=64000000u)
sonde_firmware(tband_vm_bench_stream_os SOURCES ${_tb_src} CORE m4f MACHINE cm4f OPT -Os INCLUDES ${_tb_inc}
  DEFINES TBAND_DEMO_BENCH TBAND_CM_CPU_HZ=64000000u)
# with the real DWT_CYCCNT, and streaming over ITM/SWO
sonde_firmware(tband_vm_bench_snapshot_dwt SOURCES ${_tb_src} CORE m4f MACHINE cm4f OPT -O2 INCLUDES ${_tb_inc}
  DEFINES TBAND_DEMO_SNAPSHOT TBAND_DEMO_BENCH TBAND_VM_USE_DWT TBAND_CM_CPU_HZ=64000000u)
sonde_firmware(tband_vm_bench_stream_itm SOURCES ${_tb_src} ${CMAKE_SOURCE_DIR}/target/cortexm/cm_trace.c
  CORE m4f MACHINE cm4f OPT -O2 INCLUDES ${_tb_inc} ${CMAKE_SOURCE_DIR}/target/cortexm
  DEFINES TBAND_DEMO_BENCH TBAND_VM_STREAM_ITM TBAND_VM_USE_DWT TBAND_CM_CPU_HZ=64000000u)
sonde_firmware(tband_vm_bench_stream SOURCES ${_tb_src} CORE m4f MACHINE cm4f OPT -O2 INCLUDES ${_tb_inc}
  DEFINES TBAND_DEMO_BENCH TBAND_CM_CPU_HZ=64000000u)
# the fast path's timestamp window across counter wrap and window edges (64 MHz, DWT)
sonde_firmware(tband_vm_window SOURCES ${_tb_src} CORE m4f MACHINE cm4f OPT -O2 INCLUDES ${_tb_inc}
  DEFINES TBAND_DEMO_WINDOW TBAND_VM_USE_DWT TBAND_CM_CPU_HZ=64000000u)
# the one-field events (the port's assembly path) in every timestamp length,
# snapshot, 64 MHz, DWT; and the same with a periodic drop report every 7
# events, without the phase past 2^56, so that the buffer fills on the fast path
sonde_firmware(tband_vm_asmcheck SOURCES ${_tb_src} CORE m4f MACHINE cm4f OPT -O2 INCLUDES ${_tb_inc}
  DEFINES TBAND_DEMO_ASMCHECK TBAND_DEMO_SNAPSHOT TBAND_VM_USE_DWT TBAND_CM_CPU_HZ=64000000u
  tband_configBACKEND_SNAPSHOT_BUF_SIZE=32768)
sonde_firmware(tband_vm_asmcheck_every SOURCES ${_tb_src} CORE m4f MACHINE cm4f OPT -O2 INCLUDES ${_tb_inc}
  DEFINES TBAND_DEMO_ASMCHECK TBAND_DEMO_SNAPSHOT TBAND_VM_USE_DWT TBAND_CM_CPU_HZ=64000000u
  tband_configBACKEND_SNAPSHOT_BUF_SIZE=32768 tband_configTRACE_DROP_CNT_EVERY=7 TBAND_DEMO_ASMCHECK_PHASES=5)
# the same streamed over ITM port 0 (the assembly writes the stimulus port)
sonde_firmware(tband_vm_asmcheck_itm SOURCES ${_tb_src} ${CMAKE_SOURCE_DIR}/target/cortexm/cm_trace.c
  CORE m4f MACHINE cm4f OPT -O2 INCLUDES ${_tb_inc} ${CMAKE_SOURCE_DIR}/target/cortexm
  DEFINES TBAND_DEMO_ASMCHECK TBAND_VM_STREAM_ITM TBAND_VM_USE_DWT TBAND_CM_CPU_HZ=64000000u)
# the tracer's own cost without a transport: the external backend with a
# handler that keeps nothing (the figures go to the UART directly)
sonde_firmware(tband_vm_bench_null SOURCES ${_tb_src} ${_tb}/tband_backend_external.c CORE m4f
  MACHINE cm4f OPT -O2 INCLUDES ${_tb_inc} DEFINES TBAND_DEMO_BENCH TBAND_DEMO_NULL TBAND_CM_CPU_HZ=64000000u)
sonde_firmware(tband_vm_bench_null_os SOURCES ${_tb_src} ${_tb}/tband_backend_external.c CORE m4f
  MACHINE cm4f OPT -Os INCLUDES ${_tb_inc} DEFINES TBAND_DEMO_BENCH TBAND_DEMO_NULL TBAND_CM_CPU_HZ=64000000u)
sonde_firmware(tband_vm_postmortem SOURCES ${_tb}/examples/vm/postmortem.c ${_tb}/tband_core.c
  ${_tb}/tband_backend_postmortem.c ${_tb}/ports/cortex-m/tband_port_cortexm.c
  CORE m3 MACHINE cm3 OPT -O2 INCLUDES ${_tb_inc} DEFINES TBAND_DEMO_POSTMORTEM)
# FreeRTOS on the VM (ARM_CM3 port), only with a kernel checkout (FREERTOS_KERNEL,
# see tests/tband/tests.cmake); never copied into the repository.
if(FREERTOS_KERNEL AND EXISTS "${FREERTOS_KERNEL}/portable/GCC/ARM_CM3/port.c")
  set(_k ${FREERTOS_KERNEL})
  sonde_firmware(tband_vm_freertos
    SOURCES ${_tb}/examples/vm_freertos/main.c ${_tb}/tband_core.c ${_tb}/tband_backend_stream.c
      ${_tb}/tband_freertos.c ${_tb}/ports/cortex-m/tband_port_cortexm.c
      ${_k}/tasks.c ${_k}/queue.c ${_k}/list.c ${_k}/timers.c ${_k}/event_groups.c
      ${_k}/stream_buffer.c ${_k}/portable/GCC/ARM_CM3/port.c ${_k}/portable/MemMang/heap_4.c
    CORE m3 MACHINE cm3 OPT -O2
    INCLUDES ${_tb}/examples/vm_freertos ${_tb}/ports/vm ${_tb} ${_k}/include ${_k}/portable/GCC/ARM_CM3)
endif()
if(EXISTS ${CMAKE_SOURCE_DIR}/tests/cli/tband_vm.sh)
  sonde_cli_test(tband_vm)
  set_property(TEST cli_tband_vm APPEND PROPERTY ENVIRONMENT "SONDE_FIRMWARE_DIR=${SONDE_FIRMWARE_DIR}")
endif()
