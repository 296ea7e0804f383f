# The JTAG debug port's TAP/DP/AP state machines (src/vm/jtag_*.c, issue 16).
if(EXISTS ${CMAKE_SOURCE_DIR}/src/vm/jtag_server.c)
  sonde_fuzz_target(jtag LIBS sonde_vm)
endif()
