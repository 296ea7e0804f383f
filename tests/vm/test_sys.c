/* The system side of the virtual Cortex-M without running instructions:
 * NVIC/SCB/SysTick registers through the bus (as the core accesses them),
 * priority logic, exception entry/return/tail-chain/late arrival through the
 * service call, faults and escalation, peripherals, semihosting.
 * ARMv7-M ARM B1.5, B3.2-B3.4. */
#include "check.h"

#include "vm/nvic.h"
#include "vm/periph.h"
#include "vm/vm_internal.h"

static struct sonde_machine *machine;

/* A VM with a vector table in flash: SP 0x20001000, reset at 0x100, handler
 * of exception n at 0x1000 + 0x10 * n. */
static struct sonde_vm *make_vm(const char *name)
{
  sonde_machine_free(machine);
  machine = NULL;
  if (sonde_machine_builtin(name, &machine) != 0)
    return NULL;
  struct sonde_vm *vm = NULL;
  if (sonde_vm_new(machine, &vm) != 0)
    return NULL;
  uint32_t vt[80];
  vt[0] = 0x20001000;
  vt[1] = 0x101;
  for (unsigned i = 2; i < 80; i++)
    vt[i] = (0x1000 + 0x10 * i) | 1;
  sonde_vm_write_mem(vm, 0, vt, sizeof vt);
  sonde_vm_reset(vm);
  return vm;
}

static uint32_t rd(struct sonde_vm *vm, uint32_t addr)
{
  uint32_t v = 0xDEADBEEF;
  CHECK_EQ_I(vm_bus_read(vm, &vm->bus, addr, 4, &v), VM_BUS_OK);
  return v;
}

static uint32_t rd8(struct sonde_vm *vm, uint32_t addr)
{
  uint32_t v = 0xDEADBEEF;
  CHECK_EQ_I(vm_bus_read(vm, &vm->bus, addr, 1, &v), VM_BUS_OK);
  return v;
}

static void wr(struct sonde_vm *vm, uint32_t addr, uint32_t v)
{
  CHECK_EQ_I(vm_bus_write(vm, &vm->bus, addr, 4, v), VM_BUS_OK);
}

static void wr8(struct sonde_vm *vm, uint32_t addr, uint32_t v)
{
  CHECK_EQ_I(vm_bus_write(vm, &vm->bus, addr, 1, v), VM_BUS_OK);
}

static void test_reset_state(void)
{
  struct sonde_vm *vm = make_vm("cm3");
  REQUIRE(vm);
  CHECK_EQ_U(vm->cpu.r[13], 0x20001000);
  CHECK_EQ_U(vm->cpu.r[15], 0x100);
  CHECK_EQ_U(vm->cpu.r[14], 0xFFFFFFFF);
  CHECK_EQ_U(vm_cpu_get_xpsr(vm), 0x01000000);
  CHECK_EQ_U(rd(vm, 0xE000ED00), 0x412FC231); /* CPUID Cortex-M3 r2p1 */
  CHECK_EQ_U(rd(vm, 0xE000ED14), 0x200);      /* CCR.STKALIGN */
  CHECK_EQ_U(rd(vm, 0xE000ED0C), 0xFA050000); /* AIRCR VECTKEYSTAT */
  CHECK_EQ_U(rd(vm, 0xE000E004), 1);          /* ICTR: 64 IRQs */
  CHECK_EQ_U(rd(vm, 0xE000E010), 4);          /* SYST_CSR.CLKSOURCE */
  CHECK_EQ_U(rd(vm, 0xE000E01C), 0x800752FF); /* CALIB: NOREF, TENMS 479999 */
  CHECK_EQ_U(rd(vm, 0xE000ED88), 0);          /* CPACR: no FPU */
  sonde_vm_free(vm);

  vm = make_vm("cm4f");
  REQUIRE(vm);
  CHECK_EQ_U(rd(vm, 0xE000ED00), 0x410FC241);
  CHECK_EQ_U(rd(vm, 0xE000EF34), 0xC0000000); /* FPCCR ASPEN LSPEN */
  wr(vm, 0xE000ED88, 0xFFFFFFFF);
  CHECK_EQ_U(rd(vm, 0xE000ED88), 0x00F00000);
  sonde_vm_free(vm);

  vm = make_vm("cm0plus");
  REQUIRE(vm);
  CHECK_EQ_U(rd(vm, 0xE000ED00), 0x410CC601);
  CHECK_EQ_U(rd(vm, 0xE000ED14), 0x208); /* fixed STKALIGN, UNALIGN_TRP */
  wr(vm, 0xE000ED14, 0);
  CHECK_EQ_U(rd(vm, 0xE000ED14), 0x208);
  CHECK_EQ_U(rd(vm, 0xE000E004), 0); /* no ICTR on ARMv6-M */
  sonde_vm_free(vm);
}

static void test_nvic_regs(void)
{
  struct sonde_vm *vm = make_vm("cm3");
  REQUIRE(vm);
  wr(vm, 0xE000E100, 0x80000005); /* ISER0: IRQ 0, 2, 31 */
  wr(vm, 0xE000E104, 0x1);        /* ISER1: IRQ 32 */
  CHECK_EQ_U(rd(vm, 0xE000E100), 0x80000005);
  CHECK_EQ_U(rd(vm, 0xE000E180), 0x80000005); /* ICER reads the enables */
  wr(vm, 0xE000E180, 0x4);
  CHECK_EQ_U(rd(vm, 0xE000E100), 0x80000001);
  CHECK_EQ_U(rd(vm, 0xE000E104), 1);
  CHECK_EQ_U(rd(vm, 0xE000E108), 0); /* beyond 64 IRQs: RAZ */
  wr(vm, 0xE000E108, 0xFFFFFFFF);
  CHECK_EQ_U(rd(vm, 0xE000E108), 0);
  /* Byte writes to ISER set only their lane. */
  wr8(vm, 0xE000E101, 0x01); /* IRQ 8 */
  CHECK_EQ_U(rd(vm, 0xE000E100), 0x80000101);

  /* Priorities: 3 bits implemented (0xE0). */
  wr8(vm, 0xE000E400, 0xFF);
  wr8(vm, 0xE000E403, 0x40);
  CHECK_EQ_U(rd(vm, 0xE000E400), 0x400000E0);
  wr(vm, 0xE000E404, 0x12345678);
  CHECK_EQ_U(rd(vm, 0xE000E404), 0x00204060);
  CHECK_EQ_U(rd8(vm, 0xE000E406), 0x20);

  /* Pending, STIR, ICSR.ISRPENDING/VECTPENDING. */
  CHECK_EQ_U(rd(vm, 0xE000ED04), 0);
  wr(vm, 0xE000EF00, 3); /* STIR: IRQ 3 (disabled) */
  CHECK_EQ_U(rd(vm, 0xE000E200), 0x8);
  CHECK_EQ_U(rd(vm, 0xE000ED04), 1u << 22); /* ISRPENDING; not enabled -> VECTPENDING 0 */
  wr(vm, 0xE000E100, 0x8);
  CHECK_EQ_U(rd(vm, 0xE000ED04), (1u << 22) | (19u << 12));
  wr(vm, 0xE000E280, 0x8); /* ICPR */
  CHECK_EQ_U(rd(vm, 0xE000E200), 0);
  /* IABR is read-only. */
  wr(vm, 0xE000E300, 0xFFFFFFFF);
  CHECK_EQ_U(rd(vm, 0xE000E300), 0);
  sonde_vm_free(vm);
}

