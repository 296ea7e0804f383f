/* The memo's fork (tm_memo.h: a run's `fork`, valid while its ver is
 * `fork_ver`) when the fork's slot was recorded again while a run still
 * points at it: compiled code (jit_x64.c emit_tm_fork) and the block
 * executor (step_slow, vm_tm_memo_fork) must see the new ver and take the
 * fork as gone, not replay what the slot now holds.
 *
 * A loop whose conditional branch goes the other way every iteration (or
 * every other one), so that its run's replay stops matching at the branch
 * and goes on in its fork nearly every time. The VM runs it compiled, with
 * the compiler off, and one instruction at a time with the model stepping
 * every instruction without the memo (the ground truth). At pseudo-random
 * stops the first two have every fork's slot recorded again "by hand" as
 * start() (tm_memo.c) would record another run there: ver + 1, another key
 * (a state no lookup can find, so that whoever asks for the old key records
 * it again) and steps from the same PC with other cycles (a run recorded
 * from another state, whose first step is the same branch). At every stop
 * the cycle and instruction counts, r0-r15 and xPSR must equal the ground
 * truth's: a stale fork replayed would charge the other cycles.
 *
 * Which slots to record again is found from the memo's own runs: nothing is
 * changed but what a recording into those slots changes. Random programs
 * cannot get there: a slot is taken by another run only when two more keys
 * fall in its set, and then the fork's first step must still match. */
#include "check.h"

#include <stdio.h>
#include <string.h>

#include "sonde/vm.h"
#include "vm/machine.h"
#include "vm/tm_memo.h"
#include "vm/vm_internal.h"
#include "vm_state_util.h"

#if defined(__x86_64__) && defined(__linux__)
#define HAVE_JIT 1
#else
#define HAVE_JIT 0
#endif

#define CODE_AT 0x100u

static const char memsys_m3[] = MEMSYS_M3_MACHINE("fork-m3-memsys");

static uint64_t rng = 0x2545f4914f6cdd1dull;
static unsigned below(unsigned n)
{
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (unsigned)(rng >> 16) % n;
}

/* loop: r0 counts; bit `bit` of it picks the way of the BEQ, the last step
 * of the loop's run (the fork is at that step); a load and a store on each
 * way so that the ways' runs have data accesses too. */
static unsigned program(uint16_t *c, unsigned bit)
{
  unsigned n = 0;
  c[n++] = 0x2000;                                     /* 0x100 movs r0, #0 */
  c[n++] = 0x4c07;                                     /* 0x102 ldr r4, [pc, #28] (0x120) */
  c[n++] = 0x3001;                                     /* 0x104 loop: adds r0, #1 */
  c[n++] = (uint16_t)(0x0001 | (31 - bit) << 6);       /* 0x106 lsls r1, r0, #(31 - bit) */
  c[n++] = 0xd003;                                     /* 0x108 beq 0x112 */
  c[n++] = 0x3201;                                     /* 0x10a adds r2, #1 */
  c[n++] = 0x6022;                                     /* 0x10c str r2, [r4] */
  c[n++] = 0x6865;                                     /* 0x10e ldr r5, [r4, #4] */
  c[n++] = 0xe7f8;                                     /* 0x110 b loop */
  c[n++] = 0x3301;                                     /* 0x112 adds r3, #1 */
  c[n++] = 0x6063;                                     /* 0x114 str r3, [r4, #4] */
  c[n++] = 0x6825;                                     /* 0x116 ldr r5, [r4] */
  c[n++] = 0x46c0;                                     /* 0x118 mov r8, r8 */
  c[n++] = 0xe7f3;                                     /* 0x11a b loop */
  c[n++] = 0x46c0;                                     /* 0x11c */
  c[n++] = 0x46c0;                                     /* 0x11e */
  c[n++] = 0x0100, c[n++] = 0x2000;                    /* 0x120 .word 0x20000100 */
  return n;
}

static struct sonde_vm *make(struct sonde_machine *m, const uint16_t *code, unsigned n,
                             bool jit, uint32_t sp)
{
  struct sonde_vm *vm = NULL;
  if (sonde_vm_new(m, &vm))
    return NULL;
  sonde_vm_set_jit(vm, jit);
  static uint8_t img[CODE_AT + 256];
  memset(img, 0, sizeof img);
  const uint32_t vec[2] = {sp, CODE_AT | 1};
  memcpy(img, vec, sizeof vec);
  memcpy(img + CODE_AT, code, 2 * n);
  if (sonde_vm_load_binary(vm, img, CODE_AT + 2 * n, 0) || sonde_vm_reset(vm)) {
    sonde_vm_free(vm);
    return NULL;
  }
  return vm;
}

/* Record every fork's slot again, as start() would record another run
 * there whose first step is the fork's; returns how many. */
