/* Snapshot backend on the host: recording starts on trigger, each core's
 * buffer begins with core_id, a full buffer stops recording and calls the
 * callback once; reset and re-trigger. */
#include "tband.h"
#include "test_target_common.h"

volatile int test_snapshot_full_calls;
static struct evlist L;

static void test_snapshot(void)
{
  tband_host_set_time(1000);
  tband_init();
  tband_evtmarker(1, "before"); /* not recording yet: ignored, not dropped */
  CHECK_EQ_U(tband_dropped_evt_cnt(), 0);
  CHECK(tband_trigger_snapshot());
  CHECK(!tband_trigger_snapshot()); /* already running */
  for (int i = 0; i < 10; i++)
    tband_valmarker(2, i * 1000);
  size_t len;
  const uint8_t *b = tband_get_core_snapshot_buf(0, &len);
  decode_into(&L, b, len, -1);
  CHECK_EQ_I(L.errors, 0);
  REQUIRE(L.n == 11);
  CHECK_EQ_U(L.e[0].id, 0x00); /* core_id */
  CHECK_EQ_U(L.e[0].val[0], 0);
  for (int i = 0; i < 10; i++)
    CHECK_EQ_I((int64_t)L.e[1 + i].val[1], i * 1000);
  /* fill it */
  for (int i = 0; i < 100; i++)
    tband_valmarker(2, i);
  CHECK(tband_snapshot_full());
  CHECK_EQ_I(test_snapshot_full_calls, 1);
  b = tband_get_core_snapshot_buf(0, &len);
  CHECK(len <= 256);
  CHECK(len > 256 - 16);
  decode_into(&L, b, len, -1);
  CHECK_EQ_I(L.errors, 0);
  CHECK_EQ_I(count_id(&L, 0x0B), L.n - 1);
  int stored = L.n - 1;
  CHECK(tband_dropped_evt_cnt() >= 1);
  tband_valmarker(2, 5); /* after the end: ignored */
  b = tband_get_core_snapshot_buf(0, &len);
  decode_into(&L, b, len, -1);
  CHECK_EQ_I(L.n - 1, stored);
  CHECK_EQ_I(test_snapshot_full_calls, 1);
  tband_reset_snapshot();
  CHECK(!tband_snapshot_full());
  CHECK(tband_trigger_snapshot());
  tband_isr_enter(3);
  b = tband_get_core_snapshot_buf(0, &len);
  decode_into(&L, b, len, -1);
  CHECK_EQ_I(L.n, 3);
  /* the drop at the end of the last snapshot, reported when the next one
   * starts (right after core_id: the fast paths need not check for it) */
  CHECK_EQ_U(L.e[1].id, 0x01);
  CHECK_EQ_U(L.e[1].val[0], tband_dropped_evt_cnt());
  CHECK_EQ_U(L.e[2].id, 0x04);
  tband_stop_snapshot();
  tband_isr_exit(3);
  b = tband_get_core_snapshot_buf(0, &len);
  decode_into(&L, b, len, -1);
  CHECK_EQ_I(L.n, 3);
  CHECK(tband_get_core_snapshot_buf(1, &len) == NULL && len == 0);
  CHECK_EQ_I(tband_host_critical_depth(), 0);
}

int main(void)
{
  RUN(test_snapshot);
  return check_summary();
}
