# Tonbandgerät: decoder, converter, on-target tracer compiled for the host.
sonde_unit_test(test_tband_decode tband/test_decode.c LIBS sonde_tband)
sonde_unit_test(test_tband_roundtrip tband/test_roundtrip.c LIBS sonde_tband)
target_include_directories(test_tband_roundtrip PRIVATE ${CMAKE_SOURCE_DIR}/target/tband)
sonde_cli_test(tband_dump)
sonde_cli_test(tband_conv)

# The on-target tracer compiled for the host, once per configuration
# (tests/tband/cfg_*/tband_config.h), with the host port.
set(TBAND_TARGET_SOURCES
  ${CMAKE_SOURCE_DIR}/target/tband/tband_core.c
  ${CMAKE_SOURCE_DIR}/target/tband/tband_backend_stream.c
  ${CMAKE_SOURCE_DIR}/target/tband/tband_backend_snapshot.c
  ${CMAKE_SOURCE_DIR}/target/tband/tband_backend_postmortem.c
  ${CMAKE_SOURCE_DIR}/target/tband/tband_backend_external.c
  ${CMAKE_SOURCE_DIR}/target/tband/tband_freertos.c
  ${CMAKE_SOURCE_DIR}/target/tband/ports/host/tband_port_host.c)
function(tband_target_test name src cfg)
  cmake_parse_arguments(A "" "CORES" "EXTRA_INC;EXTRA_SRC" ${ARGN})
  sonde_unit_test(${name} tband/${src} ${TBAND_TARGET_SOURCES} ${A_EXTRA_SRC} LIBS sonde_tband)
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR}/tests/tband/${cfg}
    ${A_EXTRA_INC} ${CMAKE_SOURCE_DIR}/target/tband ${CMAKE_SOURCE_DIR}/target/tband/ports/host
    ${CMAKE_SOURCE_DIR}/tests/tband)
  if(A_CORES)
    target_compile_definitions(${name} PRIVATE TBAND_HOST_CORES=${A_CORES})
  endif()
endfunction()
tband_target_test(test_tband_tracer_stream test_tracer_stream.c cfg_stream)
tband_target_test(test_tband_tracer_snapshot test_tracer_snapshot.c cfg_snapshot)
tband_target_test(test_tband_tracer_postmortem test_tracer_postmortem.c cfg_pm)
tband_target_test(test_tband_tracer_multicore test_tracer_multicore.c cfg_mc CORES 4)
find_package(Threads REQUIRED)
target_link_libraries(test_tband_tracer_multicore PRIVATE Threads::Threads)
tband_target_test(test_tband_freertos_hooks test_freertos_hooks.c cfg_freertos
  EXTRA_INC ${CMAKE_SOURCE_DIR}/tests/tband/freertos_mock)
