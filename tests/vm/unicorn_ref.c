/* Unicorn reference harness for the VM's differential tests: see
 * unicorn_ref.h. Uses only Unicorn's public API (unicorn/unicorn.h). */
#include "unicorn_ref.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unicorn/unicorn.h>

struct uref {
  uc_engine *uc;
  uc_hook stop_hook;
  enum uref_core core;
  uc_err last;
};

/* Unicorn's register ids: r0..r12 are consecutive, SP/LR/PC are not. */
static int reg_id(int i)
{
  static const int id[16] = {
    UC_ARM_REG_R0, UC_ARM_REG_R1, UC_ARM_REG_R2, UC_ARM_REG_R3, UC_ARM_REG_R4, UC_ARM_REG_R5,
    UC_ARM_REG_R6, UC_ARM_REG_R7, UC_ARM_REG_R8, UC_ARM_REG_R9, UC_ARM_REG_R10, UC_ARM_REG_R11,
    UC_ARM_REG_R12, UC_ARM_REG_SP, UC_ARM_REG_LR, UC_ARM_REG_PC,
  };
  return id[i];
}

/* Reaching UREF_STOP ends the run (before the NOP there executes). */
static void stop_hook(uc_engine *uc, uint64_t address, uint32_t size, void *user)
{
  (void)address, (void)size, (void)user;
  uc_emu_stop(uc);
}

static int core_model(enum uref_core core)
{
  switch (core) {
  case UREF_CORTEX_M0: return UC_CPU_ARM_CORTEX_M0;
  case UREF_CORTEX_M3: return UC_CPU_ARM_CORTEX_M3;
  case UREF_CORTEX_M4: return UC_CPU_ARM_CORTEX_M4;
  case UREF_CORTEX_M33: return UC_CPU_ARM_CORTEX_M33;
  }
  return UC_CPU_ARM_CORTEX_M3;
}

struct uref *uref_new(enum uref_core core)
{
  struct uref *u = calloc(1, sizeof *u);
  if (!u)
    return NULL;
  u->core = core;
  uc_err e = uc_open(UC_ARCH_ARM, UC_MODE_THUMB | UC_MODE_MCLASS, &u->uc);
  if (e == UC_ERR_OK)
    e = uc_ctl_set_cpu_model(u->uc, core_model(core));
  if (e == UC_ERR_OK)
    e = uc_mem_map(u->uc, UREF_CODE_BASE, UREF_CODE_SIZE, UC_PROT_ALL);
  if (e == UC_ERR_OK)
    e = uc_mem_map(u->uc, UREF_RAM_BASE, UREF_RAM_SIZE, UC_PROT_ALL);
  /* The stop hook is installed before anything runs: adding hooks later, or
   * switching between counted and uncounted runs, makes Unicorn 2.0.1 flush
   * its translated code, which costs about 1 GB of resident memory. */
  if (e == UC_ERR_OK)
    e = uc_hook_add(u->uc, &u->stop_hook, UC_HOOK_CODE, (void *)stop_hook, NULL, UREF_STOP,
                    UREF_STOP + 1);
  if (e != UC_ERR_OK) {
    fprintf(stderr, "unicorn_ref: cannot create engine: %s\n", uc_strerror(e));
    uref_free(u);
    return NULL;
  }
  /* Unicorn resets M-class cores with CPACR granting CP10/CP11 full access,
   * so FP instructions run without further set-up. Start from a clean PSR
   * (QEMU resets with Z set). */
  static const uint16_t nop = 0xbf00;
  uref_write_code(u, UREF_STOP, &nop, 1);
  struct uref_state st;
  memset(&st, 0, sizeof st);
  uref_set_state(u, &st);
  if (core == UREF_CORTEX_M4 || core == UREF_CORTEX_M33) {
    /* The first FP instruction creates an FP context (FPCCR.ASPEN, with
     * CONTROL.FPCA clear) and reloads FPSCR from FPDSCR, which would lose the
     * FPSCR a test sets. Run one FP instruction now (vmov.f32 s0, s0 near the
     * top of the code window), then clear the state again. */
    static const uint16_t vmov[2] = {0xeeb0, 0x0a40};
    uint32_t at = UREF_CODE_BASE + UREF_CODE_SIZE - 64;
    if (uref_write_code(u, at, vmov, 2) != 0 || uref_run(u, at, 1) != 0) {
      fprintf(stderr, "unicorn_ref: cannot enable the FPU: %s\n", uref_error(u));
      uref_free(u);
      return NULL;
    }
    uref_set_state(u, &st);
  }
  return u;
}