static void test_scb_regs(void)
{
  struct sonde_vm *vm = make_vm("cm3");
  REQUIRE(vm);
  /* ICSR set/clear of PendSV and SysTick, NMI. */
  wr(vm, 0xE000ED04, 1u << 28);
  CHECK_EQ_U(rd(vm, 0xE000ED04), (1u << 28) | (14u << 12));
  wr(vm, 0xE000ED04, 1u << 26);
  CHECK_EQ_U(rd(vm, 0xE000ED04), (1u << 28) | (1u << 26) | (14u << 12));
  wr(vm, 0xE000ED04, (1u << 27) | (1u << 25));
  CHECK_EQ_U(rd(vm, 0xE000ED04), 0);
  /* AIRCR: without VECTKEY ignored; PRIGROUP with it. */
  wr(vm, 0xE000ED0C, 0x00000500);
  CHECK_EQ_U(rd(vm, 0xE000ED0C), 0xFA050000);
  wr(vm, 0xE000ED0C, 0x05FA0500);
  CHECK_EQ_U(rd(vm, 0xE000ED0C), 0xFA050500);
  /* VTOR: bits [6:0] are zero. */
  wr(vm, 0xE000ED08, 0x200000FF);
  CHECK_EQ_U(rd(vm, 0xE000ED08), 0x20000080);
  /* SCR and CCR writable bits. */
  wr(vm, 0xE000ED10, 0xFFFFFFFF);
  CHECK_EQ_U(rd(vm, 0xE000ED10), 0x16);
  wr(vm, 0xE000ED14, 0xFFFFFFFF);
  CHECK_EQ_U(rd(vm, 0xE000ED14), 0x31B);
  /* SHPR: byte access, 3 bits. */
  wr8(vm, 0xE000ED23, 0xFF); /* SysTick */
  wr8(vm, 0xE000ED22, 0x80); /* PendSV */
  wr8(vm, 0xE000ED1F, 0x60); /* SVCall */
  wr8(vm, 0xE000ED1B, 0x60); /* reserved (exception 7): ignored */
  wr8(vm, 0xE000ED18, 0x20); /* MemManage */
  CHECK_EQ_U(rd(vm, 0xE000ED20), 0xE0800000);
  CHECK_EQ_U(rd(vm, 0xE000ED1C), 0x60000000);
  CHECK_EQ_U(rd(vm, 0xE000ED18), 0x20);
  CHECK_EQ_U(vm_nvic_priority(vm, VM_EXC_SYSTICK), 0xE0);
  /* SHCSR enables and pended bits. */
  wr(vm, 0xE000ED24, 0x70000);
  CHECK_EQ_U(rd(vm, 0xE000ED24), 0x70000);
  CHECK(vm_nvic_is_enabled(vm, VM_EXC_USAGEFAULT));
  wr(vm, 0xE000ED24, 0x78000); /* SVCALLPENDED */
  CHECK(vm_nvic_is_pending(vm, VM_EXC_SVCALL));
  /* CFSR write-one-to-clear, also by byte. */
  vm->sys.cfsr = 0x02010382;
  wr8(vm, 0xE000ED29, 0x02); /* BFSR.PRECISERR */
  CHECK_EQ_U(rd(vm, 0xE000ED28), 0x02010182);
  wr(vm, 0xE000ED28, 0xFFFFFFFF);
  CHECK_EQ_U(rd(vm, 0xE000ED28), 0);
  vm->sys.hfsr = 0x40000000;
  wr(vm, 0xE000ED2C, 0x40000000);
  CHECK_EQ_U(rd(vm, 0xE000ED2C), 0);
  sonde_vm_free(vm);
}

static void test_priorities(void)
{
  struct sonde_vm *vm = make_vm("cm4f"); /* 4 priority bits */
  REQUIRE(vm);
  wr(vm, 0xE000E100, 0xF);
  wr8(vm, 0xE000E400, 0x50); /* IRQ0 */
  wr8(vm, 0xE000E401, 0x40); /* IRQ1 */
  wr8(vm, 0xE000E402, 0x40); /* IRQ2 */
  wr8(vm, 0xE000E403, 0x60); /* IRQ3 */
  wr(vm, 0xE000E200, 0xF);
  /* PRIGROUP 0: full priority is the group; IRQ1 and IRQ2 tie, IRQ1 wins by number. */
  int prio;
  CHECK_EQ_U(vm_nvic_highest_pending(vm, &prio), VM_EXC_IRQ0 + 1);
  CHECK_EQ_I(prio, 0x40);
  CHECK_EQ_U(vm_nvic_takeable(vm), VM_EXC_IRQ0 + 1);
  /* PRIGROUP 5: bits [5:0] subpriority: 0x40 and 0x50 and 0x60 are group 0x40;
   * the subpriority (raw value) then decides. */
  wr(vm, 0xE000ED0C, 0x05FA0500);
  CHECK_EQ_I(vm_nvic_group_priority(vm, 0x60), 0x40);
  CHECK_EQ_I(vm_nvic_group_priority(vm, 0x80), 0x80);
  /* Execution priority: active IRQ1 at 0x40 blocks group 0x40. */
  vm_nvic_set_pending(vm, VM_EXC_IRQ0 + 1, false);
  vm_nvic_set_active(vm, VM_EXC_IRQ0 + 1, true);
  CHECK_EQ_I(vm_nvic_execution_priority(vm, false), 0x40);
  CHECK_EQ_U(vm_nvic_takeable(vm), 0); /* IRQ0 (0x50) same group: no preemption */
  wr(vm, 0xE000ED0C, 0x05FA0000);
  CHECK_EQ_U(vm_nvic_takeable(vm), 0); /* 0x40 vs 0x40: no */
  vm_nvic_set_active(vm, VM_EXC_IRQ0 + 1, false);
  vm_nvic_set_active(vm, VM_EXC_IRQ0 + 3, true); /* 0x60 active */
  CHECK_EQ_U(vm_nvic_takeable(vm), VM_EXC_IRQ0 + 2);
  /* BASEPRI 0x50 masks priorities >= 0x50, not 0x40. */
  vm->cpu.basepri = 0x50;
  CHECK_EQ_I(vm_nvic_execution_priority(vm, false), 0x50);
  CHECK_EQ_U(vm_nvic_takeable(vm), VM_EXC_IRQ0 + 2);
  vm->cpu.basepri = 0x40;
  CHECK_EQ_U(vm_nvic_takeable(vm), 0);
  vm->cpu.basepri = 0;
  vm->cpu.primask = 1;
  CHECK_EQ_I(vm_nvic_execution_priority(vm, false), 0);
  CHECK_EQ_I(vm_nvic_execution_priority(vm, true), 0x60);
  CHECK_EQ_U(vm_nvic_takeable(vm), 0);
  vm->cpu.primask = 0;
  /* Halting debug's C_MASKINTS: IRQs, SysTick and PendSV wait; SVCall not. */
  vm->sys.maskints = true;
  CHECK_EQ_U(vm_nvic_takeable(vm), 0);
  vm_nvic_set_pending(vm, VM_EXC_SVCALL, true);
  CHECK_EQ_U(vm_nvic_takeable(vm), VM_EXC_SVCALL);
  vm_nvic_set_pending(vm, VM_EXC_SVCALL, false);
  vm->sys.maskints = false;
  vm->cpu.faultmask = 1;
  CHECK_EQ_I(vm_nvic_execution_priority(vm, false), -1);
  vm_nvic_set_pending(vm, VM_EXC_NMI, true);
  CHECK_EQ_U(vm_nvic_takeable(vm), VM_EXC_NMI);
  sonde_vm_free(vm);
}

