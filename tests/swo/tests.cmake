# SWO module tests (src/swo): TPIU deformatter, line decoders, byte sources.
sonde_unit_test(test_swo_tpiu swo/test_tpiu.c LIBS sonde_swo)
sonde_unit_test(test_swo_line swo/test_line.c LIBS sonde_swo m)
sonde_unit_test(test_swo_source swo/test_source.c LIBS sonde_swo pthread)
add_executable(swo_wavetool swo/swo_wavetool.c)
target_link_libraries(swo_wavetool PRIVATE sonde_swo m)
add_test(NAME swo_sigrok_compare COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/swo/sigrok_compare.sh)
set_tests_properties(swo_sigrok_compare PROPERTIES TIMEOUT 300
  ENVIRONMENT "SWO_WAVETOOL=$<TARGET_FILE:swo_wavetool>")
# End to end through `sonde itm` (samples, TPIU, stdin, TCP).
if(TARGET sonde)
  add_test(NAME swo_itm_e2e COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/swo/itm_e2e.sh)
  set_tests_properties(swo_itm_e2e PROPERTIES TIMEOUT 120
    ENVIRONMENT "SONDE=$<TARGET_FILE:sonde>;SWO_WAVETOOL=$<TARGET_FILE:swo_wavetool>")
endif()
