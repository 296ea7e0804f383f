/* The cycle model against silicon: a real CC2650 (Cortex-M3, 48 MHz) cycle
 * level PC trace (tests/data/frankentrace-cc2650, from FrankenTrace).
 * A run of consecutive cycles with the same PC is one instruction's observed
 * duration; the test decodes that instruction from the ELF with the VM's
 * decoder and compares the duration docs/vm.md's table predicts (branch taken
 * or not from the next PC in the trace, load/store pipelining from the
 * previous instruction, zero wait states as the cc2650 machine has).
 *
 * It reports the agreement per instruction class. It is observational: the
 * trace attributes refill and bus-stall cycles by its own rules and the chip
 * adds flash-cache misses and peripheral wait states the VM does not model,
 * so it only requires the agreement the model reaches today not to regress
 * (floors below). */
#include <stdio.h>

#include "check.h"
#include "vm/decode.h"
#include "vm/vm_internal.h"

enum cls { C_ALU, C_LDST, C_LDM, C_BR_TAKEN, C_BR_NOT, C_CALL, C_MUL, C_OTHER, C_N };
static const char *cls_name[C_N] = {"alu",       "load/store", "ldm/stm/push/pop", "branch taken",
                                    "branch not", "bl/bx/blx", "mul/mla",          "other"};

struct run {
  uint64_t ts;
  uint32_t pc, n;
};

static bool is_ldst(const struct vm_insn *d)
{
  return d->op == VM_OP_LD || d->op == VM_OP_ST;
}

/* Expected cycles (docs/vm.md "Cycle model", Cortex-M3, zero wait states). */
static int expect(const struct vm_insn *d, const struct vm_insn *prev, bool taken, enum cls *c)
{
  unsigned n;
  switch (d->op) {
  case VM_OP_B: case VM_OP_CBZ: case VM_OP_CBNZ:
    *c = taken ? C_BR_TAKEN : C_BR_NOT;
    return taken ? 3 : 1;
  case VM_OP_BL: case VM_OP_BX: case VM_OP_BLX:
    *c = C_CALL;
    return 3;
  case VM_OP_LD: case VM_OP_ST:
    *c = C_LDST;
    if (d->rd == 15)
      return 4;
    if (prev && is_ldst(prev) && !(prev->op == VM_OP_ST && prev->rm != VM_NOREG) &&
        !(prev->op == VM_OP_LD && (prev->rd == d->rn || prev->rd == d->rm)))
      return 1;
    return 2;
  case VM_OP_LDM: case VM_OP_STM:
    *c = C_LDM;
    n = (unsigned)__builtin_popcount(d->imm);
    return (int)(1 + n + ((d->imm & 0x8000) ? 2 : 0));
  case VM_OP_MUL: *c = C_MUL; return 1;
  case VM_OP_MLA: case VM_OP_MLS: *c = C_MUL; return 2;
  default:
    if (d->op >= VM_OP_DPI0 || d->op == VM_OP_DP_RSR || d->op == VM_OP_ADR ||
        d->op == VM_OP_MOVT || (d->op >= VM_OP_SSAT && d->op <= VM_OP_EXT)) {
      *c = C_ALU;
      return d->rd == 15 ? 3 : 1;
    }
    *c = C_OTHER;
    return -1; /* operand-dependent or not in the table: not compared */
  }
}

