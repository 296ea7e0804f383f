# The ELF loader needs the VM's public API (src/vm/vm.c).
if(EXISTS ${CMAKE_SOURCE_DIR}/src/vm/vm.c)
  sonde_fuzz_target(elf LIBS sonde_vm)
endif()
