/* Sonde ITM/DWT decoder: parallel decoding of a whole buffer
 * (sonde_itm_decode_parallel, include/sonde/itm.h; docs/itm.md "Parallel
 * decoding").
 *
 * The sequential decoder (itm.c) is a deterministic automaton whose state
 * splits in two:
 *  - the core: state (IDLE, PEND, ZEROS, LOST), the pending bytes, the zero
 *    run, the loss (lost, skip_start, skip_why). It alone decides where
 *    packets start and what type, size and payload they have;
 *  - the context: the running local timestamp (ts_abs, ts_out), the stimulus
 *    page (page_base), the global timestamp (gts) and the statistics. The
 *    core never reads it; it only shows in packet fields (ts; the port of SW
 *    packets; the value of GTS packets) and in the counters.
 * In IDLE the core holds nothing else (IDLE implies not lost and no pending
 * bytes): two decoders both in IDLE at the same offset emit the same packets
 * from there on, up to the context.
 *
 * A worker decodes chunk k (k > 0) speculatively: a fresh decoder P at
 * offset c (the chunk start, or up to 7 bytes later when the start failed a
 * short probe: a start inside a packet payload often hits a reserved header
 * or a zero and loses sync). P is IDLE at c, at the start of every packet it
 * emits other than SYNC and SKIP, and at the end of every SYNC packet: these
 * are its candidate points (q, i), q an offset and i the index of P's next
 * packet there.
 *
 * The thread delivering chunk k holds T, the exact sequential decoder, at
 * the chunk's start (see run_thread). It feeds T the bytes up to the next
 * candidate point q (passing T's packets to the sink) and checks T's state: IDLE means T and P agree from q on
 * (join). It tests every point at first, then at doubling gaps (a join can
 * only be seen late, never wrongly); with no join in the chunk, T decodes
 * the whole chunk. After a join at (q, i), P's packets from i on are passed
 * on with the context fixed (join_fix), and T takes P's core state at the
 * chunk's end with the context carried over (join_state). */
#include "sonde/itm.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "itm_internal.h"

enum {
  PAR_CHUNK_DEFAULT = 64 << 10, /* its records (~12 bytes per input byte, mixed) fit in L2 */
  PAR_PROBE = 256,  /* bytes a speculative start must decode without a loss */
  PAR_STARTS = 8,   /* starts tried: c = chunk start + 0..7 (a packet is <= 7 bytes) */
  PAR_BATCH = 1024, /* packets the exact decoder writes at a time */
  PAR_FIX = 256,    /* packets fixed and passed to the sink at a time (8 KiB) */
};

static bool force_speculation;
void itm_par_force_speculation(bool on) { force_speculation = on; }

void sonde_itm_par_config_init(struct sonde_itm_par_config *c)
{
  c->threads = 0;
  c->chunk_bytes = 0;
}

struct par_slot {
  struct sonde_itm dec;        /* P after the chunk */
  struct sonde_itm_packet *pk; /* its packets */
  size_t np;
  size_t start, end; /* input positions decoded: [start, end) */
  uint8_t done;      /* decoded, not yet delivered (under pr->mu) */
};

struct par {
  const uint8_t *in;
  size_t len, chunk_bytes, nchunks, cap;
  uint64_t base;                /* stream offset of in[0] */
  struct sonde_itm spec0;       /* a fresh speculative decoder */
  struct par_slot *slots;
  unsigned nslots;
  struct consumer *c;
  pthread_mutex_t mu;
  pthread_cond_t cv;  /* a chunk decoded or delivered, or stop */
  size_t next;        /* next chunk to claim */
  size_t delivered;   /* chunks passed to the sink */
  bool delivering;    /* a thread is passing the next chunk on */
  int result;         /* the sink's non-zero value */
  bool stop;
};

/* Decode in[from..to) with s into the slot's packets (after those it has). */
static void slot_run(struct par *pr, struct sonde_itm *s, struct par_slot *sl, size_t from,
                     size_t to)
{
  while (from < to && sl->np + 2 <= pr->cap) {
    size_t used = 0;
    size_t n = sonde_itm_decode(s, pr->in + from, to - from, &used, sl->pk + sl->np,
                                pr->cap - sl->np);
    sl->np += n;
    from += used;
    if (!used && !n)
      break;
  }
  sl->end = from;
}

