/* Sonde: ITM/DWT packet decoder (src/itm).
 *
 * Implements the ITM and DWT packet protocol of the ARMv7-M Architecture
 * Reference Manual, Appendix D4 "Debug ITM and DWT Packet Protocol", and its
 * ARMv8-M counterpart (ARMv8-M ARM, chapter D1 "ITM and DWT packet protocol"):
 *
 *   header      packet                          decoded as
 *   00..00 80   Synchronization (>= 47 zeros, 1)  SONDE_ITM_SYNC
 *   70          Overflow                          SONDE_ITM_OVERFLOW
 *   0TTT0000    Local timestamp format 2 (1..6)   SONDE_ITM_LTS (flags LTS2)
 *   11TC0000    Local timestamp format 1 + 1..4   SONDE_ITM_LTS (flags = TC)
 *   10010100    Global timestamp format 1 + 1..4  SONDE_ITM_GTS
 *   10110100    Global timestamp format 2 + 4|6   SONDE_ITM_GTS (flags GTS2)
 *   CEEE1S00    Extension (S=0: stimulus page)    SONDE_ITM_PAGE / SONDE_ITM_EXT
 *   AAAAA0SS    Instrumentation, port A, 1/2/4 B  SONDE_ITM_SW
 *   DDDDD1SS    Hardware source, discriminator D  see below
 *
 *   discriminator  size   packet                               type
 *   0              1      Event counter (Cyc Fold LSU Sleep Exc CPI)  EVCNT
 *   1              2      Exception trace (9-bit number, FN)   EXC
 *   2              4      Periodic PC sample                   PC
 *   2              1      Periodic PC sample, sleeping (0x00)  PC_SLEEP
 *   8+2n           4      Data trace PC value, comparator n    DT_PC
 *   8+2n           1      Data trace match (ARMv8-M), comp. n  DT_MATCH
 *   9+2n           2|4    Data trace address (offset | full)   DT_ADDR
 *   16+2n+W        1/2/4  Data trace data value, W=1 write     DT_DATA
 *   other          any    reserved, length known from header   HW
 *
 * Streaming: the decoder keeps O(1) state (a few counters and at most 7
 * pending bytes) and resumes anywhere, even inside a packet or a run of sync
 * zeros, so input can be fed in buffers split at any byte. It never allocates
 * after _new and makes no indirect call per byte or per packet: packets are
 * written into a caller array.
 *
 * Synchronisation and loss: the decoder starts synchronised at byte 0 unless
 * `start_unsynced` is set (ITM streams often carry no sync packets). A
 * reserved protocol header, a malformed packet (a continuation bit where the
 * last byte must end the packet) or a broken sync run loses sync; bytes are
 * then skipped until the next sync packet, and a SONDE_ITM_SKIP packet reports
 * how many bytes were skipped from which offset (before the SYNC packet that
 * ends the loss). Bytes of a packet cut off by the end of input are reported
 * by sonde_itm_finish() the same way.
 *
 * Timestamps: local timestamp packets carry the cycles (times the prescaler,
 * ITM_TCR.TSPrescale) elapsed since the previous local timestamp; the decoder
 * sums them into an absolute count (`ts`, cycles since the start of the
 * stream, or since the first LTS: the clock starts at 0 there). Every packet
 * carries the absolute time known when it was decoded: that of the last LTS
 * before it (SONDE_ITM_TS_UNKNOWN before the first). Per the ARM ARM, an LTS
 * packet follows the packets it times: the packets emitted since the previous
 * LTS happened at (about) the new LTS's time; TC says how exact that is —
 * 0: timestamp synchronous to the data; 1: timestamp delayed relative to the
 * data (the ITM was busy); 2: data delayed relative to the event; 3: both.
 * A consumer wanting event times therefore stamps the packets between two LTS
 * packets with the later one (the `sonde itm` text output does this with a
 * bounded look-ahead). Global timestamps are tracked separately: GTS1 packets
 * replace the low 26 bits (or the low 7*k bits for a k-byte payload), GTS2
 * the bits from 26 up; `value` is the full global timestamp after the update;
 * Wrap and ClkCh are reported in flags. */
#ifndef SONDE_ITM_H
#define SONDE_ITM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sonde/common.h"

