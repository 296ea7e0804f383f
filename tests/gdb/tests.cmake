# Debug access and the GDB server (issue 3 items 5-6, H-gdb).
sonde_unit_test(test_vm_dbg_halt vm/test_dbg_halt.c LIBS sonde_vm)
# (firmware/ is configured after tests/, so SONDE_HAVE_FIRMWARE is not set yet
# on a first configure: a fresh CI checkout never registered these two tests.)
find_program(SONDE_ARM_GCC_FOR_GDB arm-none-eabi-gcc)
if(SONDE_FIRMWARE AND SONDE_ARM_GCC_FOR_GDB)
  sonde_cli_test(gdb_batch LABELS firmware)
  sonde_cli_test(gdb_robust LABELS firmware)
endif()
