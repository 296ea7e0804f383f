# Tonbandgerät: decoder, converter, on-target tracer compiled for the host.
sonde_unit_test(test_tband_decode tband/test_decode.c LIBS sonde_tband)
sonde_unit_test(test_tband_roundtrip tband/test_roundtrip.c LIBS sonde_tband)
target_include_directories(test_tband_roundtrip PRIVATE ${CMAKE_SOURCE_DIR}/target/tband)
sonde_cli_test(tband_dump)
sonde_cli_test(tband_conv)
