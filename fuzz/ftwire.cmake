# FrankenTrace wire side: ITM -> runner records -> iterations -> samples.
sonde_fuzz_target(ftwire LIBS sonde_ftwire)
