/* Multi-core: four host threads play four cores, all tracing at once into
 * per-core snapshot buffers and the shared metadata buffer (spinlocked).
 * Every buffer must decode without error and hold exactly what its core
 * emitted, in timestamp order; the metadata buffer must hold whole frames. */
#include "tband.h"
#include "test_target_common.h"

#include <pthread.h>

#define PER_CORE 1500
static struct evlist L;

static void *core_main(void *arg)
{
  uint32_t core = (uint32_t)(uintptr_t)arg;
  tband_host_set_core(core);
  for (int i = 0; i < PER_CORE; i++) {
    tband_valmarker(core, i);
    if (i % 50 == 0)
      tband_evtmarker_name(core * 1000 + (uint32_t)i, "shared-meta-name");
    tband_isr_enter(core);
    tband_isr_exit(core);
  }
  return NULL;
}

static void test_four_cores(void)
{
  tband_init();
  CHECK(tband_trigger_snapshot());
  pthread_t th[4];
  for (uintptr_t c = 0; c < 4; c++)
    pthread_create(&th[c], NULL, core_main, (void *)c);
  for (int c = 0; c < 4; c++)
    pthread_join(th[c], NULL);
  for (uint32_t c = 0; c < 4; c++) {
    size_t len;
    const uint8_t *b = tband_get_core_snapshot_buf(c, &len);
    decode_into(&L, b, len, -1);
    CHECK_EQ_I(L.errors, 0);
    CHECK_EQ_U(L.e[0].id, 0x00);
    CHECK_EQ_U(L.e[0].val[0], c);
    CHECK_EQ_I(count_id(&L, 0x0B), PER_CORE);
    CHECK_EQ_I(count_id(&L, 0x04), PER_CORE);
    CHECK_EQ_I(count_id(&L, 0x05), PER_CORE);
    CHECK_EQ_I(count_id(&L, 0x06), PER_CORE / 50);
    int64_t want = 0;
    uint64_t last = 0;
    for (int i = 1; i < L.n; i++) {
      CHECK_EQ_U(L.e[i].core, c);
      if (L.e[i].has_ts) {
        CHECK(L.e[i].ts > last); /* shared clock, strictly increasing per core */
        last = L.e[i].ts;
      }
      if (L.e[i].id == 0x0B) {
        CHECK_EQ_U(L.e[i].val[0], c);
        CHECK_EQ_I((int64_t)L.e[i].val[1], want);
        want++;
      }
    }
  }
  size_t len;
  const uint8_t *m = tband_get_metadata_buf(&len);
  decode_into(&L, m, len, 0);
  CHECK_EQ_I(L.errors, 0);
  int names = count_id(&L, 0x06);
  CHECK_EQ_I(names + (int)tband_metadata_buf_lost(), 4 * PER_CORE / 50);
  CHECK(tband_metadata_buf_lost() == 0 || count_id(&L, 0x0C) == 1);
  CHECK_EQ_U(tband_dropped_evt_cnt(), 0);
}

int main(void)
{
  RUN(test_four_cores);
  return check_summary();
}
