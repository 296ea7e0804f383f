# Grammar compression (issue 6): unit tests and CLI tests.
sonde_unit_test(test_grammar_compress grammar/test_compress.c LIBS sonde_grammar)
sonde_unit_test(test_grammar_input grammar/test_input.c LIBS sonde_grammar sonde_trace)
sonde_cli_test(grammar_basic)
sonde_cli_test(grammar_real)
if(SONDE_FIRMWARE)
  sonde_cli_test(grammar_vm)
endif()
sonde_cli_test(grammar_reference)