/* Decode chunk k into sl speculatively. */
static void decode_chunk(struct par *pr, size_t k, struct par_slot *sl)
{
  size_t start = k * pr->chunk_bytes;
  size_t end = pr->len - start > pr->chunk_bytes ? start + pr->chunk_bytes : pr->len;
  for (size_t j = 0; j < PAR_STARTS; j++) {
    size_t c = start + j;
    if (j && c >= end)
      break;
    sl->dec = pr->spec0;
    sl->dec.offset = pr->base + c;
    sl->np = 0;
    sl->start = c;
    size_t probe = end - c > PAR_PROBE ? c + PAR_PROBE : end;
    slot_run(pr, &sl->dec, sl, c, probe);
    if (!sl->dec.lost && !sl->dec.st.losses) {
      slot_run(pr, &sl->dec, sl, probe, end);
      return;
    }
  }
  /* every start lost sync: keep the chunk start (no join, likely) */
  sl->dec = pr->spec0;
  sl->dec.offset = pr->base + start;
  sl->np = 0;
  sl->start = start;
  slot_run(pr, &sl->dec, sl, start, end);
}

/* ---- delivering a chunk, in order -------------------------------------------- */

/* What the thread delivering the next chunk owns (handed on in order,
 * through pr->mu). */
struct consumer {
  struct par *pr;
  struct sonde_itm t; /* the exact decoder, at the next chunk's start */
  sonde_itm_sink_fn sink;
  void *user;
  struct sonde_itm_par_stats *ps;
};

/* T decodes in[from..to), its packets to the sink through buf (the
 * delivering thread's, PAR_BATCH packets). */
static int feed(struct consumer *c, struct sonde_itm_packet *buf, size_t from, size_t to,
                bool count)
{
  if (count)
    c->ps->walk_bytes += to - from;
  while (from < to) {
    size_t used = 0;
    size_t n = sonde_itm_decode(&c->t, c->pr->in + from, to - from, &used, buf, PAR_BATCH);
    from += used;
    if (n) {
      int r = c->sink(c->user, buf, n);
      if (r)
        return r;
    }
  }
  return 0;
}

/* The context of P at its packet i: what its packets before i set. */
struct p_context {
  uint64_t ts_abs;   /* P's sum of LTS deltas */
  uint32_t page_base;
  uint64_t gts;
  struct sonde_itm_stats st; /* counts of those packets (bytes unused) */
};

static void p_context_at(const struct par_slot *sl, size_t i, struct p_context *x)
{
  memset(x, 0, sizeof *x);
  for (size_t j = 0; j < i; j++) {
    const struct sonde_itm_packet *p = &sl->pk[j];
    x->st.packets[p->type]++;
    switch (p->type) {
    case SONDE_ITM_LTS: x->ts_abs = p->ts; break;
    case SONDE_ITM_PAGE: x->page_base = p->value < 2047 ? (uint32_t)p->value * 32 : 2047u * 32; break;
    case SONDE_ITM_SYNC: x->page_base = 0; break;
    case SONDE_ITM_GTS: x->gts = p->value; break;
    case SONDE_ITM_SKIP:
      x->st.skipped_bytes += p->value;
      x->st.losses++;
      break;
    default: break;
    }
  }
}

/* The bits of the global timestamp a GTS packet writes (itm.c decode_packet). */
static uint64_t gts_bits(const struct sonde_itm_packet *p)
{
  if (p->flags & SONDE_ITM_GTS2)
    return ~((1ull << 26) - 1);
  unsigned bits = p->size >= 4 ? 26 : 7u * p->size;
  return (1ull << bits) - 1;
}

/* The fix of P's packets after a join: T's context at the join point, and
 * what P's packets since then have set. */
