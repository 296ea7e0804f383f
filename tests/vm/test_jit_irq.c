/* Compiled code around exceptions (src/vm/jit_x64.c, vm_jit_slow and
 * vm_jit_serve in exec_threaded.h): stores to and loads from devices run
 * from compiled code (a store to NVIC_ISPR that pends two interrupts, taken
 * right after it; SysTick reloads that move the next event sooner), handlers
 * that return by BX LR and by POP {r4, pc} (tail-chaining), and SysTick's
 * events served from the checked variant's stop. The same program runs
 * compiled, with the compiler off, and one instruction at a time (a retire
 * hook), stopped at the same pseudo-random cycle limits; at every stop the
 * cycle and instruction counts, r0-r15, xPSR and the handlers' counters
 * must be equal. Built from tests/vm/test_jit_irq.c's listing below.
 *
 * A second program (test_device_three_ways) checks compiled code's loads
 * and stores of a device done at once (vm_jit_dev): the demo timer's count
 * read at exact cycles by LDR, LDRH, LDRSB and pre- and post-indexed forms, with
 * stores to SRAM (a wait state) pipelined around them; its LOAD and CTRL
 * written (stopping it moves the next event later, starting it may move
 * it sooner, a one-shot into the straight line after the store); an
 * unlisted offset by a register offset; and its interrupt acknowledged by
 * a store from the handler, which returns by POP {r4, pc} into code whose
 * flags are live; on a machine with wait states and on one without. */
#include "check.h"

#include <stdio.h>
#include <string.h>

#include "sonde/vm.h"
#include "vm/machine.h"

/* Assembled (arm-none-eabi-as -mcpu=cortex-m3) from, at 0:
 *   vectors: SP 0x20008000, reset, SysTick (15), IRQ0 (16), IRQ1 (17)
 *   reset:   ISER0 = 3; SYST_RVR = 250; SYST_CVR = 0; SYST_CSR = 7
 *            r5 = 0x20000000; r0 = NVIC_ISPR0 (0xE000E200)
 *   loop:    adds r4, #1; str r4, [r5, #4]
 *            tst r4, #3; bne 1f; str r1, [r0]          @ pend IRQ0 and IRQ1
 *   1:       tst r4, #7; bne 2f; and r6, r4, #0x18; lsls r6, #3; adds r6, #60
 *            str r6, [r2, #4]; str r6, [r2, #8]       @ SysTick reload, sooner
 *   3:       subs r6, #1; bne 3b                       @ it fires in here
 *   2:       ldr r6, [r0]; adds r7, r6; str r7, [r5, #8]; b loop
 *   systick: ldr r3, [r5, #12]; adds r3, #1; str r3, [r5, #12]; bx lr
 *   irq0:    push {r4, lr}; ldr r4, [r5, #16]; adds r4, #1; str r4, [r5, #16]
 *            pop {r4, pc}
 *   irq1:    ldr r3, [r5, #20]; adds r3, #3; str r3, [r5, #20]; bx lr */
static const uint8_t image[] = {
  0x00, 0x80, 0x00, 0x20, 0x49, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
  0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
  0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
  0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
  0x00, 0x00, 0x00, 0x00, 0xa3, 0x00, 0x00, 0x00, 0xab, 0x00, 0x00, 0x00, 0xb5, 0x00,
  0x00, 0x00, 0x4e, 0xf2, 0x00, 0x10, 0xce, 0xf2, 0x00, 0x00, 0x03, 0x21, 0x01, 0x60,
  0x4e, 0xf2, 0x10, 0x02, 0xce, 0xf2, 0x00, 0x02, 0xfa, 0x23, 0x53, 0x60, 0x00, 0x23,
  0x93, 0x60, 0x07, 0x23, 0x13, 0x60, 0x40, 0xf2, 0x00, 0x05, 0xc2, 0xf2, 0x00, 0x05,
  0x4e, 0xf2, 0x00, 0x20, 0xce, 0xf2, 0x00, 0x00, 0x01, 0x34, 0x6c, 0x60, 0x14, 0xf0,
  0x03, 0x0f, 0x00, 0xd1, 0x01, 0x60, 0x14, 0xf0, 0x07, 0x0f, 0x07, 0xd1, 0x04, 0xf0,
  0x18, 0x06, 0xf6, 0x00, 0x3c, 0x36, 0x56, 0x60, 0x96, 0x60, 0x01, 0x3e, 0xfd, 0xd1,
  0x06, 0x68, 0xbf, 0x19, 0xaf, 0x60, 0xea, 0xe7, 0xeb, 0x68, 0x01, 0x33, 0xeb, 0x60,
  0x70, 0x47, 0x10, 0xb5, 0x2c, 0x69, 0x01, 0x34, 0x2c, 0x61, 0x10, 0xbd, 0x6b, 0x69,
  0x03, 0x33, 0x6b, 0x61, 0x70, 0x47
};

