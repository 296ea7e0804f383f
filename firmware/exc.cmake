# Exception test firmwares (firmware/tests/exc_*.c), run by tests/vm/test_exc.c.
# Built without newlib stdio (output through semihosting SYS_WRITE0).
foreach(t nesting:m3:cm3 nesting:m0plus:cm0plus basepri:m3:cm3 faults:m3:cm3 faults:m33:cm33
          svc_pendsv:m3:cm3 systick:m3:cm3 systick:m0plus:cm0plus wfi:m3:cm3 reset:m3:cm3
          reset:m0plus:cm0plus vectreset:m3:cm3 lockup:m3:cm3 stklim:m33:cm33 stklim_insn:m33:cm33 latearrival:m3:cm3 lazyfp:m4f:cm4f
          timers:m3:cm3)
  string(REPLACE ":" ";" t ${t})
  list(GET t 0 prog)
  list(GET t 1 core)
  list(GET t 2 mach)
  sonde_firmware(exc_${prog}_${core} SOURCES tests/exc_${prog}.c CORE ${core} MACHINE ${mach}
                 OPT -O2)
endforeach()
# SysTick and the timer at one priority: neither preempts the other.
sonde_firmware(exc_timers_eq_m3 SOURCES tests/exc_timers.c CORE m3 MACHINE cm3 OPT -O2
               DEFINES EQUAL_PRIO=1)
# SysTick, the timer and the delay falling due together (test_exc_quiet).
foreach(core m3:cm3 m0plus:cm0plus)
  string(REPLACE ":" ";" core ${core})
  list(GET core 0 c)
  list(GET core 1 mach)
  sonde_firmware(exc_coincide_${c} SOURCES tests/exc_coincide.c CORE ${c} MACHINE ${mach} OPT -O2)
endforeach()
# The ARMv8-M ones again at QEMU mps2-an505's addresses (ld/an505.ld), compared
# with QEMU by tests/vm/test_exc_qemu.c on tests/vm/an505.machine.
foreach(prog nesting basepri stklim stklim_insn)
  sonde_firmware(exc_${prog}_an505 SOURCES tests/exc_${prog}.c CORE m33 MACHINE an505 OPT -O2)
endforeach()