/* The pending choice after ISPR/ICPR writes of several bits (nvic.c keeps its
 * cache across them instead of rescanning): the architecture's answer, and
 * the cache's against a full scan. */
static unsigned pending_choice(struct sonde_vm *vm)
{
  int p_cache = 0, p_scan = 0;
  unsigned e = vm_nvic_highest_pending(vm, &p_cache);
  CHECK_EQ_U(e, vm_nvic_highest_pending_scan(vm, &p_scan));
  CHECK_EQ_I(p_cache, p_scan);
  return e;
}

static void test_pending_writes(void)
{
  struct sonde_vm *vm = make_vm("cm4f"); /* 4 priority bits */
  REQUIRE(vm);
  const unsigned irq0 = VM_EXC_IRQ0;
  wr(vm, 0xE000E100, 0x2F); /* IRQ0-3 and IRQ5 enabled, IRQ4 not */
  wr(vm, 0xE000E400, 0x60404050); /* IRQ0 0x50, IRQ1 0x40, IRQ2 0x40, IRQ3 0x60 */
  wr(vm, 0xE000E404, 0x00002000); /* IRQ4 0x00, IRQ5 0x20 */
  CHECK_EQ_U(pending_choice(vm), 0);
  wr(vm, 0xE000E200, 1u << 3);
  CHECK_EQ_U(pending_choice(vm), irq0 + 3);
  wr(vm, 0xE000E200, 1u << 0);
  CHECK_EQ_U(pending_choice(vm), irq0 + 0);
  wr(vm, 0xE000E200, (1u << 2) | (1u << 1)); /* a tie at 0x40: the lower number */
  CHECK_EQ_U(pending_choice(vm), irq0 + 1);
  wr(vm, 0xE000E200, 1u << 4); /* disabled: pending, not the choice */
  CHECK_EQ_U(rd(vm, 0xE000E200), 0x1F);
  CHECK_EQ_U(pending_choice(vm), irq0 + 1);
  wr(vm, 0xE000E280, 1u << 1);
  CHECK_EQ_U(pending_choice(vm), irq0 + 2);
  wr(vm, 0xE000E280, (1u << 2) | (1u << 0));
  CHECK_EQ_U(pending_choice(vm), irq0 + 3);
  wr(vm, 0xE000E100, 1u << 4); /* enabling IRQ4 (priority 0) makes it the choice */
  CHECK_EQ_U(pending_choice(vm), irq0 + 4);
  wr(vm, 0xE000E280, (1u << 4) | (1u << 3));
  CHECK_EQ_U(pending_choice(vm), 0);
  /* a level-sensitive line held high pends again at once when cleared */
  vm_irq_set_level(vm, 5, true);
  CHECK_EQ_U(pending_choice(vm), irq0 + 5);
  wr(vm, 0xE000E280, 1u << 5);
  CHECK_EQ_U(rd(vm, 0xE000E200), 1u << 5);
  CHECK_EQ_U(pending_choice(vm), irq0 + 5);
  vm_irq_set_level(vm, 5, false);
  wr(vm, 0xE000E280, 1u << 5);
  CHECK_EQ_U(pending_choice(vm), 0);
  CHECK_EQ_U(rd(vm, 0xE000E200), 0);
  sonde_vm_free(vm);
}

/* ---- exception entry and return through the service call ----------------- */

static void test_entry_return(void)
{
  struct sonde_vm *vm = make_vm("cm3");
  REQUIRE(vm);
  vm->max_cycles = UINT64_MAX;
  struct vm_cpu *c = &vm->cpu;
  for (unsigned i = 0; i < 13; i++)
    c->r[i] = 0x100 + i;
  c->r[14] = 0x2345;
  c->r[15] = 0x200;
  c->r[13] = 0x20000FFC; /* not 8-byte aligned: the frame is realigned */
  c->apsr = 0xF8000000;
  c->cycles = 1000;
  wr(vm, 0xE000E100, 1);
  wr(vm, 0xE000E200, 1); /* IRQ0 pending, takeable */
  CHECK(vm->attention & VM_ATTN_EXCEPTION);
  CHECK(!vm_sys_service(vm));
  CHECK_EQ_U(c->ipsr, 16);
  CHECK_EQ_U(c->r[15], 0x1100);
  CHECK_EQ_U(c->r[14], 0xFFFFFFF9);
  CHECK_EQ_U(c->r[13], 0x20000FD8);
  CHECK_EQ_U(c->cycles, 1012);
  uint32_t f[9];
  sonde_vm_read_mem(vm, 0x20000FD8, f, sizeof f);
  CHECK_EQ_U(f[0], 0x100);
  CHECK_EQ_U(f[3], 0x103);
  CHECK_EQ_U(f[4], 0x10C);
  CHECK_EQ_U(f[5], 0x2345);
  CHECK_EQ_U(f[6], 0x200);
  CHECK_EQ_U(f[7], 0xF9000200); /* xPSR with T and bit 9 (realigned) */
  CHECK(vm_nvic_is_active(vm, 16));
  CHECK(!vm_nvic_is_pending(vm, 16));
  CHECK_EQ_U(rd(vm, 0xE000ED04), 16u | (1u << 11)); /* VECTACTIVE, RETTOBASE */
  CHECK_EQ_U(rd(vm, 0xE000E300), 1);                 /* IABR */
  CHECK(!(vm->attention & VM_ATTN_EXCEPTION));
  /* Clobber and return. */
  c->r[0] = c->r[1] = c->r[12] = 0;
  c->apsr = 0;
  vm_exc_return(vm, 0xFFFFFFF9);
  CHECK_EQ_U(c->ipsr, 0);
  CHECK_EQ_U(c->r[0], 0x100);
  CHECK_EQ_U(c->r[12], 0x10C);
  CHECK_EQ_U(c->r[14], 0x2345);
  CHECK_EQ_U(c->r[15], 0x200);
  CHECK_EQ_U(c->r[13], 0x20000FFC);
  CHECK_EQ_U(vm_cpu_get_xpsr(vm), 0xF9000000);
  CHECK_EQ_U(c->cycles, 1022);
  CHECK_EQ_U(vm->sys.nactive, 0);
  CHECK_EQ_U(vm->sys.exceptions_taken, 1);
  sonde_vm_free(vm);
}

/* Wait states of the stack memory and of the vector fetch add to the 12/10
 * cycles: flash 2 read wait states, SRAM 1 write and 3 read wait states. */
