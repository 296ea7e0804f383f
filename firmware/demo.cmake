# The demo firmware (scripts/demo, `make demo`) and a minimal semihosting image.
sonde_firmware(demo SOURCES demo/demo.c CORE m3 MACHINE cm3 OPT -O2)
sonde_firmware(hello SOURCES demo/hello.c CORE m3 MACHINE cm3 OPT -O2 SEMIHOSTING)
