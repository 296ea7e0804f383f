sonde_unit_test(test_vm_bus vm/test_bus.c LIBS sonde_vm)

# DSP and FP (H-fpdsp): differential tests against Unicorn, a test-only
# dependency (never linked into libsonde). tests/vm/unicorn_ref.c is the shared
# harness; other VM tests may link it the same way.
if(NOT TARGET PkgConfig::UNICORN)
  pkg_check_modules(UNICORN REQUIRED IMPORTED_TARGET unicorn)
endif()
sonde_unit_test(test_vm_dsp vm/test_dsp.c vm/unicorn_ref.c LIBS sonde_vm PkgConfig::UNICORN)

# System side (H-sys): machine descriptions, NVIC/SCB/SysTick registers,
# exception model, peripherals, semihosting.
sonde_unit_test(test_vm_machine vm/test_machine.c LIBS sonde_vm)

# CPU core (H-cpu): directed tests and the cycle model; differential tests
# against Unicorn through tests/vm/unicorn_ref.c.
sonde_unit_test(test_vm_cpu_diff vm/test_cpu_diff.c vm/unicorn_ref.c LIBS sonde_vm PkgConfig::UNICORN)
# The block compiler (jit_x64.c) on random programs: against Unicorn, and
# stop by stop against the interpreted blocks and the one-at-a-time executor.
sonde_unit_test(test_vm_jit_diff vm/test_jit_diff.c vm/unicorn_ref.c LIBS sonde_vm PkgConfig::UNICORN)
# Compiled code around exceptions: device loads/stores, EXC_RETURN and events
# served from compiled code, stop by stop against --no-jit and one at a time.
sonde_unit_test(test_vm_jit_irq vm/test_jit_irq.c LIBS sonde_vm)
sonde_unit_test(test_vm_sys vm/test_sys.c LIBS sonde_vm)
sonde_unit_test(test_vm_fp vm/test_fp.c vm/unicorn_ref.c LIBS sonde_vm PkgConfig::UNICORN)
# Exception tests on firmware (firmware/tests/exc_*.c, firmware/exc.cmake).
# The images are built by `all` (firmware/CMakeLists.txt).
find_program(SONDE_ARM_GCC_FOR_EXC arm-none-eabi-gcc)
if(SONDE_FIRMWARE AND SONDE_ARM_GCC_FOR_EXC)
  sonde_unit_test(test_vm_exc vm/test_exc.c LIBS sonde_vm LABELS firmware)
  target_compile_definitions(test_vm_exc PRIVATE SONDE_FIRMWARE_DIR="${CMAKE_BINARY_DIR}/firmware")
  # The same firmwares on QEMU (mps2-an385): an independent exception model.
  sonde_unit_test(test_vm_exc_qemu vm/test_exc_qemu.c LIBS sonde_vm LABELS "firmware;qemu")
  target_compile_definitions(test_vm_exc_qemu PRIVATE SONDE_FIRMWARE_DIR="${CMAKE_BINARY_DIR}/firmware")
  # The block executor against the instruction-at-a-time one, stop by stop.
  sonde_unit_test(test_vm_block_exec vm/test_block_exec.c LIBS sonde_vm LABELS firmware)
  target_compile_definitions(test_vm_block_exec PRIVATE SONDE_FIRMWARE_DIR="${CMAKE_BINARY_DIR}/firmware")
  # The exception path's quiet way against its general way, stop by stop.
  sonde_unit_test(test_vm_exc_quiet vm/test_exc_quiet.c LIBS sonde_vm LABELS firmware)
  target_compile_definitions(test_vm_exc_quiet PRIVATE SONDE_FIRMWARE_DIR="${CMAKE_BINARY_DIR}/firmware")
endif()
sonde_unit_test(test_vm_cpu vm/test_cpu.c LIBS sonde_vm)
# The timing model's memo against the model stepping every instruction.
sonde_unit_test(test_vm_tm_memo vm/test_tm_memo.c LIBS sonde_vm)
# The memo's fork when its slot was recorded again (a stale fork), compiled and not.
sonde_unit_test(test_vm_tm_fork vm/test_tm_fork.c LIBS sonde_vm)
sonde_unit_test(test_vm_cpu_cc2650 vm/test_cpu_cc2650.c LIBS sonde_frankentrace sonde_sym sonde_vm)
# Power model (H-power): run/sleep/UART currents integrated by cycle.
sonde_unit_test(test_vm_power vm/test_power.c LIBS sonde_vm)
sonde_cli_test(run_power)

# W^X: the block compiler's buffer is never writable and executable at once.
sonde_unit_test(test_vm_jit_wx vm/test_jit_wx.c LIBS sonde_vm)
