# FrankenTrace runner captures through the library (runner_stitch.c): decode, judge, stitch, validate.
sonde_fuzz_target(ftrunner LIBS sonde_frankentrace)
