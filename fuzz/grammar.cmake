# src/grammar: readers, grammar-file parser and compressors (fuzz/fuzz_grammar.c).
sonde_fuzz_target(grammar LIBS sonde_grammar)
