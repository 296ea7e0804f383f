# Tonbandgerät: decoder, converter, on-target tracer compiled for the host.
sonde_unit_test(test_tband_decode tband/test_decode.c LIBS sonde_tband)
