/* Post-mortem capture on a real fault (tests/mtb/test_mtb_decode.c, docs/mtb.md):
 * the MTB traces a workload with SysTick interrupts, then culprit() loads
 * from an address where nothing answers. The BusFault escalates to
 * HardFault (ARMv6-M: HardFault directly); the handler, installed with
 * MTB_FAULT_HANDLER, writes a post-mortem bundle with target/cortexm/mtb.c
 * into .noinit and exits with code 3 (RESET_TEST: resets, and the next
 * boot finds the bundle with mtb_bundle_check() and exits with code 4). */
#include "mtb.h"
#include "sonde_fw.h"

#ifndef BAD_ADDR
#define BAD_ADDR 0xCFFFFFF0u
#endif

/* The bundle: header + 1 KiB circle + 64 bytes of stack + CRC. */
uint32_t mtb_bundle[MTB_BUNDLE_SIZE(1024, 64) / 4] SONDE_NOINIT;
volatile uint32_t ticks, sink;

void SysTick_Handler(void)
{
  ticks++;
}

#ifndef HANG_TEST
#define HANG_TEST 0 /* 1: spin after the capture, for `sonde mtb fetch` */
#endif
#ifndef RESET_TEST
#define RESET_TEST 0 /* 1: reset after the capture; the next boot finds the bundle */
#endif

void on_fault(uint32_t *frame, uint32_t exc_return, const mtb_fault_regs_t *regs)
{
  mtb_bundle_write(mtb_bundle, sizeof mtb_bundle, frame, exc_return, regs, 64);
  if (HANG_TEST) /* wait for a debugger (sonde mtb fetch) */
    for (;;)
      ;
  if (RESET_TEST) {
    SCB_AIRCR = 0x05FA0004u; /* VECTKEY | SYSRESETREQ */
    for (;;)
      ;
  }
  sonde_exit(3);
}

MTB_FAULT_HANDLER(HardFault_Handler, on_fault)

__attribute__((noinline)) static uint32_t step(uint32_t acc, uint32_t i)
{
  acc = acc * 1103515245u + 12345u;
  if (acc & 0x100)
    acc ^= acc >> 7;
  return acc + i;
}

/* The bug: reads through a pointer it was handed. */
__attribute__((noinline)) uint32_t culprit(const volatile uint32_t *p, uint32_t acc)
{
  return *p + acc;
}

#ifndef FAULT_KIND
#define FAULT_KIND 0 /* 0: bad load, 1: wild function pointer, 2: corrupted return address,
                      * 3: stack overflow */
#endif

typedef void (*handler_fn)(void);
/* A table of callbacks; index 3 was never filled in. */
handler_fn callbacks[4] = {0, 0, 0, (handler_fn)0x1FFF0001u};

/* Bug 1: calls a callback it did not check. */
__attribute__((noinline)) void dispatch(unsigned i)
{
  callbacks[i]();
}

/* Bug 2: overwrites its own saved return address (as a stack buffer
 * overflow would), then returns through it. */
__attribute__((naked, noinline)) void smash(void)
{
  __asm__ volatile("push {r4, lr}\n"
                   "ldr r4, =0x1FFF0001\n"
                   "str r4, [sp, #4]\n"
                   "pop {r4, pc}\n"
                   ".ltorg\n");
}

/* Bug 3: a stack overflow. recurse() keeps a 40-byte buffer per call and
 * goes one level too deep for its stack.
 *   ARMv8-M (M33): the stack has a hardware limit (MSPLIM = the bottom of the
 *   2 KiB stack, __HeapLimit): the push or SP update that would cross it
 *   raises a STKOF UsageFault, escalated to HardFault.
 *   ARMv6-M (M0+): no stack limit. The work runs on its own small stack
 *   (PSP, task.stack, as an RTOS task would); the deepest call's buffer runs
 *   over the callback stored just below that stack, and the task's next call
 *   through it goes wild. */
