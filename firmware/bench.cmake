# Benchmark firmware for bench/vm_bench.c (built with the firmware, run by `make bench`).
sonde_firmware(bench_cpu SOURCES bench/bench_cpu.c CORE m3 MACHINE cm3 OPT -O2 DEFINES BENCH_ROUNDS=400)
sonde_firmware(bench_irq SOURCES bench/bench_irq.c CORE m3 MACHINE cm3 OPT -O2 DEFINES BENCH_ROUNDS=400)
# ~1.2 G instructions (50x bench_cpu): bench_vm's comparison with QEMU, long enough that
# neither program's start-up decides it.
sonde_firmware(bench_long SOURCES bench/bench_cpu.c CORE m3 MACHINE cm3 OPT -O2 DEFINES BENCH_ROUNDS=20000)