static unsigned rerecord_forks(struct sonde_vm *vm)
{
  struct vm_tm_memo *m = vm->tm->memo;
  unsigned n = 0;
  for (unsigned i = 0; i < 2 * VM_TM_MEMO_SETS; i++) {
    struct vm_tm_memo_run *r = &m->run[i];
    struct vm_tm_memo_run *f = r->fork;
    if (r->gen != m->gen || !f || f->ver != r->fork_ver || f->gen != m->gen || f == m->cur)
      continue;
    f->ver++;
    f->link[0] = f->link[1] = NULL;
    f->fork = NULL;
    f->key.k[6] += 1000; /* the port busy much longer: a state none of the loop's */
    for (unsigned k = 0; k < f->n; k++)
      f->step[k].cycles += 3;
    n++;
  }
  return n;
}

static void on_retire(void *ctx, uint32_t pc, uint64_t cycle, uint32_t cycles)
{
  (void)pc, (void)cycle, (void)cycles;
  ++*(uint64_t *)ctx;
}

static void run_machine(const char *name, const char *text, const char *builtin, uint32_t sp,
                        unsigned bit)
{
  struct sonde_machine *m = NULL, *m_ref = NULL;
  if (builtin) {
    REQUIRE(sonde_machine_builtin(builtin, &m) == 0);
    REQUIRE(sonde_machine_builtin(builtin, &m_ref) == 0);
  } else {
    REQUIRE(sonde_machine_parse(text, strlen(text), name, &m, NULL) == 0);
    REQUIRE(sonde_machine_parse(text, strlen(text), name, &m_ref, NULL) == 0);
  }
  m_ref->tm.memo_off = true;
  static uint16_t code[128];
  const unsigned n = program(code, bit);
  /* 0: compiled, 1: the compiler off, 2: one at a time without the memo */
  struct sonde_vm *vm[3];
  for (unsigned k = 0; k < 3; k++)
    REQUIRE((vm[k] = make(k == 2 ? m_ref : m, code, n, k == 0, sp)) != NULL);
  REQUIRE(vm[0]->tm && vm[0]->tm->memo && vm[1]->tm && vm[1]->tm->memo && vm[2]->tm);
  uint64_t retired = 0;
  struct sonde_vm_hooks h = {.ctx = &retired, .retire = on_retire};
  sonde_vm_set_hooks(vm[2], &h);
  unsigned stops = 0, mismatches = 0, forged[2] = {0, 0};
  uint64_t limit = 0;
  for (unsigned i = 0; i < 3000 && mismatches < 3; i++) {
    limit += 1 + below(300);
    struct vm_snap s[3];
    for (unsigned k = 0; k < 3; k++) {
      struct sonde_vm_stop st;
      sonde_vm_run(vm[k], limit, &st);
      vm_snap_of(vm[k], &s[k]);
    }
    stops++;
    for (unsigned k = 0; k < 2; k++)
      if (s[k].cycles != s[2].cycles || s[k].instructions != s[2].instructions ||
          memcmp(s[k].r, s[2].r, sizeof s[k].r)) {
        mismatches++;
        CHECK_FAIL_("%s bit %u, %s, stop %u (limit %llu): %llu cycles %llu insns, "
                    "ground truth %llu cycles %llu insns (pc %08x vs %08x)",
                    name, bit, k ? "compiler off" : "compiled", i, (unsigned long long)limit,
                    (unsigned long long)s[k].cycles, (unsigned long long)s[k].instructions,
                    (unsigned long long)s[2].cycles, (unsigned long long)s[2].instructions,
                    s[k].r[15], s[2].r[15]);
      }
    if (i % 3 == 2) /* (between, the forks are taken and recorded again) */
      for (unsigned k = 0; k < 2; k++)
        forged[k] += rerecord_forks(vm[k]);
  }
  struct sonde_vm_stats st0;
  sonde_vm_get_stats(vm[0], &st0);
  printf("%s bit %u: %u stops, forks' slots recorded again %u (compiled) %u (compiler off), "
         "%u mismatches\n",
         name, bit, stops, forged[0], forged[1], mismatches);
  if (HAVE_JIT)
    CHECK(st0.compiled_blocks > 0);
  CHECK_EQ_U(mismatches, 0);
  if (!mismatches) /* the case under test really happened */
    CHECK(forged[0] > 100 && forged[1] > 100);
  for (unsigned k = 0; k < 3; k++)
    sonde_vm_free(vm[k]);
  sonde_machine_free(m);
  sonde_machine_free(m_ref);
}

static void test_memsys_m3(void)
{
  run_machine("m3 memsys", memsys_m3, NULL, 0x20080000u, 0);
  run_machine("m3 memsys", memsys_m3, NULL, 0x20080000u, 1);
}

static void test_cc2650(void)
{
  run_machine("cc2650", NULL, "cc2650", 0x20004000u, 0);
  run_machine("cc2650", NULL, "cc2650", 0x20004000u, 1);
}

int main(void)
{
  RUN(test_memsys_m3);
  RUN(test_cc2650);
  return check_summary();
}
