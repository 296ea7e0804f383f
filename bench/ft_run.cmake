# FrankenTrace on the VM: a verified 1 M-cycle trace at N = 512 vs N plain runs (bench/ft_run_bench.c).
add_executable(bench_ft_run ${CMAKE_CURRENT_SOURCE_DIR}/ft_run_bench.c)
target_link_libraries(bench_ft_run PRIVATE sonde_vm)
target_compile_definitions(bench_ft_run PRIVATE SONDE_FIRMWARE_DIR="${CMAKE_BINARY_DIR}/firmware"
                           SONDE_BIN="$<TARGET_FILE:sonde>")
add_custom_target(run_bench_ft_run COMMAND bench_ft_run DEPENDS bench_ft_run sonde VERBATIM)
add_dependencies(bench run_bench_ft_run)
