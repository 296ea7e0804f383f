# PC polling on the VM link (bench/monitor_bench.c, docs/benchmarks.md "Monitor").
add_executable(bench_monitor ${CMAKE_CURRENT_SOURCE_DIR}/monitor_bench.c)
target_link_libraries(bench_monitor PRIVATE sonde_monitor sonde_vm)
target_compile_definitions(bench_monitor PRIVATE SONDE_FIRMWARE_DIR="${CMAKE_BINARY_DIR}/firmware")
add_custom_target(run_bench_monitor COMMAND bench_monitor DEPENDS bench_monitor VERBATIM)
add_dependencies(bench run_bench_monitor)
