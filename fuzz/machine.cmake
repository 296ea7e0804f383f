# The machine description parser (src/vm/machine.c).
if(EXISTS ${CMAKE_SOURCE_DIR}/src/vm/machine.c)
  sonde_fuzz_target(machine LIBS sonde_vm)
endif()
