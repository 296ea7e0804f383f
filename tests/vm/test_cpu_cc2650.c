/* The VM's cycle model against silicon: a real CC2650 (Cortex-M3, 48 MHz)
 * cycle-level PC trace and LSU trace (tests/data/frankentrace-cc2650, from
 * FrankenTrace), replayed through the timing model the executors run for the
 * `cc2650` machine (src/vm/tm.c, driven by src/frankentrace/cycles.c, the
 * code behind `sonde cycles compare`). Every instruction's duration (entering
 * Execute to the next one entering Execute) is compared with the model's.
 *
 * The floors are the agreement the model reaches today (docs/vm.md, "Against
 * silicon"): any change to the timing code that makes it worse fails here.
 * Raise them when the model improves. */
#include <math.h>
#include <stdio.h>

#include "check.h"
#include "sonde/cycles.h"
#include "sonde/frankentrace.h"
#include "sonde/sym.h"
#include "sonde/vm.h"

#define DIR "frankentrace-cc2650/"

/* exact agreement floors, in tenths of a percent */
#define FLOOR_ALL 957         /* every clean instruction (95.8% today) */
#define FLOOR_OUTSIDE 850     /* outside the two dominant loops (85.1%) */
#define FLOOR_CACHE 982       /* VIMS cache mode (98.3%) */
#define FLOOR_GPRAM 942       /* VIMS GPRAM mode, line buffer only (94.4%) */

static unsigned permille(const struct sonde_cycles_group *g)
{
  return g->compared ? (unsigned)(1000 * g->exact / g->compared) : 0;
}

static void print_group(const struct sonde_cycles_group *g)
{
  printf("  %-28s %7llu  %5.1f%%  observed %8llu  model %8llu\n", g->name,
         (unsigned long long)g->compared, g->compared ? 100.0 * g->exact / g->compared : 0.0,
         (unsigned long long)g->obs, (unsigned long long)g->pred);
}

