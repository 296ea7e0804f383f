# Tonbandgerät decoder + converter + timeline writer (fuzz/fuzz_tband.c).
sonde_fuzz_target(tband LIBS sonde_tband sonde_export)