/* Assembled (arm-none-eabi-as, linked at 0 by arm-none-eabi-ld -Ttext=0) from:
 *   .syntax unified
 *   .cpu cortex-m3
 *   .thumb
 *   .org 0
 *   .word 0x20008000, reset + 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, systick + 1, tirq + 1
 *   .thumb_func
 * reset:
 *   movw r0, #0x1000
 *   movt r0, #0x4000          @ r0 = the timer
 *   movw r5, #0
 *   movt r5, #0x2000          @ r5 = counters in SRAM
 *   movw r2, #0xe100
 *   movt r2, #0xe000
 *   movs r1, #1
 *   str r1, [r2]              @ ISER0: IRQ0
 *   movw r1, #700
 *   str r1, [r0, #4]          @ LOAD = 700
 *   movs r1, #7
 *   str r1, [r0]              @ CTRL: run, interrupt, periodic
 *   movw r2, #0xe010
 *   movt r2, #0xe000
 *   movw r1, #1500
 *   str r1, [r2, #4]          @ SYST_RVR
 *   movs r1, #0
 *   str r1, [r2, #8]          @ SYST_CVR
 *   movs r1, #7
 *   str r1, [r2]              @ SYST_CSR
 * loop:
 *   adds r4, #1
 *   ldr r6, [r0, #8]          @ the timer's count, at an exact cycle
 *   str r6, [r5, #4]          @ SRAM, a wait state, pipelined behind it
 *   ldrh r7, [r0, #8]
 *   add r3, r6, r7
 *   ldrsb r1, [r0, #8]        @ sign-extended
 *   add r3, r1
 *   str r3, [r5, #8]
 *   mov r2, r0
 *   ldr r6, [r2, #8]!         @ pre-indexed, from the device
 *   ldr r7, [r2], #-8         @ post-indexed, from the device
 *   strb r7, [r5]
 *   tst r4, #7
 *   bne 2f
 *   lsrs r1, r4, #3
 *   and r1, r1, #7
 *   adds r1, #1
 *   str r1, [r0, #4]          @ LOAD = 1..8
 *   movs r1, #0
 *   str r1, [r0]              @ stop
 *   movs r1, #3
 *   str r1, [r0]              @ one-shot: its interrupt comes in the next lines
 *   cmp r4, r4                @ flags live across it (the handler's differ)
 *   add.w r1, r1, #1
 *   add.w r1, r1, #1
 *   add.w r1, r1, #1
 *   add.w r1, r1, #1
 *   add.w r1, r1, #1
 *   add.w r1, r1, #1
 *   add.w r1, r1, #1
 *   add.w r1, r1, #1
 *   mrs r3, apsr
 *   add r1, r3
 *   str r1, [r5, #4]
 * 2:
 *   tst r4, #15
 *   bne 1f
 *   and r1, r4, #0x70
 *   lsls r1, #2
 *   addw r1, r1, #300
 *   str r1, [r0, #4]          @ LOAD: from the next start
 *   movs r1, #0
 *   str r1, [r0]              @ stop: its event goes (later)
 *   movs r1, #7
 *   str r1, [r0]              @ start: its event at now + LOAD (maybe sooner)
 *   and r1, r4, #0xff0
 *   ldr r1, [r0, r1]          @ a register offset (unlisted offsets read 0)
 * 1:
 *   ldr r1, [r5, #12]
 *   adds r1, #1
 *   str r1, [r5, #12]
 *   b loop
 *   .thumb_func
 * systick:
 *   ldr r3, [r5, #16]
 *   adds r3, #1
 *   str r3, [r5, #16]
 *   bx lr
 *   .thumb_func
 * tirq:
 *   push {r4, lr}
 *   movs r3, #1
 *   str r3, [r0, #12]         @ acknowledge (r0 as the interrupted code left it)
 *   ldr r3, [r5, #20]
 *   adds r3, #1
 *   str r3, [r5, #20]
 *   pop {r4, pc}              @ EXC_RETURN by POP: the flags come back from the frame */
