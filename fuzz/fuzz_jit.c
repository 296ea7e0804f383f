/* Fuzz target: the block compiler (src/vm/jit_x64.c) against the block
 * executor interpreting, on arbitrary Thumb code.
 *
 * Input: 52 bytes of r0-r12 (little-endian; missing bytes are 0), then the
 * code, loaded at 0x400 of a Cortex-M4 whose every exception vector points at
 * a `b .`. Two VMs, one compiling and one not, run it to the same
 * input-driven cycle limits (1-64 cycles apart, 20,000 cycles at most); at
 * every stop the stop reason, cycle and instruction counts, r0-r15 and xPSR
 * must be equal, and at the end SRAM. Any difference aborts. On a host
 * without the compiler both interpret, and the target still runs. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sonde/vm.h"

#define CODE_AT 0x400u
#define CODE_MAX 4096u
#define SRAM 0x20000000u
#define SRAM_CHECK 0x10000u
#define MAX_CYCLES 20000u

static struct sonde_machine *machine;
static struct sonde_vm *vm[2];

static void setup(void)
{
  if (sonde_machine_builtin("cm4f", &machine) != 0)
    abort();
  for (unsigned k = 0; k < 2; k++) {
    if (sonde_vm_new(machine, &vm[k]) != 0)
      abort();
    sonde_vm_set_jit(vm[k], k == 0);
  }
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
  uint64_t base[2];
  for (unsigned k = 0; k < 2; k++) {
    load(vm[k], code, len, r);
    struct sonde_vm_stats st;
    sonde_vm_get_stats(vm[k], &st);
    base[k] = st.cycles; /* a reset keeps the counters going */
  }
  uint64_t limit = 0, i0[2];
  for (unsigned k = 0; k < 2; k++) {
    struct sonde_vm_stats st;
    sonde_vm_get_stats(vm[k], &st);
    i0[k] = st.instructions;
  }
  for (size_t step = 0; limit < MAX_CYCLES; step++) {
    limit += 1 + (len ? code[step % len] % 64 : 7);
    struct sonde_vm_stop stop[2];
    uint64_t cyc[2], ins[2];
    uint32_t regs[2][17];
    for (unsigned k = 0; k < 2; k++) {
      if (sonde_vm_run(vm[k], base[k] + limit, &stop[k]) != 0)
        abort();
      struct sonde_vm_stats st;
      sonde_vm_get_stats(vm[k], &st);
      cyc[k] = st.cycles - base[k];
      ins[k] = st.instructions - i0[k];
      for (unsigned n = 0; n < 17; n++)
        sonde_vm_read_reg(vm[k], n, &regs[k][n]);
    }
    if (stop[0].reason != stop[1].reason || cyc[0] != cyc[1] || ins[0] != ins[1] ||
        memcmp(regs[0], regs[1], sizeof regs[0]) != 0)
      abort(); /* compiled and interpreted runs differ */
    if (stop[0].reason != SONDE_VM_STOP_CYCLE_LIMIT)
      break;
  }
  static uint8_t a[SRAM_CHECK], b[SRAM_CHECK];
  if (sonde_vm_read_mem(vm[0], SRAM, a, sizeof a) != 0 ||
      sonde_vm_read_mem(vm[1], SRAM, b, sizeof b) != 0 || memcmp(a, b, sizeof a) != 0)
    abort();
  return 0;
}
