/* Exception test: an SVC starts the first task on the process stack (PSP,
 * CONTROL.SPSEL) and PendSV switches between two tasks, the way an RTOS
 * does; EXC_RETURN 0xFFFFFFFD returns to Thread mode on PSP.
 * ARMv7-M ARM B1.4.7 (CONTROL), B1.5.8 (EXC_RETURN). */
#include "exc_common.h"

static uint32_t stack_a[128] __attribute__((aligned(8)));
static uint32_t stack_b[128] __attribute__((aligned(8)));
__attribute__((used)) uint32_t *sp_task[2];
static volatile unsigned cur;
static volatile uint32_t count_a, count_b, switches, pendsv_lr, task_control, task_msp_ok;

__attribute__((used)) uint32_t *switch_c(uint32_t *sp, uint32_t lr)
{
  pendsv_lr = lr;
  sp_task[cur] = sp;
  cur ^= 1;
  switches++;
  return sp_task[cur];
}

__attribute__((naked)) void PendSV_Handler(void)
{
  __asm__ volatile("mrs r0, psp\n\t"
                   "stmdb r0!, {r4-r11}\n\t"
                   "mov r1, lr\n\t"
                   "push {r4, lr}\n\t"
                   "bl switch_c\n\t"
                   "pop {r4, lr}\n\t"
                   "ldmia r0!, {r4-r11}\n\t"
                   "msr psp, r0\n\t"
                   "bx lr\n");
}

__attribute__((naked)) void SVC_Handler(void)
{
  __asm__ volatile("ldr r0, =sp_task\n\t"
                   "ldr r0, [r0]\n\t"
                   "ldmia r0!, {r4-r11}\n\t"
                   "msr psp, r0\n\t"
                   "ldr lr, =0xfffffffd\n\t"
                   "bx lr\n\t"
                   ".ltorg\n");
}

static void yield(void)
{
  SCB_ICSR = 1u << 28; /* PENDSVSET */
  dsb_isb();
}

static void finish(void)
{
  out_kv("count_a", count_a);
  out_kv("count_b", count_b);
  out_kv("switches", switches);
  out("pendsv lr ");
  out_hex(pendsv_lr);
  out("\ncontrol ");
  out_hex(task_control);
  out("\n");
  check(count_a == 5 && count_b == 5 && switches == 9, "counts");
  check(pendsv_lr == 0xFFFFFFFDu, "EXC_RETURN in PendSV");
  check(task_control == 2, "CONTROL.SPSEL in the tasks");
  check(task_msp_ok, "MSP untouched by the tasks");
  sonde_exit(exc_failures);
}

static void task_a(void)
{
  for (;;) {
    count_a++;
    yield();
  }
}

static void task_b(void)
{
  for (;;) {
    count_b++;
    uint32_t c, msp, psp;
    __asm__ volatile("mrs %0, control\n\tmrs %1, msp\n\tmrs %2, psp" : "=r"(c), "=r"(msp), "=r"(psp));
    task_control = c;
    task_msp_ok = psp >= (uint32_t)(uintptr_t)stack_b && psp < (uint32_t)(uintptr_t)(stack_b + 128) &&
                  msp > 0x20000000u;
    if (count_b == 5)
      finish();
    yield();
  }
}

static uint32_t *init_stack(uint32_t *top, void (*fn)(void))
{
  uint32_t *sp = top - 16;
  for (int i = 0; i < 16; i++)
    sp[i] = 0;
  sp[8 + 5] = 0xFFFFFFFFu;                 /* LR */
  sp[8 + 6] = (uint32_t)(uintptr_t)fn & ~1u; /* PC */
  sp[8 + 7] = 0x01000000u;                 /* xPSR: T */
  return sp;
}

int main(void)
{
  SHPR_BYTE(14) = 0xFF; /* PendSV lowest */
  sp_task[0] = init_stack(stack_a + 128, task_a);
  sp_task[1] = init_stack(stack_b + 128, task_b);
  __asm__ volatile("svc #0");
  check(0, "returned to main");
  return exc_failures;
}
