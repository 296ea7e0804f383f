# src/profile and `sonde top`.
sonde_unit_test(test_profile_profile profile/test_profile.c LIBS sonde_profile)
sonde_cli_test(top_basic)
sonde_cli_test(bounded_memory)