static void test_entry_wait_states(void)
{
  static const char text[] = "core m3\nclock 48MHz\nmemory flash 0 64K access=rx wait=2\n"
                             "memory ram 0x20000000 16K wait-write=1 wait-read=3\n";
  struct sonde_machine *m = NULL;
  REQUIRE(sonde_machine_parse(text, strlen(text), "ws.machine", &m, NULL) == 0);
  struct sonde_vm *vm = NULL;
  REQUIRE(sonde_vm_new(m, &vm) == 0);
  uint32_t vt[20] = {0x20001000, 0x101};
  vt[16] = 0x2001;
  sonde_vm_write_mem(vm, 0, vt, sizeof vt);
  sonde_vm_reset(vm);
  vm->max_cycles = UINT64_MAX;
  struct vm_cpu *c = &vm->cpu;
  c->r[15] = 0x200;
  c->cycles = 100;
  wr(vm, 0xE000E100, 1);
  wr(vm, 0xE000E200, 1);
  vm->bus.stall_cycles = 0;
  vm_sys_service(vm);
  CHECK_EQ_U(c->r[15], 0x2000);
  CHECK_EQ_U(c->cycles, 100 + 12 + 8 * 1 + 2);
  CHECK_EQ_U(vm->bus.stall_cycles, 0); /* charged to the entry, not left for the CPU */
  c->cycles = 200;
  vm_exc_return(vm, 0xFFFFFFF9);
  CHECK_EQ_U(c->cycles, 200 + 10 + 8 * 3);
  CHECK_EQ_U(c->r[15], 0x200);
  sonde_vm_free(vm);
  sonde_machine_free(m);
}

static void test_psp_and_tailchain(void)
{
  struct sonde_vm *vm = make_vm("cm3");
  REQUIRE(vm);
  vm->max_cycles = UINT64_MAX;
  struct vm_cpu *c = &vm->cpu;
  /* Thread mode on PSP. */
  vm_cpu_set_sp(vm, true, 0x20000800);
  vm_cpu_set_control(vm, 2);
  CHECK_EQ_U(c->r[13], 0x20000800);
  c->r[15] = 0x300;
  c->cycles = 0;
  wr(vm, 0xE000E100, 3);
  wr8(vm, 0xE000E400, 0x40);
  wr8(vm, 0xE000E401, 0x80);
  wr(vm, 0xE000E200, 3); /* IRQ0 (0x40) and IRQ1 (0x80) */
  vm_sys_service(vm);
  CHECK_EQ_U(c->ipsr, 16);
  CHECK_EQ_U(c->r[14], 0xFFFFFFFD);
  CHECK_EQ_U(c->r[13], 0x20001000); /* MSP in Handler mode */
  CHECK_EQ_U(vm_cpu_get_sp(vm, true), 0x200007E0);
  CHECK_EQ_U(c->control, 0);
  CHECK_EQ_U(c->cycles, 12);
  /* Return tail-chains into IRQ1: 6 cycles, same EXC_RETURN, no unstacking. */
  c->cycles = 100;
  vm_exc_return(vm, 0xFFFFFFFD);
  CHECK_EQ_U(c->ipsr, 17);
  CHECK_EQ_U(c->r[15], 0x1110);
  CHECK_EQ_U(c->r[14], 0xFFFFFFFD);
  CHECK_EQ_U(c->cycles, 106);
  CHECK_EQ_U(vm_cpu_get_sp(vm, true), 0x200007E0);
  vm_exc_return(vm, 0xFFFFFFFD);
  CHECK_EQ_U(c->ipsr, 0);
  CHECK_EQ_U(c->control, 2);
  CHECK_EQ_U(c->r[13], 0x20000800);
  CHECK_EQ_U(c->r[15], 0x300);
  CHECK_EQ_U(c->cycles, 116);
  CHECK_EQ_U(vm->sys.exceptions_taken, 2);
  sonde_vm_free(vm);
}

static void test_late_arrival_and_nesting(void)
{
  struct sonde_vm *vm = make_vm("cm3");
  REQUIRE(vm);
  vm->max_cycles = UINT64_MAX;
  struct vm_cpu *c = &vm->cpu;
  c->r[15] = 0x400;
  c->cycles = 500;
  /* SysTick at priority 0 fires 5 cycles into the entry of IRQ0 (0xE0). */
  wr(vm, 0xE000E100, 1);
  wr8(vm, 0xE000E400, 0xE0);
  wr(vm, 0xE000E014, 4); /* RVR 4 */
  wr(vm, 0xE000E018, 0);
  wr(vm, 0xE000E010, 7); /* at cycle 500: zero at 505 */
  CHECK_EQ_U(vm->event_cycle, 505);
  CHECK_EQ_U(rd(vm, 0xE000E018), 5);
  wr(vm, 0xE000E200, 1);
  vm_sys_service(vm);
  CHECK_EQ_U(c->ipsr, VM_EXC_SYSTICK); /* the late arrival was taken */
  CHECK_EQ_U(c->r[15], 0x10F0);
  CHECK_EQ_U(c->cycles, 512);
  CHECK(vm_nvic_is_pending(vm, 16));
  CHECK(!vm_nvic_is_active(vm, 16));
  /* Zeros at 505 and 510 fell inside the 12 entry cycles; next at 515. */
  CHECK_EQ_U(vm->sys.timers[vm->sys.syst_timer].due, 515);
  wr(vm, 0xE000E010, 0); /* stop SysTick */
  /* Returning tail-chains into IRQ0. */
  vm_exc_return(vm, 0xFFFFFFF9);
  CHECK_EQ_U(c->ipsr, 16);
  CHECK_EQ_U(c->cycles, 518);
  /* Nesting: a higher-priority IRQ1 preempts IRQ0's handler. */
  wr(vm, 0xE000E100, 2);
  wr8(vm, 0xE000E401, 0x20);
  c->r[15] = 0x1104;
  wr(vm, 0xE000E200, 2);
  CHECK(vm->attention & VM_ATTN_EXCEPTION);
  vm_sys_service(vm);
  CHECK_EQ_U(c->ipsr, 17);
  CHECK_EQ_U(c->r[14], 0xFFFFFFF1);
  CHECK_EQ_U(rd(vm, 0xE000ED04) & (1u << 11), 0); /* RETTOBASE: not the only active */
  vm_exc_return(vm, 0xFFFFFFF1);
  CHECK_EQ_U(c->ipsr, 16);
  CHECK_EQ_U(c->r[15], 0x1104);
  CHECK_EQ_U(c->r[14], 0xFFFFFFF9);
  sonde_vm_free(vm);
}

