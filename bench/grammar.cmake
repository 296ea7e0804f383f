# bench_grammar: Sequitur/ReSequitur/Cyclitur throughput, memory, and sizes vs gzip/xz/zstd.
add_executable(bench_grammar ${CMAKE_CURRENT_SOURCE_DIR}/grammar_bench.c)
target_link_libraries(bench_grammar PRIVATE sonde_grammar)
target_compile_definitions(bench_grammar PRIVATE SONDE_TESTDATA="${SONDE_TESTDATA}")
add_dependencies(bench bench_grammar)
# bench_grammar_trace: the three algorithms on a trace file (issue 20), CPU time.
add_executable(bench_grammar_trace ${CMAKE_CURRENT_SOURCE_DIR}/grammar_trace_bench.c)
target_link_libraries(bench_grammar_trace PRIVATE sonde_grammar)
add_dependencies(bench bench_grammar_trace)
