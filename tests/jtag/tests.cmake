# The JTAG debug port (src/vm/jtag_*.c, issue 16): its TAP/DP/AP state
# machines through the remote_bitbang protocol, and real OpenOCD attached to it.
sonde_unit_test(test_jtag_dp jtag/test_jtag_dp.c LIBS sonde_vm)
find_program(SONDE_OPENOCD openocd)
find_program(SONDE_ARM_GCC_FOR_JTAG arm-none-eabi-gcc)
if(SONDE_FIRMWARE AND SONDE_ARM_GCC_FOR_JTAG)
  # OpenOCD is a test dependency (scripts/install-deps): without it these fail, not skip.
  sonde_unit_test(test_jtag_openocd jtag/test_jtag_openocd.c LIBS sonde_vm sonde_sym
                  LABELS firmware openocd)
  target_compile_definitions(test_jtag_openocd PRIVATE
                             SONDE_FIRMWARE_DIR="${CMAKE_BINARY_DIR}/firmware")
  add_dependencies(test_jtag_openocd fw_jtag_demo_m4f fw_jtag_demo_m3)
  sonde_cli_test(jtag_gdb LABELS firmware openocd)
  sonde_cli_test(jtag_robust LABELS firmware)
endif()