static void test_faults(void)
{
  struct sonde_vm *vm = make_vm("cm3");
  REQUIRE(vm);
  vm->max_cycles = UINT64_MAX;
  struct vm_cpu *c = &vm->cpu;
  c->r[15] = 0x500;
  /* UsageFault disabled: escalates to HardFault, FORCED. */
  vm_fault(vm, VM_FAULT_UNDEFINSTR, 0);
  CHECK_EQ_U(vm->sys.cfsr, 1u << 16);
  CHECK_EQ_U(vm->sys.hfsr, 1u << 30);
  CHECK(vm_nvic_is_pending(vm, VM_EXC_HARDFAULT));
  vm_sys_service(vm);
  CHECK_EQ_U(c->ipsr, 3);
  uint32_t pc;
  sonde_vm_read_mem(vm, c->r[13] + 24, &pc, 4);
  CHECK_EQ_U(pc, 0x500);
  /* A fault in HardFault: lockup. */
  vm_fault(vm, VM_FAULT_DIVBYZERO, 0);
  CHECK(c->locked_up);
  CHECK_EQ_U(c->r[15], 0xEFFFFFFE);
  CHECK(vm->attention & VM_ATTN_STOP);
  CHECK_EQ_U(vm->stop.reason, SONDE_VM_STOP_LOCKUP);
  sonde_vm_free(vm);

  /* BusFault enabled: PRECISERR with BFAR; escalation by priority. */
  vm = make_vm("cm3");
  REQUIRE(vm);
  c = &vm->cpu;
  vm->max_cycles = UINT64_MAX;
  wr(vm, 0xE000ED24, 0x70000);
  vm_fault(vm, VM_FAULT_PRECISERR, 0x30000000);
  CHECK_EQ_U(rd(vm, 0xE000ED28), 0x8200);
  CHECK_EQ_U(rd(vm, 0xE000ED38), 0x30000000);
  CHECK_EQ_U(vm->sys.hfsr, 0);
  vm_sys_service(vm);
  CHECK_EQ_U(c->ipsr, 5);
  /* In the BusFault handler (priority 0) a UsageFault (priority 0) cannot
   * preempt: HardFault. */
  vm_fault(vm, VM_FAULT_UNALIGNED, 0);
  CHECK_EQ_U(vm->sys.hfsr, 1u << 30);
  CHECK(vm_nvic_is_pending(vm, VM_EXC_HARDFAULT));
  CHECK_EQ_U(rd(vm, 0xE000ED28), 0x01008200);
  /* Bad EXC_RETURN: INVPC. */
  vm_sys_service(vm);
  CHECK_EQ_U(c->ipsr, 3);
  vm_fault(vm, VM_FAULT_NOCP, 0);
  CHECK(c->locked_up);
  sonde_vm_free(vm);

  vm = make_vm("cm3");
  REQUIRE(vm);
  c = &vm->cpu;
  vm->max_cycles = UINT64_MAX;
  wr(vm, 0xE000ED24, 0x70000);
  wr8(vm, 0xE000ED1A, 0x20); /* UsageFault priority 0x20 */
  vm_cpu_set_ipsr(vm, 0);
  wr8(vm, 0xE000E400, 0x80); /* below UsageFault, so the INVPC fault preempts */
  wr(vm, 0xE000E100, 1);
  wr(vm, 0xE000E200, 1);
  vm_sys_service(vm);
  CHECK_EQ_U(c->ipsr, 16);
  uint32_t sp_irq = c->r[13];
  vm_exc_return(vm, 0xFFFFFFE9); /* FP frame on a core without FP */
  /* INVPC: IRQ0 deactivated, UsageFault taken at once on the same frame with
   * LR = 0xF0000000 + EXC_RETURN<27:0>. */
  CHECK_EQ_U(vm->sys.cfsr, 1u << 18);
  CHECK_EQ_U(c->ipsr, 6);
  CHECK(!vm_nvic_is_active(vm, 16));
  CHECK_EQ_U(vm->sys.nactive, 1);
  CHECK_EQ_U(c->r[14], 0xFFFFFFE9);
  CHECK_EQ_U(c->r[13], sp_irq);
  CHECK_EQ_U(c->r[15], 0x1060);
  sonde_vm_free(vm);

  /* ARMv6-M: everything is a HardFault, no CFSR. */
  vm = make_vm("cm0plus");
  REQUIRE(vm);
  vm_fault(vm, VM_FAULT_UNDEFINSTR, 0);
  CHECK(vm_nvic_is_pending(vm, VM_EXC_HARDFAULT));
  CHECK_EQ_U(rd(vm, 0xE000ED28), 0);
  sonde_vm_free(vm);
}

/* ARMv8-M (Cortex-M33, no TrustZone): EXC_RETURN is PREFIX|DCRS|FType|Mode|
 * SPSEL with S = ES = 0; ARMv7-M style values are accepted on return. */
static void test_v8m_exc_return(void)
{
  struct sonde_vm *vm = make_vm("cm33");
  REQUIRE(vm);
  vm->max_cycles = UINT64_MAX;
  struct vm_cpu *c = &vm->cpu;
  c->r[15] = 0x300;
  wr(vm, 0xE000E100, 3);
  wr8(vm, 0xE000E400, 0x40);
  wr8(vm, 0xE000E401, 0x20);
  wr(vm, 0xE000E200, 1);
  vm_sys_service(vm);
  CHECK_EQ_U(c->r[14], 0xFFFFFFB8);
  wr(vm, 0xE000E200, 2); /* nested */
  vm_sys_service(vm);
  CHECK_EQ_U(c->ipsr, 17);
  CHECK_EQ_U(c->r[14], 0xFFFFFFB0);
  vm_exc_return(vm, 0xFFFFFFB0);
  CHECK_EQ_U(c->ipsr, 16);
  vm_exc_return(vm, 0xFFFFFFF9); /* v7-M style: accepted */
  CHECK_EQ_U(c->ipsr, 0);
  CHECK_EQ_U(c->r[15], 0x300);
  CHECK_EQ_U(vm->sys.cfsr, 0);
  /* DCRS = 0 (a Secure callee frame) does not exist here: INVPC. */
  wr(vm, 0xE000ED24, 0x70000);
  wr(vm, 0xE000E200, 1);
  vm_sys_service(vm);
  vm_exc_return(vm, 0xFFFFFF98);
  CHECK_EQ_U(vm->sys.cfsr, 1u << 18);
  CHECK_EQ_U(c->ipsr, 6);
  sonde_vm_free(vm);
}

static void test_stacking_errors(void)
{
  struct sonde_vm *vm = make_vm("cm3");
  REQUIRE(vm);
  vm->max_cycles = UINT64_MAX;
  struct vm_cpu *c = &vm->cpu;
  wr(vm, 0xE000ED24, 0x70000); /* fault handlers enabled (priority 0) */
  wr(vm, 0xE000E100, 1);
  wr8(vm, 0xE000E400, 0x80);
  /* Thread mode on a PSP pointing at nothing: stacking fails (STKERR) and
   * the derived BusFault, of higher priority, is taken instead of IRQ0. */
  vm_cpu_set_sp(vm, true, 0x30000100);
  vm_cpu_set_control(vm, 2);
  c->r[15] = 0x800;
  wr(vm, 0xE000E200, 1);
  vm_sys_service(vm);
  CHECK_EQ_U(rd(vm, 0xE000ED28), 1u << 12);
  CHECK_EQ_U(c->ipsr, VM_EXC_BUSFAULT);
  CHECK(vm_nvic_is_pending(vm, 16));
  CHECK_EQ_U(c->r[14], 0xFFFFFFFD);
  /* Returning to that stack fails too: UNSTKERR. */
  wr(vm, 0xE000ED28, 0xFFFFFFFF);
  wr(vm, 0xE000E280, 1);
  vm_exc_return(vm, 0xFFFFFFFD);
  CHECK_EQ_U(rd(vm, 0xE000ED28), 1u << 11);
  CHECK(vm_nvic_is_pending(vm, VM_EXC_BUSFAULT));
  sonde_vm_free(vm);
}

static void test_svc_and_escalation(void)
{
  struct sonde_vm *vm = make_vm("cm3");
  REQUIRE(vm);
  vm->max_cycles = UINT64_MAX;
  vm->cpu.r[15] = 0x602;
  vm_svc(vm);
  CHECK(vm_nvic_is_pending(vm, VM_EXC_SVCALL));
  vm_sys_service(vm);
  CHECK_EQ_U(vm->cpu.ipsr, 11);
  /* SVC in the SVC handler cannot preempt: HardFault FORCED. */
  vm_svc(vm);
  CHECK(vm_nvic_is_pending(vm, VM_EXC_HARDFAULT));
  CHECK_EQ_U(vm->sys.hfsr, 1u << 30);
  sonde_vm_free(vm);
}

