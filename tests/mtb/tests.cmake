# MTB of the virtual Cortex-M (src/vm/dbg_mtb.c) on firmware built from
# firmware/mtb/ with target/cortexm/mtb.c (firmware/mtb.cmake).
find_program(SONDE_ARM_GCC_FOR_MTB arm-none-eabi-gcc)
if(SONDE_FIRMWARE AND SONDE_ARM_GCC_FOR_MTB)
  sonde_unit_test(test_mtb mtb/test_mtb.c LIBS sonde_vm LABELS firmware)
  target_compile_definitions(test_mtb PRIVATE SONDE_FIRMWARE_DIR="${CMAKE_BINARY_DIR}/firmware")
  add_dependencies(test_mtb fw_mtb_m33 fw_mtb_m0p fw_mtb_m0p_regs fw_mtb_wrap fw_mtb_wm fw_mtb_halt fw_mtb_tstart
    fw_mtb_tstart_m0plus fw_mtb_sessions_m33 fw_mtb_sessions_m0plus
    fw_mtb_atentry_fast_m33 fw_mtb_atentry_slow_m33 fw_mtb_atentry_fast_m0plus
    fw_mtb_atentry_slow_m0plus fw_mtb_atentry_whole)
endif()
# Register-level tests (no firmware needed).
sonde_unit_test(test_mtb_regs mtb/test_mtb_regs.c LIBS sonde_vm)
# src/mtb: decode the buffer the VM's MTB wrote and compare the rebuilt
# instruction history with the retire hook's ground truth; leaves dumps in
# mtb_dumps/ for the CLI test (fixture).
if(SONDE_FIRMWARE AND SONDE_ARM_GCC_FOR_MTB)
  sonde_unit_test(test_mtb_decode mtb/test_mtb_decode.c LIBS sonde_mtb sonde_sym sonde_vm LABELS firmware)
  target_compile_definitions(test_mtb_decode PRIVATE SONDE_FIRMWARE_DIR="${CMAKE_BINARY_DIR}/firmware")
  add_dependencies(test_mtb_decode fw_mtb_m33 fw_mtb_m0p fw_mtb_wrap fw_mtb_wrap_long fw_mtb_wrap_m0p fw_mtb_tstart
    fw_mtb_tstart_m0plus fw_mtb_sessions_m33 fw_mtb_sessions_m0plus
    fw_mtb_nest_m33 fw_mtb_nest_m0plus fw_mtb_chain_m33 fw_mtb_chain_m0plus
    fw_mtb_fault_m33 fw_mtb_fault_m0plus fw_mtb_fault_reset_m33 fw_mtb_fault_reset_m0plus
    fw_mtb_wild_m33 fw_mtb_wild_m0plus fw_mtb_smash_m33 fw_mtb_smash_m0plus
    fw_mtb_stack_m33 fw_mtb_stack_m0plus fw_mtb_fault_fpu_m33 fw_mtb_fault_other_m33 fw_mtb_fault_noid_m33)
  set_tests_properties(test_mtb_decode PROPERTIES FIXTURES_SETUP mtb_dumps)
endif()
sonde_unit_test(test_mtb_packets mtb/test_mtb_packets.c LIBS sonde_mtb sonde_sym)
if(SONDE_FIRMWARE AND SONDE_ARM_GCC_FOR_MTB)
  sonde_cli_test(mtb_decode LABELS firmware)
  set_tests_properties(cli_mtb_decode PROPERTIES FIXTURES_REQUIRED mtb_dumps)
endif()
# sonde mtb fetch through the VM's GDB server.
if(SONDE_FIRMWARE AND SONDE_ARM_GCC_FOR_MTB)
  sonde_cli_test(mtb_fetch LABELS firmware)
endif()
# sonde mtb fetch through real OpenOCD attached to the VM's JTAG port (cm33,
# cm0plus); OpenOCD is a test dependency (the script fails without it).
if(SONDE_FIRMWARE AND SONDE_ARM_GCC_FOR_MTB)
  sonde_cli_test(mtb_fetch_openocd LABELS firmware openocd)
endif()
