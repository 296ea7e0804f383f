# FrankenTrace host library (src/frankentrace): stitching, trace files, analyses, LSU order.
sonde_unit_test(test_ft_stitch frankentrace/test_ft_stitch.c LIBS sonde_frankentrace)
sonde_unit_test(test_ft_io frankentrace/test_ft_io.c LIBS sonde_frankentrace)
sonde_cli_test(frankentrace_basic)
sonde_cli_test(frankentrace_real)
sonde_unit_test(test_ft_lsu frankentrace/test_ft_lsu.c LIBS sonde_frankentrace)
sonde_unit_test(test_ft_analyze frankentrace/test_ft_analyze.c LIBS sonde_frankentrace)