static void test_cc2650_trace(void)
{
  const char *elf = check_testdata("frankentrace-cc2650/blink_if_see.elf");
  char elfpath[4096];
  snprintf(elfpath, sizeof elfpath, "%s", elf);
  const char *csv = check_testdata("frankentrace-cc2650/blink_if_see.pc_trace.csv.gz");
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "gzip -dc '%s'", csv);

  /* the ELF's code, through the VM's loader and the cc2650 machine */
  struct sonde_machine *m = NULL;
  struct sonde_vm *vm = NULL;
  REQUIRE(sonde_machine_builtin("cc2650", &m) == 0);
  REQUIRE(sonde_vm_new(m, &vm) == 0);
  FILE *f = fopen(elfpath, "rb");
  REQUIRE(f);
  static uint8_t buf[1 << 20];
  size_t len = fread(buf, 1, sizeof buf, f);
  fclose(f);
  REQUIRE(sonde_vm_load_elf(vm, buf, len, elfpath) == 0);

  FILE *p = popen(cmd, "r");
  REQUIRE(p);
  static struct run runs[200000];
  size_t nruns = 0;
  char line[512];
  uint64_t last_ts = 0;
  bool have = false;
  if (!fgets(line, sizeof line, p)) { /* header */
    pclose(p);
    REQUIRE(0);
  }
  while (fgets(line, sizeof line, p) && nruns < sizeof runs / sizeof runs[0]) {
    unsigned long long ts;
    unsigned pc;
    char valid[8];
    if (sscanf(line, "%llu,0x%x,%7[a-z]", &ts, &pc, valid) != 3)
      continue;
    if (strcmp(valid, "true") != 0) {
      have = false; /* a cycle that could not be reconstructed ends the run */
      continue;
    }
    if (have && runs[nruns - 1].pc == pc && ts == last_ts + 1) {
      runs[nruns - 1].n++;
    } else {
      if (have && ts != last_ts + 1)
        runs[nruns - 1].n = 0; /* a gap: the previous run's end is unknown */
      runs[nruns].ts = ts;
      runs[nruns].pc = pc;
      runs[nruns].n = 1;
      nruns++;
    }
    last_ts = ts;
    have = true;
  }
  pclose(p);
  CHECK(nruns > 10000);

  struct vm_decode_features feat = {true, false, false, false};
  unsigned long total[C_N] = {0}, agree[C_N] = {0}, hist[C_N][16] = {{0}}, model[C_N][16] = {{0}};
  struct vm_insn prev, cur;
  bool have_prev = false;
  for (size_t i = 1; i + 1 < nruns; i++) {
    uint16_t hw[2];
    if (sonde_vm_read_mem(vm, runs[i].pc, hw, 4) != 0) {
      have_prev = false;
      continue;
    }
    vm_decode(&feat, hw[0], hw[1], &cur);
    /* only complete runs directly followed by the next instruction */
    bool complete = runs[i].n && runs[i - 1].n && runs[i + 1].ts == runs[i].ts + runs[i].n;
    if (complete) {
      bool taken = runs[i + 1].pc != runs[i].pc + cur.len;
      enum cls c;
      int e = expect(&cur, have_prev ? &prev : NULL, taken, &c);
      if (e > 0) {
        total[c]++;
        agree[c] += (unsigned)e == runs[i].n;
        hist[c][runs[i].n < 15 ? runs[i].n : 15]++;
        model[c][e < 15 ? e : 15]++;
      }
    }
    prev = cur;
    have_prev = complete;
  }
  unsigned long t = 0, a = 0;
  for (int c = 0; c < C_N; c++) {
    if (!total[c])
      continue;
    printf("cc2650 %-18s %6lu instructions, %5.1f%% with the modelled duration\n", cls_name[c],
           total[c], 100.0 * (double)agree[c] / (double)total[c]);
    printf("    observed:");
    for (int k = 1; k < 16; k++)
      if (hist[c][k] * 50 >= total[c])
        printf(" %d%s cycles %.0f%%", k, k == 15 ? "+" : "", 100.0 * (double)hist[c][k] / (double)total[c]);
    printf("\n    model:   ");
    for (int k = 1; k < 16; k++)
      if (model[c][k] * 50 >= total[c])
        printf(" %d%s cycles %.0f%%", k, k == 15 ? "+" : "", 100.0 * (double)model[c][k] / (double)total[c]);
    printf("\n");
    t += total[c];
    a += agree[c];
  }
  printf("cc2650 all compared      %6lu instructions, %5.1f%% agree\n", t, 100.0 * a / (t ? t : 1));
  CHECK(t > 10000);
  /* floors: what the model reaches on this trace (not a statement of accuracy) */
  CHECK(total[C_ALU] && agree[C_ALU] * 100 >= total[C_ALU] * 60);
  sonde_vm_free(vm);
  sonde_machine_free(m);
}

int main(void)
{
  RUN(test_cc2650_trace);
  return check_summary();
}
