# bench_frankentrace: stitching throughput (goal >= 50 M samples/s) vs a strided-copy floor; real-trace read/check.
add_executable(bench_frankentrace ${CMAKE_CURRENT_SOURCE_DIR}/frankentrace_bench.c)
target_link_libraries(bench_frankentrace PRIVATE sonde_frankentrace)
target_compile_definitions(bench_frankentrace PRIVATE SONDE_TESTDATA="${SONDE_TESTDATA}")
add_dependencies(bench bench_frankentrace)
# bench_frankentrace_run: `frankentrace run --probe` end to end vs N plain runs (issue 15's goals).
add_executable(bench_frankentrace_run ${CMAKE_CURRENT_SOURCE_DIR}/frankentrace_run_bench.c)
target_link_libraries(bench_frankentrace_run PRIVATE sonde_frankentrace sonde_vm)
add_dependencies(bench bench_frankentrace_run)
