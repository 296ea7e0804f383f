/* src/profile: exact counts per (PC, context), exception durations with the
 * delayed-timestamp rule, nesting, unmatched events, grouping by function
 * against the FrankenTrace CC2650 ELF. */
#include "check.h"

#include "sonde/profile.h"

static struct sonde_itm_packet pk(unsigned type, uint64_t value, unsigned flags, uint64_t ts)
{
  struct sonde_itm_packet p;
  memset(&p, 0, sizeof p);
  p.type = (uint8_t)type;
  p.value = value;
  p.flags = (uint8_t)flags;
  p.ts = ts;
  return p;
}

static void test_counts_and_exceptions(void)
{
  struct sonde_profile *p = sonde_profile_new();
  REQUIRE(p != NULL);
  struct sonde_itm_packet v[32];
  size_t n = 0;
  v[n++] = pk(SONDE_ITM_PC, 0x2680, 0, 0);
  v[n++] = pk(SONDE_ITM_PC, 0x2682, 0, 0);  /* same function start_trace */
  v[n++] = pk(SONDE_ITM_PC_SLEEP, 0, 0, 0);
  v[n++] = pk(SONDE_ITM_EXC, 15, SONDE_ITM_EXC_ENTER, 0);
  v[n++] = pk(SONDE_ITM_PC, 0x2680, 0, 0);  /* same PC, SysTick context */
  v[n++] = pk(SONDE_ITM_LTS, 10, 0, 1000);  /* stamps the enter: 1000 */
  v[n++] = pk(SONDE_ITM_EXC, 16, SONDE_ITM_EXC_ENTER, 1000); /* IRQ0 nested */
  v[n++] = pk(SONDE_ITM_LTS, 5, 0, 1005);
  v[n++] = pk(SONDE_ITM_EXC, 16, SONDE_ITM_EXC_EXIT, 1005);
  v[n++] = pk(SONDE_ITM_EXC, 15, SONDE_ITM_EXC_RETURN, 1005);
  v[n++] = pk(SONDE_ITM_LTS, 20, 0, 1025);  /* IRQ0: 1005 -> 1025 = 20 */
  v[n++] = pk(SONDE_ITM_EXC, 15, SONDE_ITM_EXC_EXIT, 1025);
  v[n++] = pk(SONDE_ITM_EXC, 0, SONDE_ITM_EXC_RETURN, 1025);
  v[n++] = pk(SONDE_ITM_LTS, 75, 0, 1100);  /* SysTick: 1000 -> 1100 */
  v[n++] = pk(SONDE_ITM_EXC, 11, SONDE_ITM_EXC_EXIT, 1100); /* never entered */
  v[n++] = pk(SONDE_ITM_OVERFLOW, 0, 0, 1100);
  v[n++] = pk(SONDE_ITM_PC, 0x10000b20, 0, 1100); /* ROM: unknown */
  CHECK_EQ_I(sonde_profile_add(p, v, n), 0);
  struct sonde_profile_totals t;
  sonde_profile_get_totals(p, &t);
  CHECK_EQ_U(t.samples, 5);
  CHECK_EQ_U(t.sleep, 1);
  CHECK_EQ_U(t.distinct_pcs, 4);
  CHECK_EQ_U(t.overflows, 1);
  CHECK_EQ_U(t.unmatched, 1);
  CHECK(t.have_ts);
  CHECK_EQ_U(t.first_ts, 1000);
  CHECK_EQ_U(t.last_ts, 1100);

  const struct sonde_profile_exc *e;
  size_t ne = sonde_profile_exceptions(p, &e);
  REQUIRE(ne == 2);
  CHECK_EQ_U(e[0].number, 15);
  CHECK_EQ_U(e[0].count, 1);
  CHECK_EQ_U(e[0].timed, 1);
  CHECK_EQ_U(e[0].total_cycles, 100);
  CHECK_EQ_U(e[0].max_cycles, 100);
  CHECK_EQ_U(e[0].max_depth, 1);
  CHECK_EQ_U(e[1].number, 16);
  CHECK_EQ_U(e[1].total_cycles, 20);
  CHECK_EQ_U(e[1].max_depth, 2);
  CHECK_EQ_U(e[1].nested, 1);

  struct sonde_sym *sym = NULL;
  REQUIRE(sonde_sym_open(check_testdata("frankentrace-cc2650/blink_if_see.elf"), &sym, NULL) == 0);
  const struct sonde_profile_row *r;
  long nr = sonde_profile_report(p, sym, SONDE_PROFILE_BY_FUNCTION, false, &r);
  REQUIRE(nr == 2);
  CHECK_EQ_STR(r[0].function, "start_trace");
  CHECK_EQ_U(r[0].samples, 3);
  CHECK_EQ_U(r[0].addr, 0x2638);
  CHECK(r[1].function == NULL);
  CHECK_EQ_U(r[1].addr, 0x10000b20);
  nr = sonde_profile_report(p, sym, SONDE_PROFILE_BY_FUNCTION, true, &r);
  REQUIRE(nr == 3);
  CHECK_EQ_U(r[0].samples, 2);
  CHECK_EQ_U(r[0].context, 0);
  CHECK_EQ_U(r[1].context, 15);
  CHECK_EQ_U(r[2].context, 0);
  /* without symbols: by address */
  nr = sonde_profile_report(p, NULL, SONDE_PROFILE_BY_FUNCTION, false, &r);
  CHECK_EQ_I(nr, 3);
  sonde_sym_free(sym);
  sonde_profile_free(p);
  sonde_profile_free(NULL);
}

static void test_many_pcs_grow(void)
{
  struct sonde_profile *p = sonde_profile_new();
  struct sonde_itm_packet v;
  for (uint32_t i = 0; i < 100000; i++) {
    v = pk(SONDE_ITM_PC, 0x1000 + 2 * (i % 5000), 0, 0);
    REQUIRE(sonde_profile_add(p, &v, 1) == 0);
  }
  struct sonde_profile_totals t;
  sonde_profile_get_totals(p, &t);
  CHECK_EQ_U(t.samples, 100000);
  CHECK_EQ_U(t.distinct_pcs, 5000);
  const struct sonde_profile_row *r;
  CHECK_EQ_I(sonde_profile_report(p, NULL, SONDE_PROFILE_BY_FUNCTION, false, &r), 5000);
  for (int i = 0; i < 5000; i++)
    CHECK_EQ_U(r[i].samples, 20);
  sonde_profile_free(p);
}

int main(void)
{
  RUN(test_counts_and_exceptions);
  RUN(test_many_pcs_grow);
  return check_summary();
}
