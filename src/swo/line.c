/* SWO line decoding: configuration, option parsing, baud/mode
 * auto-detection, and dispatch to line_uart.c / line_manchester.c.
 *
 * Auto-detection looks at pulse widths (runs of equal samples): the shortest
 * width that many pulses share is one UART bit or one Manchester half-bit;
 * the idle level (the level of the longest run) tells the two apart (UART
 * idles HIGH, Manchester LOW; DDI 0314 TPIU physical pin protocol), and so
 * do HIGH pulses longer than 2.5 half-bits, which Manchester never has. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "line_internal.h"

#define DEFAULT_DETECT_WINDOW (4u << 20)
#define EARLY_DETECT_STEP (1u << 16)
#define MIN_RUNS_EARLY 2000
#define MAX_RUNS 8192

void sonde_swo_line_config_init(struct sonde_swo_line_config *cfg)
{
  memset(cfg, 0, sizeof *cfg);
  cfg->mode = SONDE_SWO_LINE_AUTO;
}

void swo_line_report(struct sonde_swo_line *l, enum sonde_swo_line_error_kind k, uint64_t sample,
                     size_t pending_bytes)
{
  if (l->st.first_error_sample == UINT64_MAX)
    l->st.first_error_sample = sample;
  l->st.last_error_sample = sample;
  if (l->cb) {
    struct sonde_swo_line_error e = {k, sample, l->st.bytes + pending_bytes};
    l->cb(l->cb_ctx, &e);
  }
}

/* ---- parsing --------------------------------------------------------------- */

/* A positive number with an optional k/M/G suffix (and optional "Hz"/"bps"). */
static int parse_scaled(const char *text, uint64_t *v)
{
  if (!text || !*text || *text == '-' || *text == '+')
    return SONDE_E_ARG;
  char *end;
  double d = strtod(text, &end);
  if (end == text || !(d > 0))
    return SONDE_E_ARG;
  double mul = 1;
  if (*end == 'k' || *end == 'K')
    mul = 1e3, end++;
  else if (*end == 'M')
    mul = 1e6, end++;
  else if (*end == 'G')
    mul = 1e9, end++;
  if (strcmp(end, "Hz") == 0 || strcmp(end, "hz") == 0 || strcmp(end, "bps") == 0 ||
      strcmp(end, "baud") == 0)
    end += strlen(end);
  if (*end)
    return SONDE_E_ARG;
  d *= mul;
  if (d < 1 || d > 1e12)
    return SONDE_E_RANGE;
  *v = (uint64_t)llround(d);
  return 0;
}

int sonde_swo_parse_rate(const char *text, uint64_t *hz)
{
  uint64_t v;
  int r = parse_scaled(text, &v);
  if (r)
    return SONDE_E_ARG;
  *hz = v;
  return 0;
}

int sonde_swo_line_parse_spec(const char *spec, struct sonde_swo_line_config *cfg,
                              struct sonde_diag *diag)
{
  if (!spec || !*spec)
    return sonde_diag_set(diag, SONDE_E_ARG, "empty line spec (want uart:BAUD, manchester:BAUD or auto)");
  const char *colon = strchr(spec, ':');
  size_t kl = colon ? (size_t)(colon - spec) : strlen(spec);
  enum sonde_swo_line_mode mode;
  if ((kl == 4 && strncmp(spec, "uart", 4) == 0) || (kl == 3 && strncmp(spec, "nrz", 3) == 0))
    mode = SONDE_SWO_LINE_UART;
  else if (kl == 10 && strncmp(spec, "manchester", 10) == 0)
    mode = SONDE_SWO_LINE_MANCHESTER;
  else if (kl == 4 && strncmp(spec, "auto", 4) == 0)
    mode = SONDE_SWO_LINE_AUTO;
  else
    return sonde_diag_set(diag, SONDE_E_ARG,
                          "'%s': unknown line encoding (want uart, manchester or auto)", spec);
  uint64_t baud = 0;
  if (colon && strcmp(colon + 1, "auto") != 0) {
    if (parse_scaled(colon + 1, &baud) != 0 || baud > 0xFFFFFFFFu)
      return sonde_diag_set(diag, SONDE_E_ARG, "'%s': bad baud rate '%s'", spec, colon + 1);
  }
  cfg->mode = mode;
  cfg->baud = (uint32_t)baud;
  return 0;
}

