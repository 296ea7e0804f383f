# src/monitor (issue 18) and `sonde monitor` / `sonde energy`.
if(SONDE_HAVE_FIRMWARE)
  sonde_unit_test(test_monitor monitor/test_monitor.c LIBS sonde_monitor sonde_vm)
  add_dependencies(test_monitor fw_mon_demo fw_mon_burst sonde)
endif()
if(SONDE_HAVE_FIRMWARE)
  sonde_unit_test(test_monitor_link monitor/test_monitor_link.c LIBS sonde_monitor sonde_vm pthread)
  add_dependencies(test_monitor_link fw_mon_demo)
endif()
