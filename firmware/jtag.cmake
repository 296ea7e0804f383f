# Firmware for the JTAG debug port tests with OpenOCD (tests/cli/jtag_*.sh).
sonde_firmware(jtag_demo_m3 SOURCES jtag/jtag_demo.c CORE m3 MACHINE cm3 OPT -O0)
sonde_firmware(jtag_demo_m4f SOURCES jtag/jtag_demo.c CORE m4f MACHINE cm4f OPT -O0)