static void test_systick(void)
{
  struct sonde_vm *vm = make_vm("cm3");
  REQUIRE(vm);
  vm->max_cycles = UINT64_MAX;
  struct vm_cpu *c = &vm->cpu;
  c->cycles = 100;
  wr(vm, 0xE000E014, 999);
  wr(vm, 0xE000E018, 12345); /* clears */
  wr(vm, 0xE000E010, 3);     /* ENABLE TICKINT at 100: zero at 1100 */
  CHECK_EQ_U(vm->event_cycle, 1100);
  c->cycles = 600;
  CHECK_EQ_U(rd(vm, 0xE000E018), 500);
  c->cycles = 1103; /* first boundary after the zero */
  vm_sys_service(vm);
  CHECK_EQ_U(c->ipsr, VM_EXC_SYSTICK);
  CHECK_EQ_U(c->cycles, 1115);
  CHECK_EQ_U(vm->event_cycle, 2100);
  CHECK_EQ_U(rd(vm, 0xE000E018), 2100 - 1115);
  CHECK_EQ_U(rd(vm, 0xE000E010), 0x10007); /* COUNTFLAG, cleared by the read */
  CHECK_EQ_U(rd(vm, 0xE000E010), 0x7);
  /* Disabled: the counter holds its value. */
  wr(vm, 0xE000E010, 0);
  CHECK_EQ_U(vm->event_cycle, UINT64_MAX);
  c->cycles = 5000;
  CHECK_EQ_U(rd(vm, 0xE000E018), 985);
  sonde_vm_free(vm);
}

static void test_wfi_and_limits(void)
{
  struct sonde_vm *vm = make_vm("cm3");
  REQUIRE(vm);
  struct vm_cpu *c = &vm->cpu;
  vm->max_cycles = 100000;
  c->cycles = 10;
  c->r[15] = 0x702;
  wr(vm, 0xE000E014, 99);
  wr(vm, 0xE000E010, 7); /* zero at 110 */
  vm_wait(vm, false);
  CHECK(c->sleeping);
  CHECK(!vm_sys_service(vm));
  CHECK(!c->sleeping);
  CHECK_EQ_U(vm->sys.sleep_cycles, 100);
  CHECK_EQ_U(c->ipsr, VM_EXC_SYSTICK);
  CHECK_EQ_U(c->cycles, 122);
  /* With PRIMASK set WFI wakes but does not take the interrupt. */
  vm_exc_return(vm, 0xFFFFFFF9);
  c->primask = 1;
  vm_wait(vm, false);
  CHECK(c->sleeping);
  CHECK(!vm_sys_service(vm));
  CHECK(!c->sleeping);
  CHECK_EQ_U(c->ipsr, 0);
  CHECK_EQ_U(c->cycles, 210);
  /* The cycle limit stops a sleeping core exactly at the limit. */
  wr(vm, 0xE000E010, 0);
  vm_nvic_set_pending(vm, VM_EXC_SYSTICK, false);
  vm->max_cycles = 5000;
  vm_wait(vm, false);
  CHECK(vm_sys_service(vm));
  CHECK_EQ_U(vm->stop.reason, SONDE_VM_STOP_CYCLE_LIMIT);
  CHECK_EQ_U(c->cycles, 5000);
  CHECK_EQ_U(vm->sys.sleep_cycles, 100 + 78 + 4790);
  /* WFE with the event register set returns at once and clears it. */
  c->sleeping = false;
  vm_sev(vm);
  vm_wait(vm, true);
  CHECK(!c->sleeping);
  CHECK(!vm->sys.event_register);
  sonde_vm_free(vm);
}

static void test_system_reset(void)
{
  struct sonde_vm *vm = make_vm("cm3");
  REQUIRE(vm);
  vm->max_cycles = UINT64_MAX;
  uint32_t v = 0x12345678;
  sonde_vm_write_mem(vm, 0x20000100, &v, 4);
  vm->cpu.cycles = 777;
  vm->cpu.r[15] = 0x900;
  wr(vm, 0xE000E100, 1);
  wr(vm, 0xE000ED0C, 0x05FA0004); /* SYSRESETREQ */
  CHECK(vm->attention & VM_ATTN_EXCEPTION);
  vm_sys_service(vm);
  CHECK_EQ_U(vm->cpu.r[15], 0x100);
  CHECK_EQ_U(vm->cpu.r[13], 0x20001000);
  CHECK_EQ_U(vm->cpu.cycles, 777);
  CHECK_EQ_U(rd(vm, 0xE000E100), 0);
  uint32_t back = 0;
  sonde_vm_read_mem(vm, 0x20000100, &back, 4);
  CHECK_EQ_U(back, 0x12345678);
  sonde_vm_free(vm);
}

/* ---- peripherals ----------------------------------------------------------- */

struct outbuf {
  char data[256];
  size_t len;
  int stream;
};

static int capture(void *ctx, int stream, const void *data, size_t len)
{
  struct outbuf *o = ctx;
  if (o->len + len < sizeof o->data) {
    memcpy(o->data + o->len, data, len);
    o->len += len;
  }
  o->stream = stream;
  return 0;
}

static void test_peripherals(void)
{
  struct sonde_vm *vm = make_vm("cm3");
  REQUIRE(vm);
  vm->max_cycles = UINT64_MAX;
  struct outbuf o = {{0}, 0, 0};
  sonde_vm_set_output(vm, capture, &o);
  struct vm_cpu *c = &vm->cpu;
  /* UART */
  CHECK_EQ_U(rd(vm, 0x400F0004), 1);
  wr(vm, 0x400F0000, 'h');
  wr(vm, 0x400F0000, 'i');
  CHECK_EQ_U(o.len, 2);
  CHECK(memcmp(o.data, "hi", 2) == 0);
  CHECK_EQ_I(o.stream, SONDE_VM_STREAM_UART0);
  wr(vm, 0xE000E100, 7);
  wr(vm, 0x400F0008, 1); /* TXEIE: level interrupt while TXE */
  CHECK_EQ_U(rd(vm, 0xE000E200) & 1, 1);
  wr(vm, 0x400F0008, 0);
  wr(vm, 0xE000E280, 1);
  CHECK_EQ_U(rd(vm, 0xE000E200) & 1, 0);
  /* GPIO */
  c->cycles = 50;
  wr(vm, 0x400F1004, 0x5);
  c->cycles = 60;
  wr(vm, 0x400F100C, 0x1);
  wr(vm, 0x400F1008, 0x0); /* no change: not recorded */
  CHECK_EQ_U(rd(vm, 0x400F1000), 0x4);
  const struct vm_gpio_change *ch;
  uint64_t dropped;
  CHECK_EQ_U(vm_gpio_changes(vm, &ch, &dropped), 2);
  CHECK_EQ_U(ch[0].cycle, 50);
  CHECK_EQ_U(ch[0].value, 5);
  CHECK_EQ_U(ch[1].cycle, 60);
  CHECK_EQ_U(ch[1].value, 4);
  /* TIMER: periodic 300 cycles with interrupt. */
  c->cycles = 1000;
  wr(vm, 0x400F2004, 300);
  wr(vm, 0x400F2000, 7);
  CHECK_EQ_U(vm->event_cycle, 1300);
  c->cycles = 1150;
  CHECK_EQ_U(rd(vm, 0x400F2008), 150);
  c->cycles = 1301;
  vm_sys_service(vm);
  CHECK_EQ_U(c->ipsr, 17); /* IRQ1 */
  CHECK_EQ_U(rd(vm, 0x400F200C), 1);
  CHECK_EQ_U(vm->event_cycle, 1600);
  wr(vm, 0x400F200C, 1); /* clear MATCH: the level drops */
  vm_exc_return(vm, 0xFFFFFFF9);
  CHECK_EQ_U(rd(vm, 0xE000E200) & 2, 0);
  wr(vm, 0x400F2000, 0);
  /* DELAY: ready 40 cycles after START, interrupt on completion. */
  c->cycles = 2000;
  wr(vm, 0x400F3000, 40);
  wr(vm, 0x400F300C, 1);
  wr(vm, 0x400F3004, 1);
  CHECK_EQ_U(rd(vm, 0x400F3008), 0);
  c->cycles = 2039;
  CHECK_EQ_U(rd(vm, 0x400F3008), 0);
  c->cycles = 2040;
  CHECK_EQ_U(rd(vm, 0x400F3008), 1);
  CHECK_EQ_U(vm->event_cycle, 2040);
  vm_sys_service(vm);
  CHECK_EQ_U(c->ipsr, 18); /* IRQ2 */
  CHECK_EQ_U(rd(vm, 0x400F3010), 1);
  sonde_vm_free(vm);
}

