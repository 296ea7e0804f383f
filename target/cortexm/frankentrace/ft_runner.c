/* FrankenTrace target runner (ft_runner.h). The setup path is one straight
 * sequence of stores whose values alone depend on the iteration, so the
 * code before the first sample takes the same cycles in every iteration
 * (paper 4.3). */
#include "ft_runner.h"

#include "../cm_trace.h"

#define FT_AIRCR CM_REG(0xE000ED0Cu)
#define FT_SHPR(n) (*(volatile uint8_t *)(0xE000ED18u + (n)))
#define FT_NVIC_IPR(n) (*(volatile uint8_t *)(0xE000E400u + (n)))
#define FT_ITM_TCR_BUSY (1u << 23)

__attribute__((section(".noinit"))) static struct ft_state ft_st;
static struct ft_entry ft_cur;
static uint32_t ft_active;

uint32_t ft_state_sum(const struct ft_state *s)
{
  uint32_t h = 0x811C9DC5u;
  const uint32_t w[4] = {s->magic, s->run_id, s->iteration, s->total};
  for (unsigned i = 0; i < 4; i++)
    h = (h ^ w[i]) * 0x01000193u;
  return h;
}

static uint32_t pairs(uint32_t nranges)
{
  return nranges == 1 ? 1 : nranges * (nranges - 1) / 2;
}

uint32_t ft_plan_length(const struct ft_config *c, uint32_t n)
{
  return n + c->repeats + (c->nranges ? pairs(c->nranges) * FT_LSU_KINDS : 0);
}

void ft_plan_entry(const struct ft_config *c, uint32_t n, uint32_t j, struct ft_entry *e)
{
  e->kind = 0;
  e->phase = e->range_a = e->range_b = e->lsu_kind = 0;
  if (j < n) {
    e->phase = j;
    return;
  }
  j -= n;
  if (j < c->repeats) {
    e->phase = (uint32_t)(((uint64_t)j * 7919u) % n);
    return;
  }
  j -= c->repeats;
  e->kind = 1;
  e->lsu_kind = j % FT_LSU_KINDS;
  uint32_t p = j / FT_LSU_KINDS, a = 0, b = c->nranges > 1 ? 1 : 0;
  while (p--) { /* the p-th pair (a, b), a < b, in order */
    if (++b >= c->nranges) {
      a++;
      b = a + 1;
    }
  }
  e->range_a = a;
  e->range_b = b;
}

static void put32(uint32_t w)
{
  while (!(CM_ITM_STIM(FT_PORT) & 1)) /* FIFOREADY */
    ;
  CM_ITM_STIM(FT_PORT) = w;
}

/* Metadata record (docs/formats.md, "FrankenTrace wire protocol"). */
static void put_record(uint32_t type, const struct ft_config *c, uint32_t n)
{
  uint32_t ra = c->nranges ? c->ranges[ft_cur.range_a] : 0;
  uint32_t rb = c->nranges ? c->ranges[ft_cur.range_b] : 0;
  const uint32_t w[7] = {(FT_WIRE_MAGIC << 16) | (FT_WIRE_VERSION << 8) | type,
                         c->run_id,
                         c->fw_id,
                         ft_st.iteration,
                         n,
                         (ft_cur.kind << 28) | (ft_cur.lsu_kind << 24) | (ft_cur.phase & 0xFFFFFFu),
                         ft_cur.kind ? (ra << 16) | rb : 0};
  uint32_t h = 0x811C9DC5u; /* FNV-1a: the check word */
  for (unsigned i = 0; i < 7; i++) {
    put32(w[i]);
    h = (h ^ w[i]) * 0x01000193u;
  }
  put32(h);
}

static const struct ft_config *ft_cfg;
static uint32_t ft_n;

/* The four DWT_FUNCTION registers written back to back from registers: no
 * data transfer (a literal load, a spill) can fall between enabling one
 * comparator and the next, so every run of a range sees the same transfers
 * whichever comparator traces it. */
