/* The on-target tracer (target/tband) compiled for the host with the
 * streaming backend: exact event sequence, string limit, metadata buffer and
 * its overflow report, dropped-event counter and its periodic re-send. */
#include "tband.h"
#include "test_target_common.h"

static struct evlist L, M;

static void test_markers_and_isrs(void)
{
  tband_host_stream_reset();
  tband_host_set_time(100);
  tband_init(); /* ts_resolution_ns, metadata */
  tband_evtmarker_name(7, "sensor");
  tband_evtmarker(7, "rdy");
  tband_evtmarker_begin(7, "acq");
  tband_evtmarker_end(7);
  tband_valmarker_name(3, "buf");
  tband_valmarker(3, INT64_MIN);
  tband_valmarker(3, -5);
  tband_isr_name(15, "SysTick");
  tband_isr_enter(15);
  tband_isr_exit(15);
  tband_evtmarker(7, "a string much longer than twenty characters");
  CHECK_EQ_I(tband_host_critical_depth(), 0);
  size_t len;
  const uint8_t *s = tband_host_stream_data(0, &len);
  decode_into(&L, s, len, 0);
  CHECK_EQ_I(L.errors, 0);
  /* the periodic dropped_evt_cnt (every 10 events) comes after the 10th */
  REQUIRE(L.n == 13);
  CHECK_EQ_U(L.e[10].id, 0x01);
  CHECK_EQ_U(L.e[10].val[0], 0);
  memmove(&L.e[10], &L.e[11], 2 * sizeof L.e[0]);
  static const uint8_t ids[] = {0x02, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0B, 0x03, 0x04, 0x05, 0x07};
  for (int i = 0; i < 12; i++)
    CHECK_EQ_U(L.e[i].id, ids[i]);
  CHECK_EQ_U(L.e[0].val[0], 1); /* ns per tick of the host port */
  CHECK_EQ_STR(L.e[1].str, "sensor");
  CHECK_EQ_U(L.e[2].ts, 100); /* timestamps taken in order, one per event */
  CHECK_EQ_STR(L.e[2].str, "rdy");
  CHECK_EQ_U(L.e[4].ts, 102);
  CHECK_EQ_I((int64_t)L.e[6].val[1], INT64_MIN);
  CHECK_EQ_I((int64_t)L.e[7].val[1], -5);
  CHECK_EQ_U(L.e[9].val[0], 15);
  CHECK_EQ_STR(L.e[11].str, "a string much longer"); /* cut at tband_configMAX_STR_LEN = 20 */
  CHECK_EQ_U(tband_dropped_evt_cnt(), 0);
}

static void test_metadata_buffer_overflow(void)
{
  /* 64-byte buffer: what is in it so far, then names until it overflows */
  size_t len;
  const uint8_t *m = tband_get_metadata_buf(&len);
  decode_into(&M, m, len, 0);
  CHECK_EQ_I(M.errors, 0);
  CHECK_EQ_I(M.n, 4); /* ts_resolution, evtmarker_name, valmarker_name, isr_name */
  CHECK_EQ_U(tband_metadata_buf_lost(), 0);
  tband_host_stream_reset();
  for (int i = 0; i < 8; i++)
    tband_evtmarker_name(100 + (uint32_t)i, "name-of-marker");
  uint32_t lost = tband_metadata_buf_lost();
  CHECK(lost > 0);
  m = tband_get_metadata_buf(&len);
  decode_into(&M, m, len, 0);
  CHECK_EQ_I(M.errors, 0);
  REQUIRE(M.n >= 5);
  CHECK(len <= 64 + 16);
  /* the buffer ends with the overflow report */
  CHECK_EQ_U(M.e[M.n - 1].id, 0x0C);
  CHECK_EQ_U(M.e[M.n - 1].val[0], lost);
  CHECK_EQ_U((unsigned)(M.n - 1 - 4 + (int)lost), 8u);
  /* and the stream reported it live, once per lost event */
  const uint8_t *s = tband_host_stream_data(0, &len);
  decode_into(&L, s, len, 0);
  CHECK_EQ_I(L.errors, 0);
  CHECK_EQ_I(count_id(&L, 0x0C), (int)lost);
  CHECK_EQ_I(count_id(&L, 0x06), 8); /* the names themselves were still streamed */
}

static void test_drops_and_periodic_count(void)
{
  tband_host_stream_reset();
  tband_host_set_stream_capacity(0); /* everything is dropped */
  for (int i = 0; i < 5; i++)
    tband_valmarker(1, i);
  CHECK_EQ_U(tband_dropped_evt_cnt(), 5);
  tband_host_set_stream_capacity((size_t)-1);
  tband_valmarker(1, 99);
  size_t len;
  const uint8_t *s = tband_host_stream_data(0, &len);
  decode_into(&L, s, len, 0);
  CHECK_EQ_I(L.errors, 0);
  REQUIRE(L.n == 2);
  CHECK_EQ_U(L.e[0].id, 0x0B);
  CHECK_EQ_I((int64_t)L.e[0].val[1], 99);
  CHECK_EQ_U(L.e[1].id, 0x01); /* dropped_evt_cnt right after the first stored event */
  CHECK_EQ_U(L.e[1].val[0], 5);
  /* then every tband_configTRACE_DROP_CNT_EVERY (10) events */
  tband_host_stream_reset();
  for (int i = 0; i < 30; i++)
    tband_isr_enter(1);
  s = tband_host_stream_data(0, &len);
  decode_into(&L, s, len, 0);
  CHECK_EQ_I(L.errors, 0);
  CHECK_EQ_I(count_id(&L, 0x04), 30);
  CHECK_EQ_I(count_id(&L, 0x01), 3);
  for (int i = 0; i < L.n; i++)
    if (L.e[i].id == 0x01)
      CHECK_EQ_U(L.e[i].val[0], 5); /* cumulative */
  CHECK_EQ_U(L.e[10].id, 0x01);
  CHECK_EQ_I(tband_host_critical_depth(), 0);
}

int main(void)
{
  RUN(test_markers_and_isrs);
  RUN(test_metadata_buffer_overflow);
  RUN(test_drops_and_periodic_count);
  return check_summary();
}