/* ---- lifecycle ------------------------------------------------------------- */

static int min_spb(enum sonde_swo_line_mode m) { return m == SONDE_SWO_LINE_MANCHESTER ? 4 : 3; }

static void line_setup_decoder(struct sonde_swo_line *l)
{
  l->st.mode = l->mode;
  l->st.baud = l->cfg.baud;
  l->st.samples_per_bit = l->spb;
  l->st.detected = true;
  if (l->mode == SONDE_SWO_LINE_UART)
    swo_uart_setup(l);
  else
    swo_manchester_setup(l);
}

static void line_start(struct sonde_swo_line *l)
{
  memset(&l->st, 0, sizeof l->st);
  l->st.first_error_sample = l->st.last_error_sample = UINT64_MAX;
  l->pos = 0;
  l->prev_level = -1;
  l->dlen = l->dpos = 0;
  l->mode = l->cfg.mode;
  l->detected = l->cfg.mode != SONDE_SWO_LINE_AUTO && l->cfg.baud != 0;
  if (l->detected) {
    l->spb = (double)l->cfg.sample_rate_hz / l->cfg.baud;
    line_setup_decoder(l);
  } else {
    l->spb = 0;
    l->st.mode = l->cfg.mode;
  }
}

int sonde_swo_line_new(const struct sonde_swo_line_config *cfg, struct sonde_swo_line **out,
                       struct sonde_diag *diag)
{
  if (!out || !cfg)
    return SONDE_E_ARG;
  *out = NULL;
  if (cfg->channel > 7)
    return sonde_diag_set(diag, SONDE_E_ARG, "channel %u out of range (0..7)", cfg->channel);
  if (cfg->sample_rate_hz == 0)
    return sonde_diag_set(diag, SONDE_E_ARG, "a sample rate is required");
  if (cfg->mode != SONDE_SWO_LINE_AUTO && cfg->mode != SONDE_SWO_LINE_UART &&
      cfg->mode != SONDE_SWO_LINE_MANCHESTER)
    return sonde_diag_set(diag, SONDE_E_ARG, "unknown line mode %d", (int)cfg->mode);
  if (cfg->baud) {
    double spb = (double)cfg->sample_rate_hz / cfg->baud;
    int need = min_spb(cfg->mode == SONDE_SWO_LINE_AUTO ? SONDE_SWO_LINE_UART : cfg->mode);
    if (spb < need)
      return sonde_diag_set(diag, SONDE_E_ARG,
                            "%.2f samples per bit at %llu Hz / %u baud; need at least %d",
                            spb, (unsigned long long)cfg->sample_rate_hz, cfg->baud, need);
  }
  struct sonde_swo_line *l = calloc(1, sizeof *l);
  if (!l)
    return sonde_diag_set(diag, SONDE_E_NOMEM, "out of memory");
  l->cfg = *cfg;
  l->retime = cfg->retime || cfg->mode == SONDE_SWO_LINE_AUTO || cfg->baud == 0;
  l->ch = cfg->channel;
  l->inv = cfg->invert ? 1u : 0u;
  if (cfg->mode == SONDE_SWO_LINE_AUTO || cfg->baud == 0) {
    l->dcap = cfg->detect_window ? cfg->detect_window : DEFAULT_DETECT_WINDOW;
    if (l->dcap < 1024)
      l->dcap = 1024;
    l->dbuf = malloc(l->dcap);
    if (!l->dbuf) {
      free(l);
      return sonde_diag_set(diag, SONDE_E_NOMEM, "out of memory");
    }
  }
  line_start(l);
  *out = l;
  return 0;
}