/* A machine file with a UART at 115200 baud and receive data. */
static void test_uart_baud_rx(void)
{
  static const char text[] = "core m3\nclock 1152000\nmemory flash 0 64K access=rx\n"
                             "memory ram 0x20000000 16K\n"
                             "peripheral uart 0x40000000 irq=3 baud=115200 rx=ok\\n\n";
  struct sonde_machine *m = NULL;
  REQUIRE(sonde_machine_parse(text, strlen(text), "uart.machine", &m, NULL) == 0);
  struct sonde_vm *vm = NULL;
  REQUIRE(sonde_vm_new(m, &vm) == 0);
  sonde_vm_reset(vm);
  vm->max_cycles = UINT64_MAX;
  struct outbuf o = {{0}, 0, 0};
  sonde_vm_set_output(vm, capture, &o);
  struct vm_cpu *c = &vm->cpu;
  c->r[13] = 0x20001000; /* the empty image gave SP 0 */
  /* RX: "ok\n", RXNE until drained; level interrupt with RXNEIE. */
  CHECK_EQ_U(rd(vm, 0x40000004), 3);
  wr(vm, 0xE000E100, 1u << 3);
  wr(vm, 0x40000008, 2);
  CHECK_EQ_U(rd(vm, 0xE000E200), 1u << 3);
  CHECK_EQ_U(rd(vm, 0x40000000), 'o');
  CHECK_EQ_U(rd(vm, 0x40000000), 'k');
  CHECK_EQ_U(rd(vm, 0x40000000), '\n');
  CHECK_EQ_U(rd(vm, 0x40000004), 1);
  CHECK_EQ_U(rd(vm, 0x40000000), 0);
  wr(vm, 0xE000E280, 1u << 3); /* the level is low now: stays clear */
  CHECK_EQ_U(rd(vm, 0xE000E200), 0);
  /* TX at 115200 baud and 1.152 MHz: 100 cycles per byte. */
  c->cycles = 1000;
  wr(vm, 0x40000000, 'A');
  CHECK_EQ_U(rd(vm, 0x40000004), 0); /* busy */
  wr(vm, 0x40000000, 'B');           /* dropped: overrun */
  CHECK_EQ_U(rd(vm, 0x40000004), 8);
  wr(vm, 0x40000004, 8);
  CHECK_EQ_U(o.len, 1);
  CHECK_EQ_U(vm->event_cycle, 1100);
  wr(vm, 0x40000008, 1); /* TXEIE while busy: no interrupt yet */
  CHECK_EQ_U(rd(vm, 0xE000E200), 0);
  c->cycles = 1100;
  vm_sys_service(vm);
  CHECK_EQ_U(c->ipsr, 19); /* TX empty: IRQ3 */
  CHECK_EQ_U(rd(vm, 0x40000004), 1);
  sonde_vm_free(vm);
  sonde_machine_free(m);
}

static void test_sevonpend(void)
{
  struct sonde_vm *vm = make_vm("cm3");
  REQUIRE(vm);
  wr(vm, 0xE000ED10, 0x10); /* SEVONPEND */
  wr(vm, 0xE000E200, 1);     /* disabled interrupt becomes pending */
  CHECK(vm->sys.event_register);
  vm_wait(vm, true);         /* WFE returns at once */
  CHECK(!vm->cpu.sleeping);
  CHECK(!vm->sys.event_register);
  wr(vm, 0xE000E200, 1); /* already pending: no new event */
  CHECK(!vm->sys.event_register);
  sonde_vm_free(vm);
}

/* ---- semihosting ------------------------------------------------------------- */

static uint32_t semi(struct sonde_vm *vm, uint32_t op, uint32_t arg)
{
  vm->cpu.r[0] = op;
  vm->cpu.r[1] = arg;
  CHECK(vm_bkpt(vm, 0xAB));
  return vm->cpu.r[0];
}

static void put(struct sonde_vm *vm, uint32_t addr, const void *p, size_t n)
{
  CHECK_EQ_I(sonde_vm_write_mem(vm, addr, p, n), 0);
}

