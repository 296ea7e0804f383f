/* tband_backend_postmortem.c: the post-mortem backend (Sonde; Tonbandgerät
 * lists it as planned). docs/tband.md, "Post-mortem".
 *
 * One ring per core that always keeps the newest events, placed in
 * tband_portNOINIT_SECTION so that start-up code does not clear it: after a
 * fault and a reset, tband_init() finds a valid ring, keeps it, counts the
 * boot and traces pm_boot, so the reader sees where the reset happened.
 * Layout of struct tband_pm_ring (a debugger may read it directly):
 *   off 0  magic      0x54424E44 ("TBND")
 *   off 4  size       bytes in buf (tband_configBACKEND_POST_MORTEM_BUF_SIZE)
 *   off 8  head       next write position in buf
 *   off 12 wrapped    1 once head went past the end at least once
 *   off 16 boot_cnt   resets survived
 *   off 20 check      ~magic ^ size (detects garbage after power-up)
 *   off 24 buf[size]  COBS frames; oldest at head when wrapped
 * A frame is written before head moves past it, so a reset in the middle of
 * a write leaves at most one torn frame, which the decoder reports. */
#include "tband_internal.h"

#if tband_configENABLE && tband_configUSE_BACKEND_POST_MORTEM
#if tband_configFREERTOS_TRACE_ENABLE
#include "FreeRTOS.h"
#include "task.h"
#endif

#define TBAND_PM_MAGIC 0x54424E44u
#define TBAND_PM_SIZE ((uint32_t)tband_configBACKEND_POST_MORTEM_BUF_SIZE)

struct tband_pm_ring {
  uint32_t magic;
  uint32_t size;
  volatile uint32_t head;
  uint32_t wrapped;
  uint32_t boot_cnt;
  uint32_t check;
  uint8_t buf[tband_configBACKEND_POST_MORTEM_BUF_SIZE];
};

struct tband_pm_ring tband_pm_rings[tband_portNUMBER_OF_CORES]
    __attribute__((section(tband_portNOINIT_SECTION)));
static uint32_t tband_pm_ready;

static bool tband_pm_valid(const struct tband_pm_ring *r)
{
  return r->magic == TBAND_PM_MAGIC && r->size == TBAND_PM_SIZE && r->head < TBAND_PM_SIZE &&
         r->wrapped <= 1 && r->check == (~TBAND_PM_MAGIC ^ TBAND_PM_SIZE);
}

static void tband_pm_format(struct tband_pm_ring *r)
{
  r->size = TBAND_PM_SIZE;
  r->head = 0;
  r->wrapped = 0;
  r->boot_cnt = 0;
  r->check = ~TBAND_PM_MAGIC ^ TBAND_PM_SIZE;
  r->magic = TBAND_PM_MAGIC;
}

static void tband_pm_write(struct tband_pm_ring *r, const uint8_t *buf, size_t len)
{
  uint32_t h = r->head;
  size_t first = TBAND_PM_SIZE - h;
  if (len < first) {
    tband_copy(r->buf + h, buf, len);
    r->head = h + (uint32_t)len;
  } else {
    tband_copy(r->buf + h, buf, first);
    tband_copy(r->buf, buf + first, len - first);
    r->wrapped = 1;
    r->head = (uint32_t)(len - first);
  }
}

void tband_backend_init(void)
{
  uint64_t ts = tband_portTIMESTAMP();
  for (uint32_t c = 0; c < tband_portNUMBER_OF_CORES; c++) {
    struct tband_pm_ring *r = &tband_pm_rings[c];
    uint8_t b[TBAND_EVT_pm_boot_MAXLEN];
    size_t n;
    if (tband_pm_valid(r)) {
      r->boot_cnt++;
    } else {
      tband_pm_format(r);
      n = tband_encode_core_id(b, ts, c);
      tband_pm_write(r, b, n);
    }
    n = tband_encode_pm_boot(b, ts, r->boot_cnt);
    tband_pm_write(r, b, n);
  }
  TBAND_STORE(&tband_pm_ready, 1u);
}

enum tband_backend_result tband_backend_submit(uint32_t core, const uint8_t *buf, size_t len,
                                               bool is_metadata)
{
  (void)is_metadata;
  if (!TBAND_LOAD(&tband_pm_ready))
    return TBAND_IGNORED;
  if (len >= TBAND_PM_SIZE)
    return TBAND_DROPPED;
  tband_pm_write(&tband_pm_rings[core], buf, len);
  return TBAND_STORED;
}

/* Position (relative to start) just after the next delimiter at or after i. */
static uint32_t tband_pm_next_frame(const struct tband_pm_ring *r, uint32_t start, uint32_t i,
                                    uint32_t total)
{
  while (i < total && r->buf[(start + i) % TBAND_PM_SIZE] != 0)
    i++;
  return i < total ? i + 1 : total;
}

size_t tband_postmortem_read(uint32_t core_id, uint8_t *dst, size_t cap)
{
  if (core_id >= tband_portNUMBER_OF_CORES)
    return 0;
  const struct tband_pm_ring *r = &tband_pm_rings[core_id];
  if (!tband_pm_valid(r))
    return 0;
  uint32_t head = r->head;
  uint32_t total = r->wrapped ? TBAND_PM_SIZE : head;
  uint32_t start = r->wrapped ? head : 0; /* ring index of the oldest byte */
  uint32_t skip = 0;
  /* When wrapped, the oldest frame is usually partly overwritten, and whether
   * head happens to sit on a frame start cannot be told: always start after
   * the first delimiter (losing at most one whole frame). */
  if (r->wrapped)
    skip = tband_pm_next_frame(r, start, 0, total);
  /* Keep the newest if dst is too small, again from a frame boundary. */
  if (total - skip > cap) {
    skip = total - (uint32_t)cap;
    if (r->buf[(start + skip - 1) % TBAND_PM_SIZE] != 0)
      skip = tband_pm_next_frame(r, start, skip, total);
  }
  size_t n = 0;
  for (uint32_t i = skip; i < total; i++)
    dst[n++] = r->buf[(start + i) % TBAND_PM_SIZE];
  return n;
}

void tband_postmortem_clear(void)
{
  tband_portENTER_CRITICAL_FROM_ANY();
  for (uint32_t c = 0; c < tband_portNUMBER_OF_CORES; c++)
    tband_pm_format(&tband_pm_rings[c]);
  tband_portEXIT_CRITICAL_FROM_ANY();
}

uint32_t tband_postmortem_boot_cnt(void) { return tband_pm_rings[0].boot_cnt; }
#endif