static inline void dwt_functions(uint32_t f0, uint32_t f1, uint32_t f2, uint32_t f3)
{
  __asm volatile("str %1, [%0]\n str %2, [%0, #16]\n str %3, [%0, #32]\n str %4, [%0, #48]"
                 ::"r"(0xE0001028u), "r"(f0), "r"(f1), "r"(f2), "r"(f3)
                 : "memory");
}

static void setup_lsu(const struct ft_config *c)
{
  /* Comparators 0/1 emit for range a/b, 2/3 raise DebugMonitor on the same
   * ranges (watchpoint debug event, DWT_FUNCTION 0x7) when invasive. */
  /* ARMv7-M C1.8.17: 0x21 address offset (EMITRANGE), 0x02 data value, 0x01 PC */
  static const uint32_t fns[FT_LSU_KINDS] = {0x21u, 0x02u, 0x01u};
  uint32_t r[2] = {c->ranges[ft_cur.range_a], c->ranges[ft_cur.range_b]};
  unsigned used = ft_cur.range_a == ft_cur.range_b ? 1 : 2;
  uint32_t f[4] = {0, 0, 0, 0};
  for (unsigned i = 0; i < used; i++) {
    CM_DWT_COMP(i) = r[i] << 16;
    CM_DWT_MASK(i) = 16;
    f[i] = fns[ft_cur.lsu_kind];
    if (c->lsu_delay) {
      CM_DWT_COMP(2 + i) = r[i] << 16;
      CM_DWT_MASK(2 + i) = 16;
      f[2 + i] = 0x7u;
    }
  }
  if (c->lsu_delay)
    CM_DEMCR |= (1u << 16); /* MON_EN */
  dwt_functions(f[0], f[1], f[2], f[3]);
}

int ft_begin(const struct ft_config *c)
{
  ft_cfg = c;
  ft_active = 0;
  uint32_t n = c->n ? c->n : ft_setup_min_n(c->core_hz, c->swo_baud);
  struct ft_setup s;
  int rc = ft_setup_compute(c->core_hz, c->swo_baud, n, 0, &s);
  if (rc)
    return rc;
  ft_n = n;
  if (c->nranges) { /* a pair takes comparators 0/1, and 2/3 for DebugMonitor */
    CM_DEMCR |= CM_DEMCR_TRCENA;
    if ((CM_DWT_CTRL >> 28) < (c->lsu_delay ? 4u : 2u))
      return FT_SETUP_COMPARATORS;
  }
  uint32_t total = ft_plan_length(c, n);
  if (ft_st.magic != FT_STATE_MAGIC || ft_st.sum != ft_state_sum(&ft_st) ||
      ft_st.run_id != c->run_id || ft_st.total != total) {
    ft_st.magic = FT_STATE_MAGIC; /* cold boot or another plan: start over */
    ft_st.run_id = c->run_id;
    ft_st.total = total;
    ft_st.iteration = 0;
    ft_st.sum = ft_state_sum(&ft_st);
  }
  if (ft_st.iteration >= total)
    return 1;
  ft_plan_entry(c, n, ft_st.iteration, &ft_cur);
  ft_setup_compute(c->core_hz, c->swo_baud, n, ft_cur.kind ? 0 : ft_cur.phase, &s);
  if (c->pin_setup)
    c->pin_setup();
  cm_tpiu_swo(s.acpr, 1);
  /* Timestamps: PC samples are dated by them; invasive LSU runs do not use
   * them, and without them more packets fit the ITM FIFO. */
  cm_itm_setup((1u << FT_PORT), !(ft_cur.kind && c->lsu_delay), 0, 1);
  put_record(1, c, n);
  while (CM_ITM_TCR & FT_ITM_TCR_BUSY) /* the metadata is out before sampling */
    ;
  ft_active = 1;
  __asm volatile("dsb\n isb" ::: "memory");
  if (ft_cur.kind == 0)
    cm_dwt_pc_sampling(s.ctrl13 | (s.postinit << 5), s.cyccnt0);
  else
    setup_lsu(c);
  ft_preamble();
  return 0;
}

