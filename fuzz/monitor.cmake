sonde_fuzz_target(mon_current LIBS sonde_monitor)
sonde_fuzz_target(mon_code LIBS sonde_monitor)
sonde_fuzz_target(mon_link LIBS sonde_monitor)
