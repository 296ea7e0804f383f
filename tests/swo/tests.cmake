# SWO module tests (src/swo): TPIU deformatter, line decoders, byte sources.
sonde_unit_test(test_swo_tpiu swo/test_tpiu.c LIBS sonde_swo)
sonde_unit_test(test_swo_line swo/test_line.c LIBS sonde_swo m)
