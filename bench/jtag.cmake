# Real OpenOCD against `sonde run --jtag` (bench/jtag_bench.py, issue 16):
# DWT_PCSR reads per second, load_image of 64 KiB, the VM's share of the time.
add_custom_target(bench_jtag
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/jtag_bench.py $<TARGET_FILE:sonde>
          ${CMAKE_BINARY_DIR}/firmware/jtag_demo_m4f.elf 1000
  DEPENDS sonde VERBATIM)
add_dependencies(bench bench_jtag)