void ft_end(void)
{
  if (!ft_active)
    return;
  /* No more samples or data trace. An LSU iteration (PC sampling off) turns
   * its comparators off first, so its last traced transfer lies inside the
   * window PC iterations sample. Which one this is comes from DWT_CTRL, not
   * from RAM: a RAM read would be traced itself, with a value that differs
   * between the two kinds of iteration. No literal pool either (movw/movt). */
  __asm volatile("movw r0, #0x1000\n movt r0, #0xE000\n movs r1, #0\n"
                 "ldr r2, [r0]\n tst r2, #0x1000\n bne 1f\n"
                 "str r1, [r0, #0x28]\n str r1, [r0, #0x38]\n str r1, [r0, #0x48]\n"
                 "str r1, [r0, #0x58]\n"
                 "1: str r1, [r0]\n"
                 ::: "r0", "r1", "r2", "cc", "memory");
  while (CM_ITM_TCR & FT_ITM_TCR_BUSY)
    ;
  put_record(2, ft_cfg, ft_n);
  while (CM_ITM_TCR & FT_ITM_TCR_BUSY) /* flushed: the reset loses nothing */
    ;
  ft_st.iteration++;
  ft_st.sum = ft_state_sum(&ft_st);
  __asm volatile("dsb" ::: "memory");
  FT_AIRCR = (0x05FAu << 16) | (1u << 2); /* SYSRESETREQ */
  for (;;)
    ;
}

__attribute__((noinline)) void ft_preamble(void)
{
  /* 64 cycles of single-cycle ALU instructions with a known PC sequence. */
  __asm volatile(".rept 32\n nop\n mov r0, r0\n .endr" ::: "r0");
}

void ft_lower_priorities(uint32_t nirq, uint32_t prio)
{
  for (unsigned i = 0; i < 12; i++)
    if (i != 8) /* SHPR byte 8 = DebugMonitor (exception 12) stays at 0 */
      FT_SHPR(i) = (uint8_t)prio;
  FT_SHPR(8) = 0;
  for (uint32_t i = 0; i < nirq; i++)
    FT_NVIC_IPR(i) = (uint8_t)prio;
}

uint32_t ft_critical_enter(void)
{
  uint32_t old;
  __asm volatile("mrs %0, basepri\n msr basepri_max, %1" : "=r"(old) : "r"(FT_CRITICAL_PRIO) : "memory");
  return old;
}

void ft_critical_exit(uint32_t saved)
{
  __asm volatile("msr basepri, %0" ::"r"(saved) : "memory");
}

/* A leaf that touches no RAM: a load or store in a traced range would be
 * traced itself (and its watchpoint ignored, DebugMonitor being active), and
 * a literal pool in flash is a data read too, hence movw/movt. It clears the
 * comparators' MATCHED flags and waits until the ITM has sent everything
 * (ITM_TCR.BUSY), the delay the next transfer's packets need, no more;
 * FT_DEBUGMON_SPIN adds a fixed loop on top. */
#ifndef FT_DEBUGMON_SPIN
#define FT_DEBUGMON_SPIN 0
#endif
#define FT_STR2(x) #x
#define FT_STR(x) FT_STR2(x)
__attribute__((naked)) void ft_debugmon_handler(void)
{
  __asm volatile("movw r0, #0x1028\n movt r0, #0xE000\n"
                 "ldr r1, [r0]\n ldr r1, [r0, #16]\n ldr r1, [r0, #32]\n ldr r1, [r0, #48]\n"
                 "movw r0, #0x0E80\n movt r0, #0xE000\n"
                 "1: ldr r1, [r0]\n tst r1, #0x800000\n bne 1b\n"
                 "movw r1, #" FT_STR(FT_DEBUGMON_SPIN) "\n"
                 "2: cbz r1, 3f\n subs r1, r1, #1\n b 2b\n"
                 "3: bx lr\n");
}
