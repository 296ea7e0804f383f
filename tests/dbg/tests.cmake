# Debug and trace blocks (DWT, ITM, TPIU/SWO) on firmware built from
# firmware/dbg/ with target/cortexm/ (firmware/dbg.cmake).
find_program(SONDE_ARM_GCC_FOR_DBG arm-none-eabi-gcc)
if(SONDE_FIRMWARE AND SONDE_ARM_GCC_FOR_DBG)
  sonde_unit_test(test_dbg dbg/test_dbg.c LIBS sonde_vm sonde_itm LABELS firmware)
  target_compile_definitions(test_dbg PRIVATE SONDE_FIRMWARE_DIR="${CMAKE_BINARY_DIR}/firmware")
  add_dependencies(test_dbg fw_dbg_pc1209 fw_dbg_pc1205 fw_dbg_pc100f fw_dbg_pc1005 fw_dbg_pc1003
                   fw_dbg_ovf1003 fw_dbg_excdt fw_dbg_printf fw_dbg_cmp fw_dbg_gts)
endif()
if(SONDE_FIRMWARE AND SONDE_ARM_GCC_FOR_DBG)
  sonde_cli_test(dbg_swo LABELS firmware)
  sonde_cli_test(dbg_gts LABELS firmware)
  sonde_cli_test(dbg_observe LABELS firmware)
endif()
# The SWO pin's sample renderer against the SWO line decoder of src/swo.
sonde_unit_test(test_dbg_pin dbg/test_dbg_pin.c LIBS sonde_vm sonde_swo)
# Register-level tests of the DWT/ITM/TPIU (no firmware build needed).
sonde_unit_test(test_dbg_regs dbg/test_dbg_regs.c LIBS sonde_vm)
# "The PC at cycle T" (firmware/dbg/dbg_pcat.c): DWT PC samples at every
# Table 2 interval and phase, CYCMATCH, DWT_PCSR and sonde_vm_pc_at_cycle
# against the ground truth of the hooks, on every executor.
if(SONDE_FIRMWARE AND SONDE_ARM_GCC_FOR_DBG)
  sonde_unit_test(test_dbg_pcat dbg/test_dbg_pcat.c LIBS sonde_vm sonde_itm sonde_trace
                  LABELS firmware)
  target_compile_definitions(test_dbg_pcat PRIVATE SONDE_FIRMWARE_DIR="${CMAKE_BINARY_DIR}/firmware")
  add_dependencies(test_dbg_pcat fw_dbg_pcat fw_exc_latearrival_m3 fw_exc_nesting_m3 fw_exc_wfi_m3
                   fw_exc_svc_pendsv_m3 fw_exc_faults_m3 fw_exc_reset_m3 fw_exc_lazyfp_m4f
                   fw_exc_nesting_m0plus)
endif()
if(SONDE_FIRMWARE AND SONDE_ARM_GCC_FOR_DBG)
  sonde_cli_test(gdb_pcsr LABELS firmware)
endif()
# sonde_vm_pc_at_cycle() never runs the core past the program's exit.
if(SONDE_FIRMWARE AND SONDE_ARM_GCC_FOR_DBG)
  sonde_unit_test(test_pc_at_exit dbg/test_pc_at_exit.c LIBS sonde_vm LABELS firmware)
  target_compile_definitions(test_pc_at_exit PRIVATE SONDE_FIRMWARE_DIR="${CMAKE_BINARY_DIR}/firmware")
  add_dependencies(test_pc_at_exit fw_demo)
endif()

# `itm --line auto` through up to 5 % SWO clock error (issue 21 item 4).
if(SONDE_FIRMWARE AND SONDE_ARM_GCC_FOR_DBG)
  sonde_cli_test(itm_line_jitter LABELS firmware)
endif()

# Trace blocks on (PC sampling, exception trace, timestamps, MTB), every image
# of the build: compiled, block and one-at-a-time executors give the same SWO
# bytes, cycles, registers, debug-port reads and MTB buffer (issue 20).
if(SONDE_FIRMWARE AND SONDE_ARM_GCC_FOR_DBG)
  sonde_unit_test(test_dbg_exec_same dbg/test_dbg_exec_same.c LIBS sonde_vm LABELS firmware)
  target_compile_definitions(test_dbg_exec_same PRIVATE
    SONDE_FIRMWARE_DIR="${CMAKE_BINARY_DIR}/firmware")
  add_dependencies(test_dbg_exec_same firmware)
endif()
