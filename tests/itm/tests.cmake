# src/itm: ITM/DWT packet decoder, hand-built streams per packet type.
sonde_unit_test(test_itm_itm itm/test_itm.c LIBS sonde_itm)
sonde_cli_test(itm_basic)
sonde_cli_test(itm_sigrok)
sonde_unit_test(test_itm_diff itm/test_itm_diff.c LIBS sonde_itm)
# sonde_itm_decode_parallel against the sequential decoder (tests/itm/itm_par_check.h)
sonde_unit_test(test_itm_par itm/test_itm_diff.c LIBS sonde_itm)
target_compile_definitions(test_itm_par PRIVATE ITM_PAR_TEST=1)
