# Ground-truth trace files (src/trace): PC trace and LSU trace round trips and bad input.
sonde_unit_test(test_trace_pctrace trace/test_pctrace.c LIBS sonde_trace)
sonde_unit_test(test_trace_lsutrace trace/test_lsutrace.c LIBS sonde_trace)
