# Benchmark firmware for bench/vm_bench.c (built with the firmware, run by `make bench`).
sonde_firmware(bench_cpu SOURCES bench/bench_cpu.c CORE m3 MACHINE cm3 OPT -O2 DEFINES BENCH_ROUNDS=400)
sonde_firmware(bench_irq SOURCES bench/bench_irq.c CORE m3 MACHINE cm3 OPT -O2 DEFINES BENCH_ROUNDS=400)
