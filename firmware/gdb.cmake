# Firmware for the GDB server tests (tests/cli/gdb_batch.sh, tests/gdb/).
sonde_firmware(gdb_demo_m3 SOURCES gdb/gdb_demo.c CORE m3 MACHINE cm3 OPT -O0)
sonde_firmware(gdb_demo_m4f SOURCES gdb/gdb_demo.c CORE m4f MACHINE cm4f OPT -O0)
