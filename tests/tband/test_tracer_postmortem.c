/* Post-mortem backend on the host: the ring keeps the newest events, reads
 * back oldest-first from a frame boundary, survives a (simulated) reset with
 * a pm_boot marker, and is re-formatted when its header is garbage. */
#include "tband.h"
#include "test_target_common.h"

static struct evlist L;
static uint8_t out[1024];

static void test_ring(void)
{
  extern uint8_t tband_pm_rings[]; /* the .noinit ring, as a debugger would see it */
  memset(tband_pm_rings, 0xA5, 32);  /* power-up garbage */
  tband_host_set_time(10);
  tband_init();
  CHECK_EQ_U(tband_postmortem_boot_cnt(), 0);
  size_t n = tband_postmortem_read(0, out, sizeof out);
  decode_into(&L, out, n, -1);
  CHECK_EQ_I(L.errors, 0);
  REQUIRE(L.n == 3); /* core_id, pm_boot(0), ts_resolution */
  CHECK_EQ_U(L.e[0].id, 0x00);
  CHECK_EQ_U(L.e[1].id, 0x0D);
  CHECK_EQ_U(L.e[1].val[0], 0);
  /* wrap the 200-byte ring many times */
  for (int i = 0; i < 500; i++)
    tband_valmarker(1, i);
  n = tband_postmortem_read(0, out, sizeof out);
  CHECK(n <= 200);
  decode_into(&L, out, n, -1);
  CHECK_EQ_I(L.errors, 0);
  REQUIRE(L.n > 10);
  /* the newest events, consecutive, ending with the last one */
  for (int i = 0; i < L.n; i++) {
    CHECK_EQ_U(L.e[i].id, 0x0B);
    CHECK_EQ_I((int64_t)L.e[i].val[1], 500 - L.n + i);
  }
  /* a small destination keeps the newest whole frames */
  n = tband_postmortem_read(0, out, 20);
  CHECK(n <= 20 && n > 0);
  decode_into(&L, out, n, -1);
  CHECK_EQ_I(L.errors, 0);
  REQUIRE(L.n >= 1);
  CHECK_EQ_I((int64_t)L.e[L.n - 1].val[1], 499);
  /* "reset": the clock restarts, .noinit survives, init keeps the ring */
  tband_host_set_time(5);
  tband_init();
  CHECK_EQ_U(tband_postmortem_boot_cnt(), 1);
  tband_valmarker(1, 1000);
  n = tband_postmortem_read(0, out, sizeof out);
  decode_into(&L, out, n, -1);
  CHECK_EQ_I(L.errors, 0);
  REQUIRE(L.n >= 4);
  CHECK_EQ_U(L.e[L.n - 3].id, 0x0D); /* pm_boot(1) */
  CHECK_EQ_U(L.e[L.n - 3].val[0], 1);
  CHECK_EQ_I((int64_t)L.e[L.n - 1].val[1], 1000);
  CHECK_EQ_I((int64_t)L.e[L.n - 4].val[1], 499); /* events from before the reset */
  tband_postmortem_clear();
  CHECK_EQ_U(tband_postmortem_read(0, out, sizeof out), 0);
  CHECK_EQ_I(tband_host_critical_depth(), 0);
}

int main(void)
{
  RUN(test_ring);
  return check_summary();
}