struct join {
  uint64_t ts_out, add; /* before P's first LTS since the join: T's ts_out; after: + add */
  uint16_t port_add;    /* SW ports before the first page/sync since the join */
  uint64_t gts;         /* T's global timestamp at the join */
  uint64_t gmask;       /* global timestamp bits written since the join */
  bool seen_lts, page_set;
};

static void join_fix(struct join *j, struct sonde_itm_packet *p, size_t n)
{
  size_t i = 0;
  for (; i < n && !(j->seen_lts && j->page_set && j->gmask == ~0ull); i++) {
    unsigned type = p[i].type;
    if (j->seen_lts || type == SONDE_ITM_LTS) {
      j->seen_lts = true;
      p[i].ts += j->add;
    } else {
      p[i].ts = j->ts_out;
    }
    if (!j->page_set) {
      if (type == SONDE_ITM_SW)
        p[i].port = (uint16_t)(p[i].port + j->port_add);
      else if (type == SONDE_ITM_SYNC || type == SONDE_ITM_PAGE)
        j->page_set = true;
    }
    if (type == SONDE_ITM_GTS) {
      j->gmask |= gts_bits(&p[i]);
      p[i].value = (p[i].value & j->gmask) | (j->gts & ~j->gmask);
    }
  }
  if (j->add) /* the rest: only the timestamp base */
    for (; i < n; i++)
      p[i].ts += j->add;
}

/* Chunk k from its slot: join (or decode it here), pass its packets on, and
 * leave T at the chunk's end. */
static int consume(struct consumer *c, struct sonde_itm_packet *buf, size_t k,
                   struct par_slot *sl)
{
  struct par *pr = c->pr;
  size_t pos = (size_t)(c->t.offset - pr->base);
  size_t end = pr->len - k * pr->chunk_bytes > pr->chunk_bytes ? (k + 1) * pr->chunk_bytes
                                                                : pr->len;
  int r;
  /* find a join: T IDLE at one of P's candidate points */
  size_t at = SIZE_MAX; /* P's packet index at the join */
  size_t q = 0;
  if (c->t.state == ST_IDLE && sl->start == pos) {
    at = 0;
    q = pos;
  } else {
    uint64_t tries = 0;
    for (size_t i = 0; i <= sl->np; i++) {
      size_t cq, ci;
      if (i == 0) {
        cq = sl->start;
        ci = 0;
      } else {
        const struct sonde_itm_packet *p = &sl->pk[i - 1];
        if (p->type == SONDE_ITM_SKIP)
          continue;
        if (p->type == SONDE_ITM_SYNC) {
          cq = (size_t)(p->offset + p->value - pr->base);
          ci = i;
        } else {
          /* the start of packet i-1: index i-1 */
          cq = (size_t)(p->offset - pr->base);
          ci = i - 1;
        }
      }
      if (cq < pos)
        continue;
      tries++;
      /* every point at first, then at doubling gaps */
      if (tries > 16 && (tries & (tries - 1)))
        continue;
      if ((r = feed(c, buf, pos, cq, true)))
        return r;
      pos = cq;
      if (c->t.state == ST_IDLE) {
        at = ci;
        q = cq;
        break;
      }
    }
  }
  if (at == SIZE_MAX) /* no common boundary: T decodes the chunk */
    return feed(c, buf, pos, end, true);
  c->ps->joined++;

  struct p_context x;
  p_context_at(sl, at, &x);
  struct join j = {
      .ts_out = c->t.ts_out,
      .add = c->t.ts_abs - x.ts_abs,
      .port_add = (uint16_t)(c->t.page_base - x.page_base),
      .gts = c->t.gts,
      .gmask = 0,
      .seen_lts = false,
      .page_set = false,
  };
  /* fixed in place (the slot is this core's) and passed on PAR_FIX packets
   * at a time, while they are in L1 */
  for (size_t i = at; i < sl->np; i += PAR_FIX) {
    size_t n = sl->np - i < PAR_FIX ? sl->np - i : PAR_FIX;
    join_fix(&j, sl->pk + i, n);
    if ((r = c->sink(c->user, sl->pk + i, n)))
      return r;
  }

