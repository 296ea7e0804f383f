# FrankenTrace target runner (target/cortexm/frankentrace): its setup code compiled for the host.
sonde_unit_test(test_ft_setup fttarget/test_ft_setup.c
                ${CMAKE_SOURCE_DIR}/target/cortexm/frankentrace/ft_setup.c LIBS sonde_common)
target_include_directories(test_ft_setup PRIVATE ${CMAKE_SOURCE_DIR}/target/cortexm/frankentrace)
sonde_unit_test(test_ftwire fttarget/test_ftwire.c LIBS sonde_ftwire)
if(SONDE_FIRMWARE)
  sonde_cli_test(frankentrace_stitch LABELS firmware)
endif()
