# src/sym: symbols against the FrankenTrace CC2650 ELF and arm-none-eabi binutils.
sonde_unit_test(test_sym_sym sym/test_sym.c LIBS sonde_sym ZLIB::ZLIB)
