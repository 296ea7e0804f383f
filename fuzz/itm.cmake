# ITM/DWT packet decoder (src/itm).
sonde_fuzz_target(itm LIBS sonde_itm)