static void test_cc2650_trace(void)
{
  char elf[4096], pct[4096], lsu[4096];
  snprintf(elf, sizeof elf, "%s", check_testdata(DIR "blink_if_see.elf"));
  snprintf(pct, sizeof pct, "%s", check_testdata(DIR "blink_if_see.pc_trace.csv.gz"));
  snprintf(lsu, sizeof lsu, "%s", check_testdata(DIR "blink_if_see.lsu_trace.csv.gz"));

  struct sonde_machine *m = NULL;
  struct sonde_sym *sym = NULL;
  struct sonde_ft_trace *t = NULL;
  struct sonde_ft_xfer *x = NULL;
  size_t nx = 0;
  struct sonde_diag d = {{0}};
  REQUIRE(sonde_machine_builtin("cc2650", &m) == 0);
  REQUIRE(sonde_sym_open(elf, &sym, &d) == 0);
  REQUIRE(sonde_ft_read(pct, SONDE_FT_FORMAT_AUTO, 0, &t, &d) == 0);
  REQUIRE(sonde_ft_lsu_read(lsu, &x, &nx, &d) == 0);

  struct sonde_cycles_opts o = {m, sym, t, x, nx, 0, NULL};
  struct sonde_cycles_result r;
  REQUIRE(sonde_cycles_compare(&o, &r, &d) == 0);

  printf("cc2650 trace: %llu instructions, %llu compared; left out %llu near %llu impossible "
         "transitions, %llu exception, %llu cut, %llu not in the ELF\n",
         (unsigned long long)r.instructions, (unsigned long long)r.all.compared,
         (unsigned long long)r.left_impossible, (unsigned long long)r.impossible,
         (unsigned long long)r.left_exception, (unsigned long long)r.left_incomplete,
         (unsigned long long)r.left_no_code);
  print_group(&r.all);
  printf("  (loops: %s; %s)\n", r.loops[0], r.loops[1]);
  print_group(&r.outside);
  for (int i = 0; i < SONDE_CYCLES_CLASSES; i++)
    if (r.cls[i].compared)
      print_group(&r.cls[i]);
  for (int i = 0; i < SONDE_CYCLES_MODES; i++)
    if (r.mode[i].compared)
      print_group(&r.mode[i]);

  /* the trace is a real capture: it has enough to compare, and FrankenTrace
   * stitching left impossible transitions the replay had to skip */
  CHECK(r.all.compared > 25000);
  CHECK(r.impossible > 0 && r.left_impossible > 0);
  CHECK(r.addr_known * 10 > r.addr_total * 9); /* data addresses: > 90% known */

  CHECK(permille(&r.all) >= FLOOR_ALL);
  CHECK(permille(&r.outside) >= FLOOR_OUTSIDE);
  CHECK(permille(&r.mode[1]) >= FLOOR_CACHE);
  CHECK(permille(&r.mode[0]) >= FLOOR_GPRAM);
  /* the two loops that dominate are the ones the issue names */
  CHECK(strstr(r.loops[0], "memcpy") || strstr(r.loops[1], "memcpy"));
  CHECK(strstr(r.loops[0], "memset") || strstr(r.loops[1], "memset"));
  /* every class of instruction, not only the loops' */
  CHECK(permille(&r.cls[0]) >= 975); /* data processing (97.6%) */
  CHECK(permille(&r.cls[1]) >= 869); /* loads (87.0%) */
  CHECK(permille(&r.cls[2]) >= 956); /* stores (95.7%) */
  CHECK(permille(&r.cls[3]) >= 900); /* ldm/stm/push/pop (90.1%) */
  CHECK(permille(&r.cls[4]) >= 975); /* branches taken (97.6%) */
  CHECK(permille(&r.cls[5]) >= 996); /* branches not taken (99.7%) */
  CHECK(permille(&r.cls[6]) >= 636); /* bl/bx/blx (63.7%) */
  /* the cycles of the two loops' functions, summed, within 1% */
  unsigned within = 0;
  for (size_t i = 0; i < r.nfunc; i++)
    if (!strcmp(r.func[i].name, "memcpy") || !strcmp(r.func[i].name, "memset")) {
      double err = fabs((double)r.func[i].pred - (double)r.func[i].obs) / (double)r.func[i].obs;
      printf("  %s: observed %llu, model %llu (%.2f%%)\n", r.func[i].name,
             (unsigned long long)r.func[i].obs, (unsigned long long)r.func[i].pred, 100 * err);
      within += err <= 0.01;
    }
  CHECK_EQ_U(within, 2);

  sonde_cycles_result_free(&r);
  free(x);
  sonde_ft_trace_free(t);
  sonde_sym_free(sym);
  sonde_machine_free(m);
}

/* A clear error for a machine without a memory system. */
static void test_no_memsys(void)
{
  char elf[4096], pct[4096];
  snprintf(elf, sizeof elf, "%s", check_testdata(DIR "blink_if_see.elf"));
  snprintf(pct, sizeof pct, "%s", check_testdata(DIR "blink_if_see.pc_trace.csv.gz"));
  struct sonde_machine *m = NULL;
  struct sonde_sym *sym = NULL;
  struct sonde_ft_trace *t = NULL;
  struct sonde_diag d = {{0}};
  REQUIRE(sonde_machine_builtin("cm3", &m) == 0);
  REQUIRE(sonde_sym_open(elf, &sym, &d) == 0);
  REQUIRE(sonde_ft_read(pct, SONDE_FT_FORMAT_AUTO, 0, &t, &d) == 0);
  struct sonde_cycles_opts o = {m, sym, t, NULL, 0, 0, NULL};
  struct sonde_cycles_result r;
  CHECK_EQ_I(sonde_cycles_compare(&o, &r, &d), SONDE_E_ARG);
  CHECK(strstr(d.msg, "declares no memory system") != NULL);
  sonde_ft_trace_free(t);
  sonde_sym_free(sym);
  sonde_machine_free(m);
}

int main(void)
{
  RUN(test_cc2650_trace);
  RUN(test_no_memsys);
  return check_summary();
}
