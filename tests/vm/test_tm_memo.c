/* The timing model's memo (src/vm/tm_memo.c) against the model itself
 * (cfg.memo_off): two models fed the same instructions must answer every
 * step with the same cycles. The steps are driven directly (tm.h), so the
 * model's state repeats exactly and runs replay:
 *  - a loop whose move is replaced by a load at the same address: with the
 *    code write reported (vm_tm_memo_code_written) the stale runs, whose
 *    facts still match (same PC, same next PC, a move has no data class to
 *    check), must not replay;
 *  - a loop that alternates between the two ways of a conditional branch
 *    and has an IT block whose instruction executes or not (the runs' links);
 *  - in cache mode, a loop over more code than the cache holds between the
 *    iterations of a short one (runs with a miss are not recorded). That a
 *    run whose lines were evicted does not replay is checked on firmware by
 *    test_vm_block_exec (fw_printf_m3_O2, qemu_fw_printf_m0plus, ...);
 *  - random walks over random code (40 seeds x 200,000 steps): they fail
 *    when the memo's key clamps a queued word's cycle too far, takes a wrong
 *    lower bound for the bus times, skips the exact-address check, the slow
 *    region or code-port check of the "plain" class, or memoizes a store to
 *    the cache control register. */
#include "check.h"

#include <string.h>

#include "vm/tm.h"

#define CODE 0x1000u /* bytes of code at 0 */
static uint16_t code[CODE / 2];

static uint16_t rd16(void *ctx, uint32_t addr)
{
  (void)ctx;
  return addr < CODE ? code[addr / 2] : 0;
}

static const struct vm_decode_features feat = {true, false, false, false};

static struct vm_tm_cfg config(bool cache)
{
  struct vm_tm_cfg c;
  memset(&c, 0, sizeof c);
  c.on = true;
  c.fetch_depth = 3;
  c.flash_base = 0;
  c.flash_size = 512 * 1024;
  c.flash_wait = 2;
  c.flash_line = 8;
  c.cache = cache;
  c.cache_ctl = 0x40034004;
  c.cache_size = 256; /* small: the long loop below evicts */
  c.cache_ways = 2;
  c.cache_line = 8;
  c.cache_tag = 1;
  c.cache_prefetch = true;
  c.cache_mode = 1;
  c.write_buffer = true;
  c.lat[0] = (struct vm_tm_lat){0x400f0000, 0x10000, 3, 2};
  c.nlat = 1;
  return c;
}

struct pair {
  struct vm_tm tm[2]; /* 0: with the memo, 1: without */
  unsigned steps, mismatches;
};

static void pair_init(struct pair *p, bool cache)
{
  memset(p, 0, sizeof *p);
  for (unsigned k = 0; k < 2; k++) {
    struct vm_tm_cfg c = config(cache);
    c.memo_off = k == 1;
    REQUIRE(vm_tm_init(&p->tm[k], &c, 0) == 0);
    p->tm[k].read16 = rd16;
  }
  CHECK(p->tm[0].memo != NULL);
  CHECK(p->tm[1].memo == NULL);
}

static void pair_free(struct pair *p)
{
  vm_tm_free(&p->tm[0]);
  vm_tm_free(&p->tm[1]);
}

/* One instruction at pc (decoded from code[]) going to next. */
static void step(struct pair *p, uint32_t pc, uint32_t next, bool executed, uint32_t addr)
{
  uint16_t h1 = code[pc / 2], h2 = vm_thumb_is32(h1) ? code[pc / 2 + 1] : 0;
  struct vm_insn d;
  vm_decode(&feat, h1, h2, &d);
  struct vm_tm_insn in = {&d, pc, next, executed, 0, addr ? 1 : 0, addr, 0};
  unsigned c0 = vm_tm_step(&p->tm[0], &in), c1 = vm_tm_step(&p->tm[1], &in);
  p->steps++;
  if ((c0 != c1 || p->tm[0].now != p->tm[1].now) && p->mismatches++ < 3)
    CHECK_FAIL_("step %u at pc %04x: %u cycles with the memo, %u without", p->steps, pc, c0,
                c1);
}