static const uint8_t dev_image[] = {
  0x00, 0x80, 0x00, 0x20, 0x45, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
  0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
  0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
  0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
  0x00, 0x00, 0x00, 0x00, 0x0b, 0x01, 0x00, 0x00, 0x13, 0x01, 0x00, 0x00, 0x41, 0xf2,
  0x00, 0x00, 0xc4, 0xf2, 0x00, 0x00, 0x40, 0xf2, 0x00, 0x05, 0xc2, 0xf2, 0x00, 0x05,
  0x4e, 0xf2, 0x00, 0x12, 0xce, 0xf2, 0x00, 0x02, 0x01, 0x21, 0x11, 0x60, 0x40, 0xf2,
  0xbc, 0x21, 0x41, 0x60, 0x07, 0x21, 0x01, 0x60, 0x4e, 0xf2, 0x10, 0x02, 0xce, 0xf2,
  0x00, 0x02, 0x40, 0xf2, 0xdc, 0x51, 0x51, 0x60, 0x00, 0x21, 0x91, 0x60, 0x07, 0x21,
  0x11, 0x60, 0x01, 0x34, 0x86, 0x68, 0x6e, 0x60, 0x07, 0x89, 0x06, 0xeb, 0x07, 0x03,
  0x90, 0xf9, 0x08, 0x10, 0x0b, 0x44, 0xab, 0x60, 0x02, 0x46, 0x52, 0xf8, 0x08, 0x6f,
  0x52, 0xf8, 0x08, 0x79, 0x2f, 0x70, 0x14, 0xf0, 0x07, 0x0f, 0x1d, 0xd1, 0xe1, 0x08,
  0x01, 0xf0, 0x07, 0x01, 0x01, 0x31, 0x41, 0x60, 0x00, 0x21, 0x01, 0x60, 0x03, 0x21,
  0x01, 0x60, 0xa4, 0x42, 0x01, 0xf1, 0x01, 0x01, 0x01, 0xf1, 0x01, 0x01, 0x01, 0xf1,
  0x01, 0x01, 0x01, 0xf1, 0x01, 0x01, 0x01, 0xf1, 0x01, 0x01, 0x01, 0xf1, 0x01, 0x01,
  0x01, 0xf1, 0x01, 0x01, 0x01, 0xf1, 0x01, 0x01, 0xef, 0xf3, 0x00, 0x83, 0x19, 0x44,
  0x69, 0x60, 0x14, 0xf0, 0x0f, 0x0f, 0x0c, 0xd1, 0x04, 0xf0, 0x70, 0x01, 0x89, 0x00,
  0x01, 0xf2, 0x2c, 0x11, 0x41, 0x60, 0x00, 0x21, 0x01, 0x60, 0x07, 0x21, 0x01, 0x60,
  0x04, 0xf4, 0x7f, 0x61, 0x41, 0x58, 0xe9, 0x68, 0x01, 0x31, 0xe9, 0x60, 0xba, 0xe7,
  0x2b, 0x69, 0x01, 0x33, 0x2b, 0x61, 0x70, 0x47, 0x10, 0xb5, 0x01, 0x23, 0xc3, 0x60,
  0x6b, 0x69, 0x01, 0x33, 0x6b, 0x61, 0x10, 0xbd
};

static const char dev_machine[] = "machine jit-dev-m3\ncore m3\nclock 48MHz\n"
                                  "nvic irqs=32 prio-bits=3\n"
                                  "memory flash 0x00000000 256K access=rx wait=1\n"
                                  "memory sram 0x20000000 64K access=rwx wait-write=1\n"
                                  "peripheral timer 0x40001000 irq=0\n";
/* ... and without wait states: compiled code's loads and stores then owe
 * their cycles after them (jit_x64.c, emit_ls_done) */
static const char dev_machine_nowait[] = "machine jit-dev-m3\ncore m3\nclock 48MHz\n"
                                         "nvic irqs=32 prio-bits=3\n"
                                         "memory flash 0x00000000 256K access=rx\n"
                                         "memory sram 0x20000000 64K access=rwx\n"
                                         "peripheral timer 0x40001000 irq=0\n";

static const char machine[] = "machine jit-irq-m3\ncore m3\nclock 48MHz\nnvic irqs=32 prio-bits=3\n"
                              "memory flash 0x00000000 256K access=rx wait=1\n"
                              "memory sram 0x20000000 64K access=rwx wait-write=1\n";

