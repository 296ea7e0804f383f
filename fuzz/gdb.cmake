# The GDB server's packet layer (src/vm/gdb_server.c, H-gdb).
if(EXISTS ${CMAKE_SOURCE_DIR}/src/vm/gdb_server.c)
  sonde_fuzz_target(gdb LIBS sonde_vm)
endif()