  /* T at the chunk's end: P's core, the context carried over */
  struct sonde_itm t0 = c->t;
  const struct sonde_itm *p = &sl->dec;
  c->t = *p;
  c->t.cfg = t0.cfg;
  if (j.seen_lts) {
    c->t.ts_abs = p->ts_abs + j.add;
    c->t.ts_out = p->ts_out + j.add;
  } else {
    c->t.ts_abs = t0.ts_abs;
    c->t.ts_out = t0.ts_out;
  }
  if (!j.page_set)
    c->t.page_base = t0.page_base;
  c->t.gts = (p->gts & j.gmask) | (t0.gts & ~j.gmask);
  c->t.st = t0.st;
  c->t.st.bytes += sl->end - q;
  c->t.st.skipped_bytes += p->st.skipped_bytes - x.st.skipped_bytes;
  c->t.st.losses += p->st.losses - x.st.losses;
  for (unsigned ty = 0; ty < SONDE_ITM_TYPE_COUNT; ty++)
    c->t.st.packets[ty] += p->st.packets[ty] - x.st.packets[ty];
  return sl->end < end ? feed(c, buf, sl->end, end, true) : 0;
}

/* ---- the threads --------------------------------------------------------------
 *
 * Every thread (the caller too) loops, under pr->mu, doing the first of:
 *  1. deliver the next chunk in order, if no one is delivering: when no
 *     thread has taken it yet, T is at its start: decode it with T straight
 *     to the sink (sequential; the packets never leave this core); when it
 *     has been decoded speculatively, join it and pass it on;
 *  2. take the next chunk (at most nslots ahead of the chunks delivered)
 *     and decode it speculatively into its slot; then loop, so that a chunk
 *     that is next by then is delivered by the thread that decoded it, its
 *     packets still in this core's cache;
 *  3. wait.
 * No thread waits for another while there is work, which matters on a
 * loaded machine where a thread may not run for a while. Deliveries are in
 * chunk order, one at a time (pr->delivering), so the sink sees the packets
 * in order, from one thread at a time. */

/* With pr->mu held: a delivery ended. */
static void delivered_one(struct par *pr, int r)
{
  pr->delivering = false;
  pr->delivered++;
  if (r) {
    pr->result = r;
    pr->stop = true;
  }
  pthread_cond_broadcast(&pr->cv);
}

static void *run_thread(void *arg)
{
  struct par *pr = arg;
  struct consumer *c = pr->c;
  struct sonde_itm_packet buf[PAR_BATCH];
  pthread_mutex_lock(&pr->mu);
  while (!pr->stop && pr->delivered < pr->nchunks) {
    size_t k = pr->delivered;
    struct par_slot *sl = &pr->slots[k % pr->nslots];
    if (!pr->delivering && pr->next == k && (!force_speculation || !k)) {
      pr->next++;
      pr->delivering = true;
      pthread_mutex_unlock(&pr->mu);
      size_t start = k * pr->chunk_bytes;
      size_t end = pr->len - start > pr->chunk_bytes ? start + pr->chunk_bytes : pr->len;
      c->ps->exact++;
      int r = feed(c, buf, start, end, false);
      pthread_mutex_lock(&pr->mu);
      delivered_one(pr, r);
    } else if (!pr->delivering && sl->done) {
      pr->delivering = true;
      pthread_mutex_unlock(&pr->mu);
      int r = consume(c, buf, k, sl);
      pthread_mutex_lock(&pr->mu);
      sl->done = 0;
      delivered_one(pr, r);
    } else if (pr->next < pr->nchunks && pr->next < pr->delivered + pr->nslots) {
      size_t kk = pr->next++;
      struct par_slot *ks = &pr->slots[kk % pr->nslots];
      pthread_mutex_unlock(&pr->mu);
      decode_chunk(pr, kk, ks);
      pthread_mutex_lock(&pr->mu);
      ks->done = 1;
      pthread_cond_broadcast(&pr->cv);
    } else {
      pthread_cond_wait(&pr->cv, &pr->mu);
    }
  }
  pthread_mutex_unlock(&pr->mu);
  return NULL;
}

static unsigned online_cpus(void)
{
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n > 256 ? 256 : (unsigned)n;
}

