# VM throughput against Unicorn with a per-instruction hook (bench/vm_bench.c).
if(NOT TARGET PkgConfig::UNICORN)
  pkg_check_modules(UNICORN REQUIRED IMPORTED_TARGET unicorn)
endif()
add_executable(bench_vm ${CMAKE_CURRENT_SOURCE_DIR}/vm_bench.c)
target_link_libraries(bench_vm PRIVATE sonde_vm PkgConfig::UNICORN)
target_compile_definitions(bench_vm PRIVATE SONDE_FIRMWARE_DIR="${CMAKE_BINARY_DIR}/firmware"
                                             SONDE_CLI="$<TARGET_FILE:sonde>")
add_dependencies(bench_vm sonde)
# the images come from firmware/ (built by `all`, which `make bench` builds first)
add_custom_target(run_bench_vm COMMAND bench_vm DEPENDS bench_vm VERBATIM)
add_dependencies(bench run_bench_vm)
