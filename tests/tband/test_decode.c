/* Decoder tests: the real trace from tests/data, and corrupt input. */
#include "check.h"
#include "sonde/tband.h"

struct tally {
  uint64_t frames, errors, switches, ts_back, last_ts, with_ts, meta;
  uint64_t per_id[256];
  uint64_t first_err_off;
};

static void count(void *ctx, const struct sonde_tband_evt *e)
{
  struct tally *t = ctx;
  t->frames++;
  if (e->error) {
    if (!t->errors)
      t->first_err_off = e->offset;
    t->errors++;
    return;
  }
  t->per_id[e->id]++;
  if (e->id == 0x54)
    t->switches++;
  if (e->has_ts) {
    if (e->ts < t->last_ts)
      t->ts_back++;
    t->last_ts = e->ts;
    t->with_ts++;
  } else {
    t->meta++;
  }
}

static void test_real_trace(void)
{
  const char *path = check_testdata("tonbandgeraet/posix_freertos.log.hex");
  struct tally t = {0};
  struct sonde_tband_stats st;
  struct sonde_diag diag = {{0}};
  int rc = sonde_tband_decode_file(path, SONDE_TBAND_AUTO, -1, count, &t, &st, &diag);
  CHECK_EQ_I(rc, 0);
  CHECK_EQ_U(t.frames, 3231);
  CHECK_EQ_U(t.errors, 0);
  CHECK_EQ_U(st.errors, 0);
  CHECK_EQ_U(st.bad_chars, 0);
  CHECK_EQ_U(t.switches, 855);
  CHECK_EQ_U(t.ts_back, 0);
  printf("frames %llu meta %llu ts %llu\n", (unsigned long long)t.frames,
         (unsigned long long)t.meta, (unsigned long long)t.with_ts);
  for (int i = 0; i < 256; i++)
    if (t.per_id[i])
      printf("  0x%02x %-32s %llu\n", i, sonde_tband_evt_desc((uint8_t)i)->name,
             (unsigned long long)t.per_id[i]);
}

int main(void)
{
  RUN(test_real_trace);
  return check_summary();
}