struct snap {
  uint64_t cycles, instructions;
  uint32_t r[17], counters[6];
};

static void on_retire(void *ctx, uint32_t pc, uint64_t cycle, uint32_t cycles)
{
  (void)pc, (void)cycle, (void)cycles;
  ++*(uint64_t *)ctx;
}

enum { COMPILED, NO_JIT, HOOKED };

struct prog {
  const uint8_t *image;
  size_t size;
  const char *machine;
};

static void run(const struct prog *p, int how, uint64_t total, struct snap *out, size_t max,
                size_t *nout)
{
  *nout = 0;
  struct sonde_machine *m = NULL;
  struct sonde_vm *vm = NULL;
  REQUIRE(sonde_machine_parse(p->machine, strlen(p->machine), "test", &m, NULL) == 0);
  REQUIRE(sonde_vm_new(m, &vm) == 0);
  REQUIRE(sonde_vm_load_binary(vm, p->image, p->size, 0) == 0);
  REQUIRE(sonde_vm_reset(vm) == 0);
  uint64_t retired = 0;
  if (how == NO_JIT)
    sonde_vm_set_jit(vm, false);
  if (how == HOOKED) {
    struct sonde_vm_hooks h = {.ctx = &retired, .retire = on_retire};
    sonde_vm_set_hooks(vm, &h);
  }
  uint32_t seed = 777;
  uint64_t limit = 0;
  size_t n = 0;
  while (n < max && limit < total) {
    seed = seed * 1103515245u + 12345u;
    limit += 1 + (seed >> 16) % 1500;
    struct sonde_vm_stop stop;
    REQUIRE(sonde_vm_run(vm, limit, &stop) == 0);
    CHECK_EQ_U(stop.reason, SONDE_VM_STOP_CYCLE_LIMIT);
    struct sonde_vm_stats st;
    sonde_vm_get_stats(vm, &st);
    struct snap *s = &out[n++];
    s->cycles = st.cycles;
    s->instructions = st.instructions;
    for (unsigned r = 0; r < 17; r++)
      sonde_vm_read_reg(vm, r, &s->r[r]);
    REQUIRE(sonde_vm_read_mem(vm, 0x20000000u, s->counters, sizeof s->counters) == 0);
  }
  if (how == HOOKED)
    CHECK_EQ_U(retired, out[n - 1].instructions);
  sonde_vm_free(vm);
  sonde_machine_free(m);
  *nout = n;
}

enum { MAX = 4000 };
static struct snap s[3][MAX];
static size_t n[3];

/* Run p three ways and compare them stop by stop. */
static void three_ways(const struct prog *p)
{
  for (int k = 0; k < 3; k++)
    run(p, k, 1000000, s[k], MAX, &n[k]);
  CHECK(n[0] > 100);
  for (int k = 1; k < 3; k++) {
    CHECK_EQ_U(n[0], n[k]);
    for (size_t i = 0; i < n[0] && i < n[k]; i++)
      if (memcmp(&s[0][i], &s[k][i], sizeof s[0][i])) {
        CHECK_FAIL_("stop %zu: compiled at cycle %llu, %llu instructions, pc %08x; %s at "
                    "cycle %llu, %llu instructions, pc %08x",
                    i, (unsigned long long)s[0][i].cycles,
                    (unsigned long long)s[0][i].instructions, s[0][i].r[15],
                    k == NO_JIT ? "no JIT" : "one at a time", (unsigned long long)s[k][i].cycles,
                    (unsigned long long)s[k][i].instructions, s[k][i].r[15]);
        break;
      }
  }
}

static void test_three_ways(void)
{
  const struct prog p = {image, sizeof image, machine};
  three_ways(&p);
  /* the handlers ran, many times */
  CHECK(s[0][n[0] - 1].counters[3] > 100 && s[0][n[0] - 1].counters[4] > 100 &&
        s[0][n[0] - 1].counters[5] > 100);
}

static void test_device_three_ways(void)
{
  for (int w = 0; w < 2; w++) {
    const struct prog p = {dev_image, sizeof dev_image, w ? dev_machine_nowait : dev_machine};
    three_ways(&p);
    /* the loop and both handlers ran, many times */
    CHECK(s[0][n[0] - 1].counters[3] > 100 && s[0][n[0] - 1].counters[4] > 100 &&
          s[0][n[0] - 1].counters[5] > 100);
  }
}

int main(void)
{
  RUN(test_three_ways);
  RUN(test_device_three_ways);
  return check_summary();
}
