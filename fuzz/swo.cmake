# SWO decoders (src/swo): TPIU deformatter and both line decoders.
sonde_fuzz_target(tpiu LIBS sonde_swo)
sonde_fuzz_target(uart_line LIBS sonde_swo)
sonde_fuzz_target(manchester LIBS sonde_swo)
