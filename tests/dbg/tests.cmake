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

# `itm --line auto` through up to 5 % SWO clock error (issue 21 item 4).
if(SONDE_FIRMWARE AND SONDE_ARM_GCC_FOR_DBG)
  sonde_cli_test(itm_line_jitter LABELS firmware)
endif()
