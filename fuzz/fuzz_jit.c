/* Fuzz target: the block compiler (src/vm/jit_x64.c) against the block
 * executor interpreting, on arbitrary Thumb code.
 *
 * Input: 52 bytes of r0-r12 (little-endian; missing bytes are 0), then the
 * code, loaded at 0x400 of a Cortex-M4 whose every exception vector points at
 * a `b .`. Two VMs, one compiling and one not, run it to the same
 * input-driven cycle limits (1-64 cycles apart, 20,000 cycles at most); at
 * every stop the stop reason, cycle and instruction counts, r0-r15 and xPSR
 * must be equal, and at the end SRAM. Any difference aborts. On a host
 * without the compiler both interpret, and the target still runs.
 *
 * The same code also runs on a Cortex-M3 with a memory system (flash wait
 * states behind a line buffer, a VIMS-style cache, a slow region: the
 * timing model's cycles, docs/vm.md): its block executor (the model's
 * variant, with its compiled code charging the model, the model's answers
 * memoized, tm_memo.c) against its one-at-a-time hooked executor stepping
 * the model for every instruction (no memo), compared the same way. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sonde/vm.h"
#include "vm/machine.h"
#include "../tests/vm/vm_state_util.h"

#define CODE_AT 0x400u
#define CODE_MAX 4096u
#define SRAM 0x20000000u
#define SRAM_CHECK 0x10000u
#define MAX_CYCLES 20000u

#define NVM 4 /* 0, 1: cm4f compiled, interpreted; 2, 3: memsys compiled, hooked */
static struct sonde_machine *machine, *memsys, *memsys_nomemo;
static struct sonde_vm *vm[NVM];

static const char memsys_text[] = MEMSYS_M3_MACHINE("fuzz-memsys")
    "memsys latency 0x20008000 0x8000 read=3 write=2\n";

static void on_retire(void *ctx, uint32_t pc, uint64_t cycle, uint32_t cycles)
{
  (void)ctx, (void)pc, (void)cycle, (void)cycles;
}

static void setup(void)
{
  if (sonde_machine_builtin("cm4f", &machine) != 0 ||
      sonde_machine_parse(memsys_text, strlen(memsys_text), "fuzz", &memsys, NULL) != 0 ||
      sonde_machine_parse(memsys_text, strlen(memsys_text), "fuzz", &memsys_nomemo, NULL) != 0)
    abort();
  memsys_nomemo->tm.memo_off = true;
  for (unsigned k = 0; k < NVM; k++) {
    if (sonde_vm_new(k < 2 ? machine : k == 2 ? memsys : memsys_nomemo, &vm[k]) != 0)
      abort();
    sonde_vm_set_jit(vm[k], k == 0 || k == 2);
  }
  struct sonde_vm_hooks h = {.retire = on_retire}; /* the hooked executor */
  sonde_vm_set_hooks(vm[3], &h);
}

static int discard(void *ctx, int stream, const void *data, size_t len)
{
  (void)ctx, (void)stream, (void)data, (void)len;
  return 0;
}

static void load(struct sonde_vm *v, const uint8_t *code, size_t len, const uint32_t *r)
{
  static uint8_t img[CODE_AT + CODE_MAX + 4];
  static uint8_t zero[SRAM_CHECK];
  memset(img, 0, sizeof img);
  for (unsigned i = 0; i < 64; i++) { /* SP, reset, then every vector at `b .` */
    uint32_t w = i == 0 ? SRAM + SRAM_CHECK : i == 1 ? CODE_AT | 1 : 0x3f1;
    memcpy(img + 4 * i, &w, 4);
  }
  img[0x3f0] = 0xfe, img[0x3f1] = 0xe7;
  memcpy(img + CODE_AT, code, len);
  if (sonde_vm_load_binary(v, img, CODE_AT + len + 4, 0) != 0 || sonde_vm_reset(v) != 0 ||
      sonde_vm_write_mem(v, SRAM, zero, sizeof zero) != 0)
    abort();
  sonde_vm_set_output(v, discard, NULL);
  for (unsigned i = 0; i < 13; i++)
    sonde_vm_write_reg(v, i, r[i]);
}

static int compare(unsigned pair, const uint8_t *code, size_t len, const uint64_t *base);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (!vm[0])
    setup();
  uint32_t r[13] = {0};
  size_t hdr = size < sizeof r ? size : sizeof r;
  memcpy(r, data, hdr);
  const uint8_t *code = data + hdr;
  size_t len = size - hdr;
  if (len > CODE_MAX)
    len = CODE_MAX;
  uint64_t base[NVM];
  for (unsigned k = 0; k < NVM; k++) {
    load(vm[k], code, len, r);
    struct sonde_vm_stats st;
    sonde_vm_get_stats(vm[k], &st);
    base[k] = st.cycles; /* a reset keeps the counters going */
  }
  for (unsigned pair = 0; pair < NVM; pair += 2)
    if (compare(pair, code, len, base) != 0)
      abort(); /* the two executors of a machine differ */
  return 0;
}

/* Run VMs pair and pair + 1 to the same cycle limits; nonzero when they
 * differ at a stop or in SRAM at the end. */
static int compare(unsigned pair, const uint8_t *code, size_t len, const uint64_t *base)
{
  struct sonde_vm *const v[2] = {vm[pair], vm[pair + 1]};
  base += pair;
  uint64_t limit = 0, i0[2];
  for (unsigned k = 0; k < 2; k++) {
    struct sonde_vm_stats st;
    sonde_vm_get_stats(v[k], &st);
    i0[k] = st.instructions;
  }
  for (size_t step = 0; limit < MAX_CYCLES; step++) {
    limit += 1 + (len ? code[step % len] % 64 : 7);
    struct sonde_vm_stop stop[2];
    uint64_t cyc[2], ins[2];
    uint32_t regs[2][17];
    for (unsigned k = 0; k < 2; k++) {
      if (sonde_vm_run(v[k], base[k] + limit, &stop[k]) != 0)
        return 1;
      struct sonde_vm_stats st;
      sonde_vm_get_stats(v[k], &st);
      cyc[k] = st.cycles - base[k];
      ins[k] = st.instructions - i0[k];
      for (unsigned n = 0; n < 17; n++)
        sonde_vm_read_reg(v[k], n, &regs[k][n]);
    }
    if (stop[0].reason != stop[1].reason || cyc[0] != cyc[1] || ins[0] != ins[1] ||
        memcmp(regs[0], regs[1], sizeof regs[0]) != 0)
      return 1;
    if (stop[0].reason != SONDE_VM_STOP_CYCLE_LIMIT)
      break;
  }
  static uint8_t a[SRAM_CHECK], b[SRAM_CHECK];
  if (sonde_vm_read_mem(v[0], SRAM, a, sizeof a) != 0 ||
      sonde_vm_read_mem(v[1], SRAM, b, sizeof b) != 0 || memcmp(a, b, sizeof a) != 0)
    return 1;
  return 0;
}
