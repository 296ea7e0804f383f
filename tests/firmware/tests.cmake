# Firmware-level tests (issue 2): the loader, `sonde run`, and firmware built
# with arm-none-eabi-gcc whose output is compared with the same C built for the host.

# The loader needs the VM's public API (src/vm/vm.c).
if(EXISTS ${CMAKE_SOURCE_DIR}/src/vm/vm.c)
  sonde_unit_test(test_vm_loader vm/test_loader.c LIBS sonde_vm)
  if(SONDE_FIRMWARE)
    target_compile_definitions(test_vm_loader PRIVATE SONDE_FIRMWARE_DIR="${CMAKE_BINARY_DIR}/firmware")
  endif()
endif()

# Firmware test programs: the host build prints the expected output.
include(${CMAKE_SOURCE_DIR}/firmware/tests/fwtests_list.cmake)
if(SONDE_FIRMWARE)
  foreach(prog ${SONDE_FWTEST_PROGRAMS})
    add_executable(fwhost_${prog} ${CMAKE_SOURCE_DIR}/firmware/tests/fw_${prog}.c)
    target_compile_definitions(fwhost_${prog} PRIVATE SONDE_HOST=1)
    target_compile_options(fwhost_${prog} PRIVATE -ffp-contract=off)
    target_link_libraries(fwhost_${prog} PRIVATE ${MATH_LIB})
    foreach(cm ${SONDE_FWTEST_CORES})
      string(REPLACE ":" ";" cm ${cm})
      list(GET cm 0 core)
      list(GET cm 1 mach)
      foreach(opt ${SONDE_FWTEST_OPTS})
        set(t fw_${prog}_${core}_${opt})
        add_test(NAME firmware_${t}
          COMMAND bash ${CMAKE_SOURCE_DIR}/tests/firmware/run_fw.sh $<TARGET_FILE:sonde> ${mach}
                  ${CMAKE_BINARY_DIR}/firmware/${t}.elf $<TARGET_FILE:fwhost_${prog}>)
        set_tests_properties(firmware_${t} PROPERTIES TIMEOUT 120 LABELS firmware)
      endforeach()
    endforeach()
  endforeach()
endif()

# The same firmware on QEMU and on the VM: identical instruction sequences.
if(SONDE_FIRMWARE)
  foreach(opt O0 O2 Os)
    add_test(NAME firmware_qemu_cmp_m3_${opt}
      COMMAND bash ${CMAKE_SOURCE_DIR}/tests/firmware/qemu_compare.sh $<TARGET_FILE:sonde>
              ${CMAKE_BINARY_DIR}/firmware/qemu_cmp_m3_${opt}.elf mps2-an385 cm3)
    add_test(NAME firmware_qemu_cmp_m4f_${opt}
      COMMAND bash ${CMAKE_SOURCE_DIR}/tests/firmware/qemu_compare.sh $<TARGET_FILE:sonde>
              ${CMAKE_BINARY_DIR}/firmware/qemu_cmp_m4f_${opt}.elf mps2-an386 cm4f)
    add_test(NAME firmware_qemu_cmp_m0plus_${opt}
      COMMAND bash ${CMAKE_SOURCE_DIR}/tests/firmware/qemu_compare.sh $<TARGET_FILE:sonde>
              ${CMAKE_BINARY_DIR}/firmware/qemu_cmp_m0plus_${opt}.elf microbit cm0plus)
    set_tests_properties(firmware_qemu_cmp_m3_${opt} firmware_qemu_cmp_m4f_${opt} firmware_qemu_cmp_m0plus_${opt}
      PROPERTIES TIMEOUT 120 LABELS "firmware;qemu")
  endforeach()
endif()

# `sonde run` CLI tests (need the firmware images).
if(SONDE_FIRMWARE)
  sonde_cli_test(run_basic LABELS firmware)
  sonde_cli_test(run_trace LABELS firmware)
  sonde_cli_test(run_interrupt LABELS firmware)
endif()

# The firmware test programs (newlib printf, qsort, soft-float, 64-bit helpers)
# on QEMU and on the VM: identical instruction sequences.
if(SONDE_FIRMWARE)
  foreach(prog ${SONDE_FWTEST_PROGRAMS})
    foreach(cfg "m3:mps2-an385:cm3" "m4f:mps2-an386:cm4f" "m0plus:microbit:cm0plus")
      string(REPLACE ":" ";" cfg ${cfg})
      list(GET cfg 0 core)
      list(GET cfg 1 board)
      list(GET cfg 2 mach)
      add_test(NAME firmware_qemu_fw_${prog}_${core}
        COMMAND bash ${CMAKE_SOURCE_DIR}/tests/firmware/qemu_compare.sh $<TARGET_FILE:sonde>
                ${CMAKE_BINARY_DIR}/firmware/qemu_fw_${prog}_${core}.elf ${board} ${mach})
      set_tests_properties(firmware_qemu_fw_${prog}_${core} PROPERTIES TIMEOUT 120
        LABELS "firmware;qemu")
    endforeach()
  endforeach()
endif()
