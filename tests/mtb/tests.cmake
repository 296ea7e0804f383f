# MTB of the virtual Cortex-M (src/vm/dbg_mtb.c) on firmware built from
# firmware/mtb/ with target/cortexm/mtb.c (firmware/mtb.cmake).
find_program(SONDE_ARM_GCC_FOR_MTB arm-none-eabi-gcc)
if(SONDE_FIRMWARE AND SONDE_ARM_GCC_FOR_MTB)
  sonde_unit_test(test_mtb mtb/test_mtb.c LIBS sonde_vm LABELS firmware)
  target_compile_definitions(test_mtb PRIVATE SONDE_FIRMWARE_DIR="${CMAKE_BINARY_DIR}/firmware")
  add_dependencies(test_mtb fw_mtb_m33 fw_mtb_m0p fw_mtb_m0p_regs fw_mtb_wrap fw_mtb_wm fw_mtb_halt fw_mtb_tstart)
endif()
# Register-level tests (no firmware needed).
sonde_unit_test(test_mtb_regs mtb/test_mtb_regs.c LIBS sonde_vm)
