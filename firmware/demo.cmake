# The demo firmware (scripts/demo, `make demo`) and a minimal semihosting image.
sonde_firmware(demo SOURCES demo/demo.c CORE m3 MACHINE cm3 OPT -O2)
# The same demo profiling itself over SWO (DWT PC sampling + exception trace).
sonde_firmware(demo_swo SOURCES demo/demo.c ${CMAKE_SOURCE_DIR}/target/cortexm/cm_trace.c
               CORE m3 MACHINE cm3 OPT -O2 DEFINES SWO_PROFILE=1
               INCLUDES ${CMAKE_SOURCE_DIR}/target/cortexm)
sonde_firmware(hello SOURCES demo/hello.c CORE m3 MACHINE cm3 OPT -O2 SEMIHOSTING)
