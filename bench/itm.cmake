# ITM/DWT packet decoder throughput on a 256 MB mixed stream (docs/benchmarks.md).
add_executable(bench_itm ${CMAKE_CURRENT_SOURCE_DIR}/itm_bench.c)
target_link_libraries(bench_itm PRIVATE sonde_itm)
add_dependencies(bench bench_itm)