__attribute__((noinline)) uint32_t recurse(uint32_t depth)
{
  volatile uint8_t buf[40];
  for (unsigned i = 0; i < sizeof buf; i++)
    buf[i] = 0xA5;
  if (depth == 0)
    return buf[1];
  return recurse(depth - 1) + buf[depth % sizeof buf];
}

#if !defined(__ARM_ARCH_8M_MAIN__)
#ifndef RECURSE_DEPTH
#define RECURSE_DEPTH 4
#endif
struct task {
  uint32_t log[64];    /* the task's other data */
  handler_fn on_done;  /* just below the stack: what an overflow hits first */
  uint32_t stack[48];  /* 192 bytes: 5 calls of recurse() (56 bytes each) do not fit */
};
struct task task = {.on_done = 0};

static void task_done(void)
{
  sink++;
}

__attribute__((noinline)) void run_task(void)
{
  sink = recurse(RECURSE_DEPTH);
  task.on_done();
}
#endif

static void stack_overflow(void)
{
#if defined(__ARM_ARCH_8M_MAIN__)
  extern char __HeapLimit[];
  __asm__ volatile("msr msplim, %0" ::"r"(__HeapLimit));
  sink = recurse(1000); /* 1000 x 48 bytes > 2 KiB */
#else
  task.on_done = task_done;
  /* Switch thread mode to PSP = the top of task.stack, run the task. */
  __asm__ volatile("msr psp, %0\n"
                   "movs r0, #2\n"
                   "msr control, r0\n"
                   "isb\n" ::"r"(&task.stack[48])
                   : "r0", "memory");
  run_task();
#endif
}

/* The bundle as lines "MTB <64 hex digits>" (tests/cli/mtb_decode.sh reads
 * them back from `sonde run`'s output). */
static void send_hex(const void *data, size_t len, void *ctx)
{
  (void)ctx;
  static const char hex[] = "0123456789abcdef";
  const uint8_t *b = data;
  char line[4 + 64 + 2];
  for (size_t i = 0; i < len; i += 32) {
    size_t k = 0;
    line[k++] = 'M', line[k++] = 'T', line[k++] = 'B', line[k++] = ' ';
    for (size_t j = i; j < len && j < i + 32; j++) {
      line[k++] = hex[b[j] >> 4];
      line[k++] = hex[b[j] & 15];
    }
    line[k++] = '\n';
    line[k] = 0;
    sh_write0(line);
  }
}

#ifdef BUILD_TAG /* another build of the same code: only a comment and the build id differ */
#define STR_(x) #x
#define STR(x) STR_(x)
__asm__(".pushsection .comment\n.asciz \"sonde build tag " STR(BUILD_TAG) "\"\n.popsection");
#endif

int main(void)
{
  /* A bundle from before the reset is waiting: send it (here: as hex text
   * over semihosting, as it would go over a UART), then stop. */
  if (RESET_TEST && mtb_bundle_send(mtb_bundle, sizeof mtb_bundle, send_hex, 0))
    sonde_exit(4);
  SYST_RVR = 150;
  SYST_CVR = 0;
  if (mtb_enable(1024, 0, 0) != 0)
    return 2;
  SYST_CSR = 7;
#if defined(FPU_TEST) && defined(__ARM_FP)
  /* Known values in the FPU registers at the fault (the bundle keeps S0-S31). */
  __asm__ volatile("vmov.f32 s0, #1.5\n"
                   "vmov.f32 s17, #-2.0\n"
                   "vmov.f32 s31, #0.25\n" ::
                       : "s0", "s17", "s31");
#endif
  uint32_t acc = 1;
  for (uint32_t i = 0; i < 40; i++)
    acc = step(acc, i);
  if (FAULT_KIND == 1)
    dispatch(3);
  else if (FAULT_KIND == 2)
    smash();
  else if (FAULT_KIND == 3)
    stack_overflow();
  else
    acc = culprit((const volatile uint32_t *)BAD_ADDR, acc);
  sink = acc;
  return 0;
}
