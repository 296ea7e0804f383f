# Debug access and the GDB server (issue 3 items 5-6, H-gdb).
sonde_unit_test(test_vm_dbg_halt vm/test_dbg_halt.c LIBS sonde_vm)
if(SONDE_HAVE_FIRMWARE)
  sonde_cli_test(gdb_batch LABELS firmware)
  sonde_cli_test(gdb_robust LABELS firmware)
endif()
