# Tonbandgerät decoder throughput, binary and hex, plus convert+Perfetto (bench/tband_bench.c).
add_executable(bench_tband ${CMAKE_CURRENT_SOURCE_DIR}/tband_bench.c)
target_include_directories(bench_tband PRIVATE ${CMAKE_SOURCE_DIR}/target/tband)
target_link_libraries(bench_tband PRIVATE sonde_tband sonde_export)
add_dependencies(bench bench_tband)
