# The block compiler against the interpreting block executor (src/vm/jit_x64.c).
if(EXISTS ${CMAKE_SOURCE_DIR}/src/vm/jit_x64.c)
  sonde_fuzz_target(jit LIBS sonde_vm)
endif()
