/* Shared by the tests that run one program on several executors and compare
 * them (test_jit_diff.c, test_tm_fork.c) and by fuzz/fuzz_jit.c: the m3 with
 * a memory system they run on, and the state they compare at every stop. */
#ifndef SONDE_TEST_VM_STATE_UTIL_H
#define SONDE_TEST_VM_STATE_UTIL_H

#include <stdint.h>

#include "sonde/vm.h"

/* An m3 with a memory system (docs/vm.md, "Memory-system timing"): flash wait
 * states behind a line buffer and a fetch queue, a write buffer and a
 * VIMS-style cache, so that the timing model charges every instruction and
 * its memo (tm_memo.c) replays it. NAME is the machine's name (a literal);
 * callers may append further lines. */
#define MEMSYS_M3_MACHINE(name)                                                \
  "machine " name "\ncore m3\nclock 48MHz\n"                                   \
  "nvic irqs=32 prio-bits=3\n"                                                 \
  "memory flash 0x00000000 1024K access=rx\n"                                  \
  "memory sram 0x20000000 1024K access=rwx\n"                                  \
  "memsys flash 0x00000000 1024K wait=2 line=8\n"                              \
  "memsys fetch depth=3\n"                                                     \
  "memsys write-buffer 1\n"                                                    \
  "memsys cache ctl=0x40034004 size=8K ways=4 line=8 tag=1 prefetch=1 "        \
  "mode=1\n"

/* What two executors must agree on at a stop: the counters, r0-r15, xPSR. */
struct vm_snap {
  uint64_t cycles, instructions;
  uint32_t r[17];
};

static inline void vm_snap_of(struct sonde_vm *vm, struct vm_snap *s) {
  struct sonde_vm_stats st;
  sonde_vm_get_stats(vm, &st);
  s->cycles = st.cycles;
  s->instructions = st.instructions;
  for (unsigned r = 0; r < 17; r++)
    sonde_vm_read_reg(vm, r, &s->r[r]);
}

#endif
