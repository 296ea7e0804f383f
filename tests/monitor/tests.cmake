# src/monitor (issue 18), `sonde monitor` and `sonde energy`, on firmware built
# from firmware/monitor/ (firmware/monitor.cmake). firmware/ is configured
# after tests/, so SONDE_HAVE_FIRMWARE is not known yet on a first configure:
# the compiler is looked for here, as tests/dbg does.
find_program(SONDE_ARM_GCC_FOR_MON arm-none-eabi-gcc)
if(SONDE_FIRMWARE AND SONDE_ARM_GCC_FOR_MON)
  sonde_unit_test(test_monitor monitor/test_monitor.c LIBS sonde_monitor sonde_vm LABELS firmware)
  add_dependencies(test_monitor fw_mon_demo fw_mon_burst sonde)
  sonde_unit_test(test_monitor_link monitor/test_monitor_link.c
                  LIBS sonde_monitor sonde_vm pthread LABELS firmware)
  add_dependencies(test_monitor_link fw_mon_demo fw_mon_bench)
  sonde_cli_test(monitor_vm LABELS firmware)
  sonde_cli_test(monitor_openocd LABELS firmware)
  sonde_cli_test(energy LABELS firmware)
  sonde_cli_test(monitor_gdb LABELS firmware)
endif()