void uref_free(struct uref *u)
{
  if (!u)
    return;
  if (u->uc)
    uc_close(u->uc);
  free(u);
}

int uref_map(struct uref *u, uint32_t base, uint32_t size)
{
  u->last = uc_mem_map(u->uc, base, size, UC_PROT_ALL);
  return u->last == UC_ERR_OK ? 0 : -1;
}

int uref_write_mem(struct uref *u, uint32_t addr, const void *data, size_t len)
{
  u->last = uc_mem_write(u->uc, addr, data, len);
  if (u->last != UC_ERR_OK)
    return -1;
  /* Unicorn keeps translated blocks of code it ran; without this a rewritten
   * instruction at the same address would run the old translation. */
  uc_ctl_remove_cache(u->uc, addr, addr + len);
  return 0;
}

int uref_write_mem_fresh(struct uref *u, uint32_t addr, const void *data, size_t len)
{
  u->last = uc_mem_write(u->uc, addr, data, len);
  return u->last == UC_ERR_OK ? 0 : -1;
}

void uref_flush_code(struct uref *u)
{
  uc_ctl_remove_cache(u->uc, UREF_CODE_BASE, UREF_CODE_BASE + UREF_CODE_SIZE);
}

int uref_read_mem(struct uref *u, uint32_t addr, void *data, size_t len)
{
  u->last = uc_mem_read(u->uc, addr, data, len);
  return u->last == UC_ERR_OK ? 0 : -1;
}

int uref_write_code(struct uref *u, uint32_t addr, const uint16_t *hw, size_t n)
{
  uint8_t buf[256];
  size_t done = 0;
  while (done < n) {
    size_t k = n - done > sizeof buf / 2 ? sizeof buf / 2 : n - done;
    for (size_t i = 0; i < k; i++) {
      buf[2 * i] = (uint8_t)hw[done + i];
      buf[2 * i + 1] = (uint8_t)(hw[done + i] >> 8);
    }
    if (uref_write_mem(u, addr + (uint32_t)(2 * done), buf, 2 * k) != 0)
      return -1;
    done += k;
  }
  return 0;
}

void uref_set_state(struct uref *u, const struct uref_state *st)
{
  for (int i = 0; i < 15; i++)
    uc_reg_write(u->uc, reg_id(i), &st->r[i]);
  /* APSR_NZCVQG writes flags and GE (plain APSR writes only NZCVQ). */
  uint32_t apsr = st->apsr & 0xf80f0000u;
  uc_reg_write(u->uc, UC_ARM_REG_APSR_NZCVQG, &apsr);
  if (u->core == UREF_CORTEX_M4 || u->core == UREF_CORTEX_M33) {
    for (int i = 0; i < 32; i++)
      uc_reg_write(u->uc, UC_ARM_REG_S0 + i, &st->s[i]);
    uc_reg_write(u->uc, UC_ARM_REG_FPSCR, &st->fpscr);
  }
}

void uref_get_state(struct uref *u, struct uref_state *st)
{
  memset(st, 0, sizeof *st);
  for (int i = 0; i < 16; i++)
    uc_reg_read(u->uc, reg_id(i), &st->r[i]);
  /* UC_ARM_REG_APSR reads NZCVQ and, on DSP cores, GE (APSR_NZCVQG is
   * write-only in Unicorn 2.0). */
  uc_reg_read(u->uc, UC_ARM_REG_APSR, &st->apsr);
  if (u->core == UREF_CORTEX_M4 || u->core == UREF_CORTEX_M33) {
    for (int i = 0; i < 32; i++)
      uc_reg_read(u->uc, UC_ARM_REG_S0 + i, &st->s[i]);
    uc_reg_read(u->uc, UC_ARM_REG_FPSCR, &st->fpscr);
  }
}

int uref_run(struct uref *u, uint32_t pc, unsigned count)
{
  /* `until` is an address no test executes; `count` ends the run. */
  u->last = uc_emu_start(u->uc, pc | 1u, 0xfffffffeu, 0, count);
  return u->last == UC_ERR_OK ? 0 : -1;
}

const char *uref_error(const struct uref *u)
{
  return uc_strerror(u->last);
}

void *uref_engine(struct uref *u)
{
  return u->uc;
}