int sonde_itm_decode_parallel(struct sonde_itm *d, const uint8_t *in, size_t len,
                              const struct sonde_itm_par_config *pc, sonde_itm_sink_fn sink,
                              void *user, struct sonde_itm_par_stats *ps)
{
  struct sonde_itm_par_config cfg;
  sonde_itm_par_config_init(&cfg);
  if (pc)
    cfg = *pc;
  struct sonde_itm_par_stats ps_local;
  if (!ps)
    ps = &ps_local;
  memset(ps, 0, sizeof *ps);
  unsigned threads = cfg.threads ? cfg.threads : online_cpus();
  size_t chunk = cfg.chunk_bytes ? cfg.chunk_bytes : PAR_CHUNK_DEFAULT;
  size_t nchunks = len / chunk + (len % chunk != 0);
  if (threads > nchunks)
    threads = nchunks ? (unsigned)nchunks : 1;

  struct consumer *c = malloc(sizeof *c);
  if (!c)
    return SONDE_E_NOMEM;
  c->t = *d;
  c->sink = sink;
  c->user = user;
  c->ps = ps;
  ps->threads = 1;
  ps->chunks = nchunks;
  if (threads <= 1) { /* sequential: sonde_itm_decode in the caller */
    struct par one = {.in = in, .len = len, .base = d->offset};
    struct sonde_itm_packet *buf = malloc(PAR_BATCH * sizeof *buf);
    if (!buf) {
      free(c);
      return SONDE_E_NOMEM;
    }
    c->pr = &one;
    int r = feed(c, buf, 0, len, false);
    ps->exact = nchunks;
    *d = c->t;
    free(buf);
    free(c);
    return r;
  }

  struct par *pr = calloc(1, sizeof *pr);
  unsigned nslots = 2 * threads;
  size_t cap = chunk + 16; /* packets per chunk <= bytes (+ one pending, SKIP) */
  if (pr)
    pr->slots = calloc(nslots, sizeof *pr->slots);
  bool ok = pr && pr->slots;
  for (unsigned i = 0; ok && i < nslots; i++)
    ok = (pr->slots[i].pk = malloc(cap * sizeof *pr->slots[i].pk)) != NULL;
  if (!ok) {
    if (pr && pr->slots)
      for (unsigned i = 0; i < nslots; i++)
        free(pr->slots[i].pk);
    if (pr)
      free(pr->slots);
    free(pr);
    free(c);
    return SONDE_E_NOMEM;
  }
  pr->in = in;
  pr->len = len;
  pr->chunk_bytes = chunk;
  pr->nchunks = nchunks;
  pr->cap = cap;
  pr->base = d->offset;
  pr->nslots = nslots;
  /* speculation: synchronised, no timestamp, page 0; the same loops as d
   * (tests force them). Set up here: itm_setup probes the CPU. */
  struct sonde_itm_config scfg = d->cfg;
  scfg.start_unsynced = false;
  sonde_itm_init(&pr->spec0, sizeof pr->spec0, &scfg);
  pr->spec0.loop_mode = d->loop_mode;
  pr->spec0.x86v3 = d->x86v3;
  pthread_mutex_init(&pr->mu, NULL);
  pthread_cond_init(&pr->cv, NULL);
  c->pr = pr;
  pr->c = c;

  pthread_t *tid = malloc((threads - 1) * sizeof *tid);
  unsigned started = 0;
  for (unsigned i = 0; tid && i + 1 < threads; i++)
    if (!pthread_create(&tid[started], NULL, run_thread, pr))
      started++;
  ps->threads = started + 1;
  run_thread(pr);
  for (unsigned i = 0; i < started; i++)
    pthread_join(tid[i], NULL);
  free(tid);
  int r = pr->result;
  if (!r)
    *d = c->t;
  pthread_cond_destroy(&pr->cv);
  pthread_mutex_destroy(&pr->mu);
  for (unsigned i = 0; i < nslots; i++)
    free(pr->slots[i].pk);
  free(pr->slots);
  free(pr);
  free(c);
  return r;
}
