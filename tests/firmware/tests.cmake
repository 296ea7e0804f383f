# Firmware-level tests (issue 2): the loader, `sonde run`, and firmware built
# with arm-none-eabi-gcc whose output is compared with the same C built for the host.

# The loader needs the VM's public API (src/vm/vm.c).
if(EXISTS ${CMAKE_SOURCE_DIR}/src/vm/vm.c)
  sonde_unit_test(test_vm_loader vm/test_loader.c LIBS sonde_vm)
  if(SONDE_FIRMWARE)
    target_compile_definitions(test_vm_loader PRIVATE SONDE_FIRMWARE_DIR="${CMAKE_BINARY_DIR}/firmware")
  endif()
endif()