void sonde_swo_line_free(struct sonde_swo_line *l)
{
  if (!l)
    return;
  free(l->dbuf);
  free(l);
}

void sonde_swo_line_reset(struct sonde_swo_line *l)
{
  if (l)
    line_start(l);
}

void sonde_swo_line_set_error_callback(struct sonde_swo_line *l, sonde_swo_line_error_fn fn,
                                       void *ctx)
{
  l->cb = fn;
  l->cb_ctx = ctx;
}

const char *sonde_swo_line_error_detail(const struct sonde_swo_line *l)
{
  return l ? l->diag.msg : "";
}

void sonde_swo_line_get_stats(const struct sonde_swo_line *l, struct sonde_swo_line_stats *st)
{
  *st = l->st;
}

size_t sonde_swo_line_out_bound(const struct sonde_swo_line *l, size_t n)
{
  /* A byte takes at least 16 samples (UART: 9.5 bits of >= 2.8 samples;
   * Manchester: 9 bits of >= 3.7). The whole detection window may be
   * released in the same call, so it counts too: the bound depends only on
   * n and the configuration and may be computed once. */
  return (n + l->dcap) / 16 + 2;
}

/* ---- detection ------------------------------------------------------------- */

static int cmp_u32(const void *a, const void *b)
{
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

static const uint32_t common_bauds[] = {
    9600,    19200,   38400,   57600,   115200,  230400,  250000,  460800,  500000,
    921600,  1000000, 1500000, 2000000, 2250000, 3000000, 4000000, 4500000, 6000000,
    8000000, 9000000, 12000000, 16000000, 18000000, 24000000, 32000000, 36000000, 48000000};

/* min_runs: how many complete pulses are needed to decide. */
static int detect(const uint8_t *s, size_t n, unsigned ch, unsigned inv, uint64_t rate,
                  enum sonde_swo_line_mode hint, size_t min_runs, enum sonde_swo_line_mode *mode,
                  uint32_t *baud, double *spb_out)
{
  if (n < 2)
    return SONDE_E_FORMAT;
  uint32_t *runs = malloc(MAX_RUNS * sizeof *runs);
  if (!runs)
    return SONDE_E_NOMEM;
  size_t nr = 0, i = 0;
  unsigned lvl = (((unsigned)s[0] >> ch) & 1u) ^ inv;
  uint64_t longest[2] = {0, 0};
  bool first = true;
  while (i < n) {
    size_t j = swo_find_level(s, i, n, ch, (lvl ^ 1u) ^ inv);
    uint64_t len = j - i;
    if (len > longest[lvl])
      longest[lvl] = len;
    if (!first && j < n && nr < MAX_RUNS) /* complete pulses only */
      runs[nr++] = (len > 0x7FFFFFFFu ? 0xFFFFFFFEu : (uint32_t)len << 1) | lvl;
    first = false;
    i = j;
    lvl ^= 1u;
  }
  if (nr < min_runs || nr < 16) {
    free(runs);
    return SONDE_E_FORMAT;
  }
  qsort(runs, nr, sizeof *runs, cmp_u32); /* entries are length << 1 | level */
  /* The width is measured on LOW pulses when there are enough: in UART they
   * lie inside one frame (start and data bits), so they are whole bits of
   * that frame's clock, while a HIGH pulse that ends a frame also holds the
   * gap before the next one, which a transmitter whose clock is off (or
   * jitters, as `sonde run --swo-jitter` makes it) shortens to a fraction of
   * a bit. Those fractions would pull the width down and the baud off. */
  size_t nlow = 0;
  for (size_t a = 0; a < nr; a++)
    nlow += !(runs[a] & 1u);
  const unsigned only_low = nlow >= 16 ? 1u : 0u; /* 1: ignore HIGH pulses */
  /* Shortest width w shared by at least max(3, 2%) of the pulses (within
   * 0.8w..1.25w): shorter outliers are glitches. */
  size_t need = (only_low ? nlow : nr) / 50 > 3 ? (only_low ? nlow : nr) / 50 : 3;
  double w = 0;
  for (size_t a = 0; a < nr; a++) {
    if (only_low && (runs[a] & 1u))
      continue;
    uint32_t lo = runs[a] >> 1;
    size_t b = a, cnt = 0;
    double sum = 0;
    for (; b < nr && (runs[b] >> 1) <= lo * 1.25 + 1; b++)
      if (!only_low || !(runs[b] & 1u)) {
        sum += runs[b] >> 1;
        cnt++;
      }
    if (cnt >= need) {
      w = sum / (double)cnt;
      break;
    }
  }
  if (w <= 0) {
    free(runs);
    return SONDE_E_FORMAT;
  }
  /* Refine over every pulse that is close to an integer multiple of w. */
  double sl = 0, sk = 0;
  size_t high_long = 0; /* HIGH pulses of 2.5 w or more: never in Manchester */
  for (size_t a = 0; a < nr; a++) {
    double len = runs[a] >> 1;
    double k = floor(len / w + 0.5);
    if (k >= 1 && k <= 10 && fabs(len - k * w) < 0.3 * w && !(only_low && (runs[a] & 1u))) {
      sl += len;
      sk += k;
    }
    if ((runs[a] & 1u) && len >= 2.5 * w)
      high_long++;
  }
  free(runs);
  if (sk > 0)
    w = sl / sk;
  enum sonde_swo_line_mode m = hint;
  if (m == SONDE_SWO_LINE_AUTO)
    m = longest[1] >= longest[0] || high_long > (nr / 100 > 2 ? nr / 100 : 2)
            ? SONDE_SWO_LINE_UART
            : SONDE_SWO_LINE_MANCHESTER;
  double spb = m == SONDE_SWO_LINE_MANCHESTER ? 2 * w : w;
  double b = (double)rate / spb;
  uint32_t best = (uint32_t)llround(b);
  for (size_t k = 0; k < sizeof common_bauds / sizeof common_bauds[0]; k++)
    if (fabs(b - common_bauds[k]) <= 0.01 * common_bauds[k]) {
      best = common_bauds[k];
      break;
    }
  if (best == 0)
    return SONDE_E_FORMAT;
  *mode = m;
  *baud = best;
  if (spb_out)
    *spb_out = spb;
  return 0;
}

int sonde_swo_line_detect(const uint8_t *samples, size_t n, unsigned channel,
                          uint64_t sample_rate_hz, enum sonde_swo_line_mode mode_hint,
                          enum sonde_swo_line_mode *mode, uint32_t *baud)
{
  if (!samples || channel > 7 || !sample_rate_hz || !mode || !baud)
    return SONDE_E_ARG;
  return detect(samples, n, channel, 0, sample_rate_hz, mode_hint, 16, mode, baud, NULL);
}

/* Forget an undecidable detection window, keeping the line level at its end
 * so that a signal starting right after it is decoded from its first edge. */
static void drop_window(struct sonde_swo_line *l)
{
  if (l->dlen)
    l->prev_level = (int)((((unsigned)l->dbuf[l->dlen - 1] >> l->ch) & 1u) ^ l->inv);
  l->pos += l->dlen;
  l->dlen = 0;
}

/* Try to detect on the buffered samples; on success set up the decoder. */
static bool try_detect(struct sonde_swo_line *l, size_t min_runs)
{
  enum sonde_swo_line_mode m;
  uint32_t b;
  double spb;
  int r = detect(l->dbuf, l->dlen, l->ch, l->inv, l->cfg.sample_rate_hz, l->cfg.mode, min_runs,
                 &m, &b, &spb);
  if (r != 0)
    return false;
  if (l->cfg.baud) { /* mode was auto, baud given */
    b = l->cfg.baud;
  }
  l->mode = m;
  l->cfg.baud = b;
  l->spb = (double)l->cfg.sample_rate_hz / b;
  /* A transmitter up to 7% fast is still decodable at a measured 2.8
   * samples per bit (the decoder re-times on every start edge). */
  if (l->spb < 0.93 * min_spb(m)) {
    sonde_diag_set(&l->diag, SONDE_E_FORMAT,
                   "detected %u baud (%s) is %.2f samples per bit; need at least %d", b,
                   m == SONDE_SWO_LINE_UART ? "uart" : "manchester", l->spb, min_spb(m));
    return false;
  }
  l->detected = true;
  line_setup_decoder(l);
  l->dpos = 0;
  return true;
}

/* ---- feeding --------------------------------------------------------------- */

static size_t core_run(struct sonde_swo_line *l, const uint8_t *s, size_t n, size_t *consumed,
                       uint8_t *out, size_t cap)
{
  size_t o = l->mode == SONDE_SWO_LINE_UART ? swo_uart_run(l, s, n, consumed, out, cap)
                                            : swo_manchester_run(l, s, n, consumed, out, cap);
  l->pos += *consumed;
  l->st.bytes += o;
  return o;
}

/* Replay buffered detection samples; true when all are replayed. */
static bool replay(struct sonde_swo_line *l, uint8_t *out, size_t cap, size_t *o)
{
  while (l->dpos < l->dlen) {
    size_t c = 0;
    *o += core_run(l, l->dbuf + l->dpos, l->dlen - l->dpos, &c, out + *o, cap - *o);
    l->dpos += c;
    if (l->dpos < l->dlen && c == 0)
      return false; /* out is full */
  }
  l->dlen = l->dpos = 0;
  return true;
}

size_t sonde_swo_line_feed(struct sonde_swo_line *l, const uint8_t *samples, size_t n,
                           size_t *consumed, uint8_t *out, size_t cap)
{
  size_t taken = 0, o = 0;
  while (!l->detected && taken < n) { /* window by window until detected */
    size_t room = l->dcap - l->dlen;
    size_t k = n - taken < room ? n - taken : room;
    size_t before = l->dlen;
    memcpy(l->dbuf + l->dlen, samples + taken, k);
    l->dlen += k;
    l->st.samples += k;
    taken += k;
    bool full = l->dlen == l->dcap;
    if (full || before / EARLY_DETECT_STEP != l->dlen / EARLY_DETECT_STEP) {
      if (!try_detect(l, full ? 16 : MIN_RUNS_EARLY) && full) {
        /* Undecidable window: drop it and try again on the next one. */
        if (!l->diag.msg[0])
          sonde_diag_set(&l->diag, SONDE_E_FORMAT,
                         "no SWO signal found on channel %u in %zu samples", l->ch, l->dlen);
        drop_window(l);
      }
    }
  }
  if (!l->detected) {
    if (consumed)
      *consumed = taken;
    return 0;
  }
  if (l->dlen && !replay(l, out, cap, &o)) {
    if (consumed)
      *consumed = taken;
    return o;
  }
  const uint8_t *s = samples + taken;
  size_t rest = n - taken, done = 0;
  while (done < rest) {
    size_t c = 0;
    size_t got = core_run(l, s + done, rest - done, &c, out + o, cap - o);
    o += got;
    done += c;
    if (c == 0 && got == 0)
      break; /* out is full */
  }
  l->st.samples += done;
  if (consumed)
    *consumed = taken + done;
  return o;
}

size_t sonde_swo_line_finish(struct sonde_swo_line *l, uint8_t *out, size_t cap)
{
  size_t o = 0;
  if (!l->detected && l->dlen) {
    if (!try_detect(l, 16)) {
      if (!l->diag.msg[0])
        sonde_diag_set(&l->diag, SONDE_E_FORMAT,
                       "no SWO signal found on channel %u in %zu samples", l->ch, l->dlen);
      drop_window(l);
      return 0;
    }
  }
  if (l->dlen && !replay(l, out, cap, &o))
    return o;
  if (l->detected && l->mode == SONDE_SWO_LINE_MANCHESTER)
    o += swo_manchester_finish(l, out + o, cap - o);
  return o;
}
