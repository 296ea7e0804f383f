# SWO line decoding and TPIU deformatter throughput (docs/benchmarks.md, "SWO").
add_executable(bench_swo ${CMAKE_CURRENT_SOURCE_DIR}/swo_bench.c)
target_link_libraries(bench_swo PRIVATE sonde_swo m)
add_dependencies(bench bench_swo)
