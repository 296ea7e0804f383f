# The firmware test matrix, shared by firmware/fwtests.cmake (builds the
# images) and tests/firmware/tests.cmake (runs them): programs
# firmware/tests/fw_<prog>.c x cores (core:machine) x optimisation levels.
set(SONDE_FWTEST_PROGRAMS crc32 sort int64 float printf)
set(SONDE_FWTEST_CORES "m0plus:cm0plus" "m3:cm3" "m4f:cm4f" "m33:cm33")
set(SONDE_FWTEST_OPTS O0 O2 Os)
