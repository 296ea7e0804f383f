# The MTB decoder with the code of a real firmware (fuzz/mtb_m33.elf).
sonde_fuzz_target(mtb LIBS sonde_mtb sonde_sym)
target_compile_definitions(replay_mtb PRIVATE SONDE_FUZZ_MTB_ELF="${CMAKE_SOURCE_DIR}/fuzz/mtb_m33.elf")
if(SONDE_FUZZ)
  target_compile_definitions(fuzz_mtb PRIVATE SONDE_FUZZ_MTB_ELF="${CMAKE_SOURCE_DIR}/fuzz/mtb_m33.elf")
endif()
