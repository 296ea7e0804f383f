sonde_fuzz_target(lsutrace LIBS sonde_trace)
