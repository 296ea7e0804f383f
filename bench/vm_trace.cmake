# Cost of the debug and trace blocks on the VM (bench/vm_trace_bench.c).
add_executable(bench_vm_trace ${CMAKE_CURRENT_SOURCE_DIR}/vm_trace_bench.c)
target_link_libraries(bench_vm_trace PRIVATE sonde_vm)
target_compile_definitions(bench_vm_trace PRIVATE SONDE_FIRMWARE_DIR="${CMAKE_BINARY_DIR}/firmware")
add_custom_target(run_bench_vm_trace COMMAND bench_vm_trace DEPENDS bench_vm_trace VERBATIM)
add_dependencies(bench run_bench_vm_trace)