static void test_semihosting(void)
{
  struct sonde_vm *vm = make_vm("cm3");
  REQUIRE(vm);
  struct outbuf o = {{0}, 0, 0};
  sonde_vm_set_output(vm, capture, &o);
  put(vm, 0x20000000, "hello\0", 6);
  semi(vm, 0x04, 0x20000000); /* SYS_WRITE0 */
  CHECK_EQ_U(o.len, 5);
  CHECK_EQ_I(o.stream, SONDE_VM_STREAM_STDOUT);
  semi(vm, 0x03, 0x20000004); /* SYS_WRITEC 'o' */
  CHECK(memcmp(o.data, "helloo", 6) == 0);
  /* SYS_OPEN ":tt" w -> stdout handle, then SYS_WRITE to it and to stderr. */
  put(vm, 0x20000010, ":tt\0", 4);
  uint32_t blk[3] = {0x20000010, 4, 3};
  put(vm, 0x20000020, blk, sizeof blk);
  uint32_t h = semi(vm, 0x01, 0x20000020);
  CHECK_EQ_U(h, 2);
  blk[1] = 8;
  put(vm, 0x20000020, blk, sizeof blk);
  CHECK_EQ_U(semi(vm, 0x01, 0x20000020), 3);
  blk[1] = 0;
  put(vm, 0x20000020, blk, sizeof blk);
  CHECK_EQ_U(semi(vm, 0x01, 0x20000020), 1);
  put(vm, 0x20000010, "a.txt\0", 6);
  blk[1] = 4;
  blk[2] = 5;
  put(vm, 0x20000020, blk, sizeof blk);
  CHECK_EQ_U(semi(vm, 0x01, 0x20000020), 0xFFFFFFFF);
  CHECK_EQ_U(semi(vm, 0x13, 0), 2); /* SYS_ERRNO: ENOENT */
  uint32_t wblk[3] = {3, 0x20000000, 3};
  put(vm, 0x20000030, wblk, sizeof wblk);
  o.len = 0;
  CHECK_EQ_U(semi(vm, 0x05, 0x20000030), 0); /* all written */
  CHECK_EQ_I(o.stream, SONDE_VM_STREAM_STDERR);
  CHECK(memcmp(o.data, "hel", 3) == 0);
  uint32_t one = 2;
  put(vm, 0x20000040, &one, 4);
  CHECK_EQ_U(semi(vm, 0x09, 0x20000040), 1); /* SYS_ISTTY */
  CHECK_EQ_U(semi(vm, 0x02, 0x20000040), 0); /* SYS_CLOSE */
  /* SYS_READ from stdin: end of file (all bytes unread). */
  uint32_t rblk[3] = {1, 0x20000100, 16};
  put(vm, 0x20000050, rblk, sizeof rblk);
  CHECK_EQ_U(semi(vm, 0x06, 0x20000050), 16);
  /* Clocks from simulated time: 48 MHz. */
  vm->cpu.cycles = 48000000ull * 3 + 480000 * 7;
  CHECK_EQ_U(semi(vm, 0x10, 0), 307);  /* SYS_CLOCK centiseconds */
  CHECK_EQ_U(semi(vm, 0x11, 0), 3);    /* SYS_TIME */
  CHECK_EQ_U(semi(vm, 0x31, 0), 48000000);
  CHECK_EQ_U(semi(vm, 0x30, 0x20000060), 0);
  uint32_t el[2];
  sonde_vm_read_mem(vm, 0x20000060, el, 8);
  CHECK_EQ_U(el[0], 147360000);
  CHECK_EQ_U(el[1], 0);
  /* SYS_HEAPINFO */
  uint32_t ptr = 0x20000070;
  put(vm, 0x20000068, &ptr, 4);
  CHECK_EQ_U(semi(vm, 0x16, 0x20000068), 0);
  uint32_t hi[4];
  sonde_vm_read_mem(vm, 0x20000070, hi, 16);
  CHECK_EQ_U(hi[0], 0x20000000);
  CHECK_EQ_U(hi[1], 0x20020000);
  CHECK_EQ_U(hi[2], 0);
  CHECK_EQ_U(hi[3], 0);
  /* SYS_GET_CMDLINE: empty. */
  uint32_t cl[2] = {0x20000080, 32};
  put(vm, 0x20000078, cl, 8);
  put(vm, 0x20000080, "xyz", 3);
  CHECK_EQ_U(semi(vm, 0x15, 0x20000078), 0);
  CHECK_EQ_U(rd8(vm, 0x20000080), 0);
  /* Unknown operation. */
  CHECK_EQ_U(semi(vm, 0x99, 0), 0xFFFFFFFF);
  /* SYS_EXIT_EXTENDED with code 42. */
  uint32_t ex[2] = {0x20026, 42};
  put(vm, 0x20000090, ex, 8);
  vm->cpu.r[15] = 0x1234;
  semi(vm, 0x20, 0x20000090);
  CHECK(vm->attention & VM_ATTN_STOP);
  CHECK_EQ_U(vm->stop.reason, SONDE_VM_STOP_EXIT);
  CHECK_EQ_I(vm->stop.exit_code, 42);
  CHECK_EQ_U(vm->stop.pc, 0x1234);
  /* SYS_EXIT: ApplicationExit is 0, any other reason 1. */
  vm->attention = 0;
  semi(vm, 0x18, 0x20026);
  CHECK_EQ_I(vm->stop.exit_code, 0);
  semi(vm, 0x18, 0x20023);
  CHECK_EQ_I(vm->stop.exit_code, 1);
  /* BKPT other than 0xAB: breakpoint stop, not executed. */
  vm->attention = 0;
  CHECK(!vm_bkpt(vm, 0x01));
  CHECK_EQ_U(vm->stop.reason, SONDE_VM_STOP_BREAKPOINT);
  sonde_vm_free(vm);
}

static void test_api(void)
{
  struct sonde_vm *vm = make_vm("cm4f");
  REQUIRE(vm);
  uint32_t v;
  CHECK_EQ_I(sonde_vm_read_reg(vm, SONDE_VM_REG_MSP, &v), 0);
  CHECK_EQ_U(v, 0x20001000);
  CHECK_EQ_I(sonde_vm_write_reg(vm, SONDE_VM_REG_PSP, 0x20000400), 0);
  CHECK_EQ_I(sonde_vm_write_reg(vm, SONDE_VM_REG_CONTROL, 2), 0);
  CHECK_EQ_I(sonde_vm_read_reg(vm, SONDE_VM_REG_SP, &v), 0);
  CHECK_EQ_U(v, 0x20000400);
  CHECK_EQ_I(sonde_vm_write_reg(vm, SONDE_VM_REG_S0 + 31, 0x3F800000), 0);
  CHECK_EQ_I(sonde_vm_read_reg(vm, 55, &v), 0);
  CHECK_EQ_U(v, 0x3F800000);
  CHECK_EQ_I(sonde_vm_write_reg(vm, SONDE_VM_REG_BASEPRI, 0xFF), 0);
  CHECK_EQ_I(sonde_vm_read_reg(vm, SONDE_VM_REG_BASEPRI, &v), 0);
  CHECK_EQ_U(v, 0xF0);
  CHECK_EQ_I(sonde_vm_read_reg(vm, 56, &v), SONDE_E_ARG);
  CHECK_EQ_I(sonde_vm_read_mem(vm, 0x30000000, &v, 4), SONDE_E_RANGE);
  CHECK_EQ_STR(sonde_vm_error_detail(vm), "read of 4 bytes at 0x30000000: not all mapped");
  /* Debug reads of SYST_CSR do not clear COUNTFLAG. */
  vm->sys.syst_csr |= 1u << 16;
  CHECK_EQ_I(sonde_vm_read_mem(vm, 0xE000E010, &v, 4), 0);
  CHECK_EQ_I(sonde_vm_read_mem(vm, 0xE000E010, &v, 4), 0);
  CHECK_EQ_U(v, 0x10004);
  /* Run with a limit already reached. */
  struct sonde_vm_stop st;
  CHECK_EQ_I(sonde_vm_run(vm, 0, &st), 0);
  CHECK_EQ_U(st.reason, SONDE_VM_STOP_CYCLE_LIMIT);
  sonde_vm_free(vm);
  vm = make_vm("cm3");
  REQUIRE(vm);
  CHECK_EQ_I(sonde_vm_read_reg(vm, SONDE_VM_REG_FPSCR, &v), SONDE_E_UNSUPPORTED);
  sonde_vm_free(vm);
  sonde_vm_free(NULL);
}

int main(void)
{
  RUN(test_reset_state);
  RUN(test_nvic_regs);
  RUN(test_scb_regs);
  RUN(test_priorities);
  RUN(test_pending_writes);
  RUN(test_entry_return);
  RUN(test_entry_wait_states);
  RUN(test_psp_and_tailchain);
  RUN(test_late_arrival_and_nesting);
  RUN(test_faults);
  RUN(test_v8m_exc_return);
  RUN(test_stacking_errors);
  RUN(test_svc_and_escalation);
  RUN(test_systick);
  RUN(test_wfi_and_limits);
  RUN(test_system_reset);
  RUN(test_peripherals);
  RUN(test_uart_baud_rx);
  RUN(test_sevonpend);
  RUN(test_semihosting);
  RUN(test_api);
  sonde_machine_free(machine);
  return check_summary();
}