static void test_code_written(void)
{
  struct pair p;
  pair_init(&p, false);
  /* 0x100: movs r0, #1 ; adds r3, r3, r0 ; b 0x100 */
  code[0x100 / 2] = 0x2001;
  code[0x102 / 2] = 0x181b;
  code[0x104 / 2] = 0xe7fc;
  for (unsigned i = 0; i < 2000; i++) {
    step(&p, 0x100, 0x102, true, 0);
    step(&p, 0x102, 0x104, true, 0);
    step(&p, 0x104, 0x100, true, 0);
  }
  code[0x100 / 2] = 0x6808; /* ldr r0, [r1] */
  vm_tm_memo_code_written(&p.tm[0], 0x100, 2);
  for (unsigned i = 0; i < 2000; i++) {
    step(&p, 0x100, 0x102, true, 0x20000100);
    step(&p, 0x102, 0x104, true, 0);
    step(&p, 0x104, 0x100, true, 0);
  }
  CHECK_EQ_U(p.mismatches, 0);
  pair_free(&p);
}

static void test_branches_and_it(void)
{
  struct pair p;
  pair_init(&p, true);
  /* 0x200: cmp r1, #0 ; it eq ; addeq r3, #1 ; cmp r2, #0 ; beq 0x200 ;
   *        adds r4, #1 ; b 0x200 */
  static const uint16_t prog[] = {0x2900, 0xbf08, 0x3301, 0x2a00, 0xd0fa, 0x3401, 0xe7f8};
  memcpy(&code[0x200 / 2], prog, sizeof prog);
  uint32_t seed = 1;
  for (unsigned i = 0; i < 20000; i++) {
    seed = seed * 1103515245u + 12345u;
    bool eq1 = (seed >> 16) & 1, eq2 = (seed >> 17) & 1;
    step(&p, 0x200, 0x202, true, 0);
    step(&p, 0x202, 0x204, true, 0);
    step(&p, 0x204, 0x206, eq1, 0);
    step(&p, 0x206, 0x208, true, 0);
    if (eq2) {
      step(&p, 0x208, 0x200, true, 0);
    } else {
      step(&p, 0x208, 0x20a, true, 0);
      step(&p, 0x20a, 0x20c, true, 0);
      step(&p, 0x20c, 0x200, true, 0);
    }
  }
  CHECK_EQ_U(p.mismatches, 0);
  pair_free(&p);
}

static void test_cache_evictions(void)
{
  struct pair p;
  pair_init(&p, true);
  /* 0x400: 0x300 bytes of adds r3, #1, then b 0x400: three times the cache;
   * and a short loop at 0x800 run in between, so that its runs' lines come
   * and go */
  for (uint32_t a = 0x400; a < 0x700; a += 2)
    code[a / 2] = 0x3301;
  code[0x700 / 2] = 0xe67e; /* b 0x400 */
  code[0x800 / 2] = 0x3301;
  code[0x802 / 2] = 0x3301;
  code[0x804 / 2] = 0xe7fc; /* b 0x800 */
  for (unsigned round = 0; round < 50; round++) {
    for (unsigned i = 0; i < 20; i++) {
      step(&p, 0x800, 0x802, true, 0);
      step(&p, 0x802, 0x804, true, 0);
      step(&p, 0x804, 0x800, true, 0);
    }
    for (uint32_t a = 0x400; a < 0x700; a += 2)
      step(&p, a, a + 2, true, 0);
    step(&p, 0x700, 0x800, true, 0); /* (as a jump the model does not know) */
  }
  CHECK_EQ_U(p.mismatches, 0);
  pair_free(&p);
}

/* A random walk over random code: loads, stores, LDM/STM, branches of
 * every kind, IT, 32-bit instructions; data at SRAM, the flash (the shared
 * port), a slow region, a bit-band alias, the cache control register (the
 * mode changes). Decisions and addresses are mostly fixed per PC, so runs
 * repeat and replay, and sometimes not, so replays stop matching. */
static uint32_t mix(uint32_t x)
{
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  return x ^ (x >> 16);
}

