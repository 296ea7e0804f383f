sonde_fuzz_target(pctrace LIBS sonde_trace)