#ifdef __cplusplus
extern "C" {
#endif

enum sonde_itm_type {
  SONDE_ITM_SYNC = 1,   /* size = bytes in the sync packet */
  SONDE_ITM_OVERFLOW,   /* the target's ITM FIFO overflowed: packets lost */
  SONDE_ITM_SW,         /* port = page*32 + A, size 1/2/4, value */
  SONDE_ITM_LTS,        /* value = delta cycles (prescaled), flags = TC | LTS2 */
  SONDE_ITM_GTS,        /* value = global timestamp, flags WRAP/CLKCH/GTS2 */
  SONDE_ITM_PAGE,       /* value = stimulus port page (EX[2:0]) */
  SONDE_ITM_EXT,        /* other extension: value = EX, flags = SH, size = payload */
  SONDE_ITM_PC,         /* value = sampled PC */
  SONDE_ITM_PC_SLEEP,   /* PC sample while sleeping; value = payload (0) */
  SONDE_ITM_EXC,        /* value = exception number (9 bits), flags = FN */
  SONDE_ITM_EVCNT,      /* value = flags = counter-wrap bits (SONDE_ITM_EV_*) */
  SONDE_ITM_DT_PC,      /* port = comparator, value = PC */
  SONDE_ITM_DT_MATCH,   /* port = comparator, value = payload (ARMv8-M) */
  SONDE_ITM_DT_ADDR,    /* port = comparator, size 2: address[15:0]; 4: address */
  SONDE_ITM_DT_DATA,    /* port = comparator, size, value, flags WRITE */
  SONDE_ITM_HW,         /* reserved discriminator: port = discriminator */
  SONDE_ITM_SKIP,       /* offset = first skipped byte, value = bytes, flags = why */
  SONDE_ITM_TYPE_COUNT
};

/* flags */
enum {
  SONDE_ITM_LTS2 = 0x04,      /* LTS: single-byte format 2 (TC implicit 0) */
  SONDE_ITM_GTS_WRAP = 0x01,  /* GTS1: high-order bits changed (GTS2 follows) */
  SONDE_ITM_GTS_CLKCH = 0x02, /* GTS1: the clock changed (GTS2 follows) */
  SONDE_ITM_GTS2 = 0x04,      /* GTS: this was a GTS2 (high-order) packet */
  SONDE_ITM_EXC_ENTER = 1,    /* EXC FN values */
  SONDE_ITM_EXC_EXIT = 2,
  SONDE_ITM_EXC_RETURN = 3,
  SONDE_ITM_DT_WRITE = 0x01,  /* DT_DATA: write access (WnR = 1) */
  SONDE_ITM_SKIP_HEADER = 1,  /* SKIP: reserved protocol header */
  SONDE_ITM_SKIP_MALFORMED = 2, /* SKIP: continuation bit in a packet's last byte */
  SONDE_ITM_SKIP_SYNC = 3,    /* SKIP: zeros not ending in a valid sync */
  SONDE_ITM_SKIP_TRUNCATED = 4, /* SKIP: input ended inside a packet */
  SONDE_ITM_SKIP_START = 5,   /* SKIP: start_unsynced and bytes before the first sync */
};

/* EVCNT payload bits (ARMv7-M D4.3.1) */
enum {
  SONDE_ITM_EV_CPI = 0x01,
  SONDE_ITM_EV_EXC = 0x02,
  SONDE_ITM_EV_SLEEP = 0x04,
  SONDE_ITM_EV_LSU = 0x08,
  SONDE_ITM_EV_FOLD = 0x10,
  SONDE_ITM_EV_CYC = 0x20,
};

#define SONDE_ITM_TS_UNKNOWN UINT64_MAX

/* One decoded packet (32 bytes). Fields not listed for a type are 0. */
struct sonde_itm_packet {
  uint64_t offset; /* byte offset of the packet's first byte in the stream */
  uint64_t ts;     /* absolute local time (cycles) when decoded, or TS_UNKNOWN */
  uint64_t value;
  uint16_t port;
  uint8_t type;    /* enum sonde_itm_type */
  uint8_t size;    /* payload bytes (SW, HW, DT_*), or packet bytes (SYNC) */
  uint8_t flags;
  uint8_t reserved[3];
};

struct sonde_itm_config {
  bool start_unsynced;     /* skip everything before the first sync packet */
  unsigned ts_prescale;    /* multiply LTS deltas: 1 (default), 4, 16 or 64 */
};
void sonde_itm_config_init(struct sonde_itm_config *c);

struct sonde_itm_stats {
  uint64_t bytes;          /* bytes fed */
  uint64_t skipped_bytes;  /* bytes skipped while unsynchronised */
  uint64_t losses;         /* SKIP packets (loss events) */
  uint64_t packets[SONDE_ITM_TYPE_COUNT]; /* per enum sonde_itm_type */
};

struct sonde_itm; /* opaque */

/* Allocate a decoder (cfg may be NULL for defaults). NULL when out of memory. */
struct sonde_itm *sonde_itm_new(const struct sonde_itm_config *cfg);
void sonde_itm_free(struct sonde_itm *d);
/* Forget all state and statistics, as if new. */
void sonde_itm_reset(struct sonde_itm *d);

/* No-malloc variant: the decoder is a plain struct of this size, aligned for
 * uint64_t, placed in caller memory by sonde_itm_init (never freed). */
size_t sonde_itm_sizeof(void);
struct sonde_itm *sonde_itm_init(void *mem, size_t size, const struct sonde_itm_config *cfg);

/* Decode up to `len` bytes of `in`, writing at most `cap` packets (cap >= 2)
 * to `out`. Returns the number of packets written and sets *consumed to the
 * bytes taken; it stops early only when `out` is full, so call again with the
 * rest of the input while *consumed < len. Entries of `out` past the count
 * returned may have been written to (the hot loops' scratch). */
size_t sonde_itm_decode(struct sonde_itm *d, const uint8_t *in, size_t len, size_t *consumed,
                        struct sonde_itm_packet *out, size_t cap);

/* End of input: report a packet cut off by the end (SONDE_ITM_SKIP with
 * flags TRUNCATED) or an unfinished loss. Returns packets written (0..2). */
size_t sonde_itm_finish(struct sonde_itm *d, struct sonde_itm_packet *out, size_t cap);

const struct sonde_itm_stats *sonde_itm_stats(const struct sonde_itm *d);
/* True while synchronised. */
bool sonde_itm_synced(const struct sonde_itm *d);

/* ---- Parallel decoding of a whole buffer (src/itm/itm_par.c) ----------------
 *
 * sonde_itm_decode_parallel(d, in, len, ...) gives exactly what feeding
 * `in` to `d` with sonde_itm_decode would give: the same packets (offsets,
 * timestamps, ports, global timestamps, SKIP packets) in the same order, and
 * `d` left in the same state (statistics, sync, timestamp, page, a packet
 * cut off by the end), so sonde_itm_finish(d, ...) can follow. Packets go to
 * `sink` in order, in batches, one call at a time but from any of the
 * threads (each chunk is passed on by the thread that decoded it, while its
 * packets are in that core's cache); the calls are serialised, so a sink
 * needs no lock of its own.
 *
 * How: the input is cut into chunks of chunk_bytes. Worker threads decode
 * chunk k > 0 speculatively, as if synchronised at (or within 8 bytes of) its
 * start, with no timestamp, page 0 and global timestamp 0. In chunk order,
 * the exact decoder runs from where chunk k-1 really ended until it
 * stands at a packet boundary that the speculative decode also had (proved
 * by the decoder state, not assumed); from there the speculative packets
 * are kept, with the timestamp base added, the stimulus page applied to
 * software ports before the chunk's first page or sync packet, and the
 * global timestamp's bits not yet written in the chunk filled in; the
 * statistics are summed. Where no common boundary turns up, the exact
 * decoder decodes the chunk (correct, just not parallel). A chunk that is
 * next in order when a thread takes it is decoded exactly. docs/itm.md
 * "Parallel decoding" has the rules.
 *
 * Memory: 2 * threads slots of about chunk_bytes * 32 bytes of packet
 * records (only what the packets use is touched), allocated per call; no
 * allocation per packet. */
typedef int (*sonde_itm_sink_fn)(void *user, const struct sonde_itm_packet *packets, size_t n);

struct sonde_itm_par_config {
  unsigned threads;   /* decoding threads including the caller: 0 = online CPUs,
                         1 = sequential (sonde_itm_decode in the caller) */
  size_t chunk_bytes; /* input bytes per unit of work: 0 = default (64 KiB) */
};
void sonde_itm_par_config_init(struct sonde_itm_par_config *c);

/* What a parallel decode did (for benchmarks and tests). */
struct sonde_itm_par_stats {
  unsigned threads;       /* threads that decoded (including the caller) */
  uint64_t chunks;        /* chunks the input was cut into */
  uint64_t joined;        /* chunks whose speculative packets were kept */
  uint64_t exact;         /* chunks decoded from the true state (next in order
                             when a thread took them) */
  uint64_t walk_bytes;    /* bytes of speculative chunks the exact decoder
                             decoded to reach a common boundary or, with none,
                             for the whole chunk */
};

/* Decode in[0..len) into d with up to pc->threads threads (pc NULL: the
 * defaults), passing every packet to sink(user, packets, n) in order; ps
 * (may be NULL) receives what it did. Returns 0 when all of `in` was
 * decoded, the sink's value when it returned non-zero (decoding stops; d is
 * then in an unspecified state: reset it before reuse), or SONDE_E_NOMEM
 * (nothing decoded). If threads cannot be started it decodes with fewer. */
int sonde_itm_decode_parallel(struct sonde_itm *d, const uint8_t *in, size_t len,
                              const struct sonde_itm_par_config *pc, sonde_itm_sink_fn sink,
                              void *user, struct sonde_itm_par_stats *ps);

/* Short lowercase name of a type as used in JSON: "sync", "overflow", "sw",
 * "lts", "gts", "page", "ext", "pc", "pc_sleep", "exc", "evcnt", "dt_pc",
 * "dt_match", "dt_addr", "dt_data", "hw", "skip". "?" if out of range. */
const char *sonde_itm_type_name(unsigned type);

/* Cortex-M exception name for a number: "Thread", "Reset", "NMI",
 * "HardFault", "MemManage", "BusFault", "UsageFault", "SecureFault",
 * "SVCall", "DebugMonitor", "PendSV", "SysTick", then "IRQ<n>" written into
 * buf (n = number - 16). Reserved numbers give "Reserved<n>". Returns buf or a
 * static string. */
const char *sonde_itm_exception_name(unsigned number, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
