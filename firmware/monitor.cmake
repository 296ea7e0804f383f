# Debug-port monitor test firmware (firmware/monitor/mon_demo.c, tests/monitor).
sonde_firmware(mon_demo SOURCES monitor/mon_demo.c CORE m3 MACHINE cm3 OPT -O2)
sonde_firmware(mon_burst SOURCES monitor/mon_demo.c CORE m3 MACHINE cm3 OPT -O2 DEFINES BURST=1 ROUNDS=2)
# A long run for bench/monitor_bench.c.
sonde_firmware(mon_bench SOURCES monitor/mon_demo.c CORE m3 MACHINE cm3 OPT -O2 DEFINES ROUNDS=2000)