static void random_walk(uint32_t seed, bool cache)
{
  static const uint16_t menu16[] = {
      0x2001, 0x181b, 0x6808, 0x6008, 0xc90c, 0xc10c, 0xd002, 0xd1fc, 0xe002, 0xe7fa,
      0xb110, 0xb918, 0x4770, 0xbf08, 0xbf0c, 0x4348, 0x1c40, 0x3b01, 0x680a, 0x600b};
  static const uint32_t data[] = {0x20000100, 0x20000104, 0x000000f0, 0x400f0010,
                                  0x22000040, 0x10000000, 0x40034004};
  const uint32_t lo = 0x100, n = 96; /* halfwords of code */
  uint32_t r = seed;
  for (uint32_t i = 0; i < n; i++) {
    r = mix(r + i);
    if (r % 8 == 0 && i + 1 < n) { /* a 32-bit one: ldr.w r0, [r1, #4] or mla r0, r1, r2, r3 */
      code[lo / 2 + i] = r & 8 ? 0xf8d1 : 0xfb01;
      code[lo / 2 + ++i] = r & 8 ? 0x0004 : 0x3002;
    } else {
      code[lo / 2 + i] = menu16[(r >> 8) % (sizeof menu16 / sizeof menu16[0])];
    }
  }
  struct pair p;
  pair_init(&p, cache);
  for (unsigned k = 0; k < 2; k++)
    vm_tm_redirect(&p.tm[k], lo, 0);
  uint32_t pc = lo;
  for (unsigned i = 0; i < 200000 && p.mismatches < 3; i++) {
    uint16_t h1 = code[pc / 2], h2 = vm_thumb_is32(h1) ? code[pc / 2 + 1] : 0;
    struct vm_insn d;
    vm_decode(&feat, h1, h2, &d);
    r = mix(r + i);
    const uint32_t h = mix(pc ^ seed);
    const bool odd = r % 16 == 0; /* now and then not as usual */
    uint32_t next = pc + d.len;
    bool executed = !(d.op != VM_OP_IT && ((h >> 3) % 8 == 0) != odd);
    bool branch = d.op == VM_OP_B || d.op == VM_OP_BL || d.op == VM_OP_BX ||
                  d.op == VM_OP_CBZ || d.op == VM_OP_CBNZ;
    if (branch) {
      executed = true;
      bool taken = (d.op == VM_OP_B && d.cond == 14) || d.op == VM_OP_BX ||
                   (((h >> 5) & 1) != odd);
      if (taken)
        next = d.op == VM_OP_BX ? lo + 2 * ((h >> 7) % 16) : pc + 4 + d.imm;
    }
    if (next < lo || next >= lo + 2 * n - 2)
      next = lo;
    uint32_t addr = 0, wdata = r;
    if (executed && !branch) {
      addr = data[(h >> 9) % 6];
      if (odd)
        addr = data[(r >> 8) % 7];
      if (addr == 0x40034004) {
        static const uint32_t modes[] = {0, 1, 3};
        wdata = modes[(r >> 12) % 3];
      }
    }
    struct vm_tm_insn in = {&d, pc, next, executed, 0, addr ? 1 : 0, addr, wdata};
    unsigned c0 = vm_tm_step(&p.tm[0], &in), c1 = vm_tm_step(&p.tm[1], &in);
    if ((c0 != c1 || p.tm[0].now != p.tm[1].now) && p.mismatches++ < 3)
      CHECK_FAIL_("seed %u step %u at pc %04x: %u cycles with the memo, %u without", seed, i,
                  pc, c0, c1);
    if (r % 4096 == 0) /* an exception entry or return: a redirect */
      for (unsigned k = 0; k < 2; k++)
        vm_tm_redirect(&p.tm[k], next, 12);
    pc = next;
  }
  CHECK_EQ_U(p.mismatches, 0);
  pair_free(&p);
}

static void test_random_walks(void)
{
  for (uint32_t seed = 1; seed <= 40; seed++)
    random_walk(seed, seed & 1);
}

int main(void)
{
  RUN(test_code_written);
  RUN(test_branches_and_it);
  RUN(test_cache_evictions);
  RUN(test_random_walks);
  return check_summary();
}
