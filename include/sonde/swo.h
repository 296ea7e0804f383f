/* Sonde: SWO capture on the host (src/swo) — byte sources, SWO line decoding
 * from logic-analyzer samples, and TPIU formatter removal.
 *
 * The three stages are independent and compose left to right:
 *
 *   bytes from a pin      source (file, -, tcp:, serial:)  sonde_swo_source_*
 *   samples from a LA  -> line decoder (UART NRZ / Manchester) sonde_swo_line_*
 *   TPIU-formatted     -> deformatter (16-byte frames, IDs)  sonde_swo_tpiu_*
 *   -> ITM/DWT bytes for src/itm
 *
 * Specifications implemented:
 *   - ARM CoreSight Architecture Specification v2.0 (IHI 0029), "Trace
 *     Formatter": 16-byte frames, full/half synchronisation, ID changes and
 *     the auxiliary byte.
 *   - ARM CoreSight Components TRM (DDI 0314), TPIU "Physical pin protocol":
 *     SWO Manchester (0 = LOW-HIGH, 1 = HIGH-LOW, idle LOW, start bit is a
 *     logic 1, stop = line held LOW) and SWO UART (NRZ 8N1, idle HIGH).
 *
 * Conventions: every function returning int/ptrdiff_t returns a value >= 0 on
 * success and a negative SONDE_E_* on failure; the handle then keeps a detail
 * string (sonde_swo_*_error_detail). Handles are opaque; _free(NULL) is a
 * no-op. Nothing here prints, exits or spawns. Decoders are streaming with
 * O(1) state: feed buffers of any size, split anywhere. Handles are not
 * thread-safe (one handle, one thread at a time). */
#ifndef SONDE_SWO_H
#define SONDE_SWO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sonde/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== 1. Byte sources ======================================================
 *
 * A source is named the way users type inputs on the command line:
 *   "PATH" or "file:PATH"     a regular file (or FIFO, device) read to EOF
 *   "-"                       standard input (not closed by _free)
 *   "tcp:HOST:PORT"           TCP client; HOST may be a name, IPv4, or
 *                             "[IPv6]". Raw SWO as served by OpenOCD's
 *                             `tpiu ... -output :PORT` / `itm` TCP port,
 *                             J-Link's SWO port 2332, orbuculum's 3443.
 *   "serial:DEVICE@BAUD"      a tty in raw mode 8N1 at any integer BAUD (Linux
 *                             termios2/BOTHER: 2000000, 12000000, 3141592...)
 *   "serial:DEVICE"           a tty in raw mode, baud left as it is
 * Reads pull bytes: sonde_swo_source_read() returns a count, 0 at EOF,
 * SONDE_E_AGAIN (non-blocking and nothing ready) or an error. */

enum sonde_swo_source_kind {
  SONDE_SWO_SOURCE_FILE = 1,
  SONDE_SWO_SOURCE_STDIN = 2,
  SONDE_SWO_SOURCE_TCP = 3,
  SONDE_SWO_SOURCE_SERIAL = 4,
  SONDE_SWO_SOURCE_FD = 5, /* sonde_swo_source_from_fd() */
};

struct sonde_swo_source_options {
  /* Never block in _read: return SONDE_E_AGAIN instead; poll() the fd from
   * sonde_swo_source_fd() for POLLIN. Default false (blocking). */
  bool nonblocking;
  /* TCP: how long connect() may take before SONDE_E_IO. 0 = 5000 ms. */
  unsigned connect_timeout_ms;
  /* TCP: when the server closes the connection (or refuses / resets it),
   * reconnect with exponential backoff instead of returning EOF. The byte
   * offset keeps counting across connections. Default false. */
  bool reconnect;
  /* TCP reconnect: give up (return EOF) after this many consecutive failed
   * attempts; 0 = never give up. */
  unsigned reconnect_max_attempts;
  /* TCP reconnect backoff: first wait and ceiling (doubling). 0 = 100 ms /
   * 5000 ms. */
  unsigned backoff_initial_ms, backoff_max_ms;
};

/* Fill `o` with the defaults described above. */
void sonde_swo_source_options_init(struct sonde_swo_source_options *o);

struct sonde_swo_source; /* opaque */

/* Open a source by name (see above). `opts` may be NULL for defaults.
 * On failure *out is NULL and, if `diag` is not NULL, it explains
 * ("tcp:localhost:3443: connection refused"). Errors: SONDE_E_ARG (malformed
 * name, bad baud), SONDE_E_IO (open/connect/termios failed; errno kept),
 * SONDE_E_UNSUPPORTED (a baud the platform cannot set), SONDE_E_NOMEM. */
int sonde_swo_source_open(const char *name, const struct sonde_swo_source_options *opts,
                          struct sonde_swo_source **out, struct sonde_diag *diag);

/* Wrap an already open fd (a pipe, a socket from elsewhere). `label` names it
 * in messages. With `take_ownership`, _free closes it. With opts->nonblocking
 * O_NONBLOCK is set on the fd. */
int sonde_swo_source_from_fd(int fd, const char *label, bool take_ownership,
                             const struct sonde_swo_source_options *opts,
                             struct sonde_swo_source **out);

/* Close (unless stdin or a not-owned fd) and free. NULL is a no-op. */
void sonde_swo_source_free(struct sonde_swo_source *s);

/* Read up to `cap` bytes into `buf`. Returns the count (> 0), 0 at end of
 * input (file end, TCP peer closed without reconnect, reconnect attempts
 * exhausted, serial hang-up), SONDE_E_AGAIN (non-blocking only), or
 * SONDE_E_IO. EINTR is retried internally. With reconnect, a read that finds
 * the connection gone reconnects (blocking: sleeps through the backoff;
 * non-blocking: returns SONDE_E_AGAIN while waiting, and _fd() returns -1 —
 * call _read again after sonde_swo_source_retry_ms() milliseconds; the
 * connection attempt itself may block up to connect_timeout_ms). */
ptrdiff_t sonde_swo_source_read(struct sonde_swo_source *s, void *buf, size_t cap);

/* The descriptor to poll() for POLLIN, or -1 while a TCP source is between
 * connections. It can change after a reconnect: fetch it before every poll. */
int sonde_swo_source_fd(const struct sonde_swo_source *s);
/* Non-blocking reconnect: milliseconds until the next attempt is due (0 if
 * connected or due now). */
unsigned sonde_swo_source_retry_ms(const struct sonde_swo_source *s);

/* Bytes delivered by _read so far (the offset of the next byte). */
uint64_t sonde_swo_source_offset(const struct sonde_swo_source *s);
/* Successful reconnections so far (TCP with reconnect). */
uint64_t sonde_swo_source_reconnects(const struct sonde_swo_source *s);
enum sonde_swo_source_kind sonde_swo_source_get_kind(const struct sonde_swo_source *s);
/* The name as given to _open (or the label). Never NULL. */
const char *sonde_swo_source_name(const struct sonde_swo_source *s);
/* Serial: the baud actually set (BAUD from the name, or as read back); 0 for
 * other kinds. */
uint32_t sonde_swo_source_baud(const struct sonde_swo_source *s);
/* Detail of the last error from this source. Never NULL. */
const char *sonde_swo_source_error_detail(const struct sonde_swo_source *s);

/* Split a "tcp:HOST:PORT" / "serial:DEVICE@BAUD" name without opening it
 * (for CLI validation and messages). Writes the kind; for TCP host (NUL-
 * terminated, brackets removed) and port; for serial the device and baud (0
 * if absent). Buffers may be NULL if not wanted. SONDE_E_ARG if malformed. */
int sonde_swo_source_parse_name(const char *name, enum sonde_swo_source_kind *kind,
                                char *host_or_dev, size_t host_or_dev_cap,
                                uint16_t *port, uint32_t *baud);

/* ==== 2. SWO line decoding from logic-analyzer samples =====================
 *
 * Input: one byte per sample, bit n = channel n (the layout `sigrok-cli -O
 * binary` writes for up to 8 channels). One channel carries SWO.
 *
 * UART (NRZ, SPPR=2): 8N1, LSB first, idle HIGH. The decoder resynchronises
 * on every start-bit falling edge and samples each bit at its centre, so it
 * works from 3 samples per bit and tolerates +-3% baud error (more at higher
 * oversampling). A LOW stop bit is a framing error: the byte is dropped,
 * counted, reported with its sample offset, and the decoder waits for the
 * line to go HIGH before looking for the next start bit.
 *
 * Manchester (SPPR=1): each bit is two half-bit periods, 0 = LOW-HIGH,
 * 1 = HIGH-LOW; idle LOW; a packet is a start bit (logic 1), 1..8 data bytes
 * LSB first, then the line held LOW (not a valid symbol) as stop. The decoder
 * re-times on every mid-bit transition. Packets whose bit count is not a
 * multiple of 8 lose the partial byte (counted as a framing error). Needs
 * >= 2 samples per half-bit (4 per bit).
 *
 * Auto-detection (baud 0 and/or mode AUTO): the decoder buffers up to
 * `detect_window` samples (allocated once at _new), finds the shortest pulse
 * width shared by at least 2% of the LOW pulses (all pulses if fewer than 16
 * are LOW; a HIGH pulse that ends a UART frame holds the gap to the next one,
 * which a fast transmitter shortens; shorter ones are glitches),
 * refines it over all pulses near whole multiples of it, and tells the
 * encodings apart by the idle level (the level of the longest run: HIGH =
 * UART, LOW = Manchester) and by HIGH pulses >= 2.5 half-bits (UART only), then
 * decodes the buffered samples and carries on streaming. Detection is tried
 * every 64 Ki samples once 2000 pulses were seen, else when the window is
 * full or at _finish. Until it completes _feed produces no bytes. A detected
 * rate may give down to 2.8 samples per bit (a fast transmitter). */

enum sonde_swo_line_mode {
  SONDE_SWO_LINE_AUTO = 0,
  SONDE_SWO_LINE_UART = 1,       /* TPIU_SPPR = 2, "NRZ" */
  SONDE_SWO_LINE_MANCHESTER = 2, /* TPIU_SPPR = 1 */
};

struct sonde_swo_line_config {
  enum sonde_swo_line_mode mode; /* AUTO: decide from the idle level */
  uint32_t baud;                 /* bits per second; 0 = auto-detect */
  uint64_t sample_rate_hz;       /* required, > 0 */
  unsigned channel;              /* 0..7: which bit of each sample byte */
  bool invert;                   /* the line is inverted (buffer/level shifter) */
  /* Auto-detection buffer in samples; 0 = 4 Mi samples. Ignored if both mode
   * and baud are given. */
  size_t detect_window;
  /* UART: re-time on every edge inside a frame, so a transmitter whose clock
   * is up to 5% off still decodes at 8 samples per bit (slower). Always on
   * when the baud is detected. */
  bool retime;
};

/* Parse "uart:BAUD", "manchester:BAUD", "uart", "manchester", "auto",
 * "uart:auto", "auto:BAUD" (also "nrz" for uart) into cfg->mode and cfg->baud
 * (other fields untouched). BAUD accepts a plain integer or a k/M suffix
 * ("2M", "115.2k"). SONDE_E_ARG on anything else; `diag` may be NULL. */
int sonde_swo_line_parse_spec(const char *spec, struct sonde_swo_line_config *cfg,
                              struct sonde_diag *diag);
/* Parse a sample rate: "24000000", "24M", "24MHz", "1.5G", "500k". Returns 0
 * and sets *hz, or SONDE_E_ARG. */
int sonde_swo_parse_rate(const char *text, uint64_t *hz);

/* Defaults: mode AUTO, baud 0, sample_rate_hz 0 (must be set), channel 0. */
void sonde_swo_line_config_init(struct sonde_swo_line_config *cfg);

/* One reported line error. Delivered through the callback set with
 * sonde_swo_line_set_error_callback() as it happens (rare path). */
enum sonde_swo_line_error_kind {
  SONDE_SWO_LINE_ERR_FRAMING = 1,  /* UART stop bit LOW / Manchester partial byte */
  SONDE_SWO_LINE_ERR_BREAK = 2,    /* UART: line LOW for a whole frame and more */
  SONDE_SWO_LINE_ERR_GLITCH = 3,   /* pulse too short / Manchester invalid symbol */
};
struct sonde_swo_line_error {
  enum sonde_swo_line_error_kind kind;
  uint64_t sample_offset;     /* sample index (from the first fed) where the unit began */
  uint64_t byte_offset;       /* decoded bytes output before it */
};
typedef void (*sonde_swo_line_error_fn)(void *ctx, const struct sonde_swo_line_error *e);

struct sonde_swo_line_stats {
  uint64_t samples;             /* samples consumed */
  uint64_t bytes;               /* bytes output */
  uint64_t framing_errors;      /* units dropped (see error kinds) */
  uint64_t breaks;
  uint64_t glitches;
  uint64_t packets;             /* Manchester: start bits seen; UART: = bytes + framing errors */
  uint64_t first_error_sample;  /* sample offset of the first error, UINT64_MAX if none */
  uint64_t last_error_sample;   /* ... of the last error, UINT64_MAX if none */
  enum sonde_swo_line_mode mode; /* in use (AUTO until detected) */
  uint32_t baud;                /* in use: configured or detected (0 until detected) */
  double samples_per_bit;       /* in use, from sample_rate_hz / baud (or measured) */
  bool detected;                /* mode and baud are known */
};

struct sonde_swo_line; /* opaque */

/* SONDE_E_ARG: channel > 7, sample_rate 0, fewer than 3 samples per bit for
 * UART or 4 for Manchester (message gives the figure). */
int sonde_swo_line_new(const struct sonde_swo_line_config *cfg, struct sonde_swo_line **out,
                       struct sonde_diag *diag);
void sonde_swo_line_free(struct sonde_swo_line *l);
/* Start over as if new (keeps config and callback, clears statistics). */
void sonde_swo_line_reset(struct sonde_swo_line *l);
void sonde_swo_line_set_error_callback(struct sonde_swo_line *l, sonde_swo_line_error_fn fn,
                                       void *ctx);

/* Decode `n` samples. Decoded bytes go to `out` (capacity `cap`); returns the
 * number written. If `out` fills, decoding stops early and *consumed < n:
 * call again with the rest. *consumed may be NULL only if cap >=
 * sonde_swo_line_out_bound(l, n), which guarantees all samples are consumed.
 * Never fails for any sample content (bad waveforms only raise counters). */
size_t sonde_swo_line_feed(struct sonde_swo_line *l, const uint8_t *samples, size_t n,
                           size_t *consumed, uint8_t *out, size_t cap);
/* Output capacity that guarantees one _feed (or _finish) consumes all `n`
 * samples, including bytes released by an auto-detection that completes in
 * it. Depends only on `n` and the configuration (not on the state), so it
 * can be computed once after _new. */
size_t sonde_swo_line_out_bound(const struct sonde_swo_line *l, size_t n);
/* End of samples: completes auto-detection on what was buffered and flushes
 * a Manchester packet cut by the end (whole bytes only). Same out contract;
 * call until it returns 0. */
size_t sonde_swo_line_finish(struct sonde_swo_line *l, uint8_t *out, size_t cap);

void sonde_swo_line_get_stats(const struct sonde_swo_line *l, struct sonde_swo_line_stats *st);
const char *sonde_swo_line_error_detail(const struct sonde_swo_line *l);

/* One-shot detection on a buffer (no state): the mode (from the idle level
 * unless `mode_hint` is not AUTO) and baud. SONDE_E_FORMAT if the buffer has
 * too few edges (< 16) to decide. The baud is rounded to a common SWO rate
 * (115200, 1 M, 2 M, 12 M, ...) when within 1%, else the measured rate. */
int sonde_swo_line_detect(const uint8_t *samples, size_t n, unsigned channel,
                          uint64_t sample_rate_hz, enum sonde_swo_line_mode mode_hint,
                          enum sonde_swo_line_mode *mode, uint32_t *baud);

/* ==== 3. TPIU deformatter ===================================================
 *
 * Removes the CoreSight trace formatter (TPIU_FFCR.EnFCont = 1): 16-byte
 * frames aligned after a full synchronisation packet FF FF FF 7F. In each
 * frame, even bytes 0,2,..,14 are either an ID change (bit 0 = 1, ID = bits
 * 7:1) or data whose bit 0 is in the auxiliary byte 15 (bit k for byte 2k);
 * odd bytes 1..13 are data. For an ID change the auxiliary bit says when it
 * takes effect: 0 = immediately (byte 2k+1 belongs to the new ID), 1 = after
 * the next data byte (byte 2k+1 still belongs to the previous ID). ID 0x00 is
 * null (data dropped), 0x7F with data 0x7F at an even/odd pair is a half
 * synchronisation (FF 7F, dropped), 0x70-0x7F reserved (data dropped,
 * counted). A full sync found at a position that is not a frame boundary
 * means lost alignment: the partial frame is dropped, counted and reported
 * with its offset, and framing restarts after the sync. Until the first full
 * sync, bytes are skipped (unless `assume_aligned`). */

#define SONDE_SWO_TPIU_ID_ALL (-1) /* select every ID (use out_ids to tell them apart) */
#define SONDE_SWO_TPIU_ID_ITM 1    /* the usual ATB ID of the ITM */

struct sonde_swo_tpiu_config {
  int id;               /* stream to output, 1..0x6F, or SONDE_SWO_TPIU_ID_ALL; default 1 */
  bool assume_aligned;  /* treat byte 0 as a frame start before any sync */
  int initial_id;       /* ID in effect before the first ID change; default 0 (null) */
};
void sonde_swo_tpiu_config_init(struct sonde_swo_tpiu_config *cfg);

enum sonde_swo_tpiu_event_kind {
  SONDE_SWO_TPIU_EV_SYNC = 1,      /* first full sync: aligned */
  SONDE_SWO_TPIU_EV_RESYNC = 2,    /* full sync off a frame boundary: `lost` bytes dropped */
  SONDE_SWO_TPIU_EV_RESERVED = 3,  /* data under a reserved ID (0x70-0x7F) dropped */
  SONDE_SWO_TPIU_EV_UNSYNCED = 4,  /* `lost` bytes skipped before the first sync */
};
struct sonde_swo_tpiu_event {
  enum sonde_swo_tpiu_event_kind kind;
  uint64_t offset; /* input byte offset where the dropped bytes / event begin */
  uint64_t lost;   /* input bytes dropped */
};
typedef void (*sonde_swo_tpiu_event_fn)(void *ctx, const struct sonde_swo_tpiu_event *e);

struct sonde_swo_tpiu_stats {
  uint64_t in_bytes;          /* bytes fed */
  uint64_t frames;            /* complete frames decoded */
  uint64_t full_syncs;        /* FF FF FF 7F packets */
  uint64_t half_syncs;        /* FF 7F pairs inside frames */
  uint64_t resyncs;           /* full syncs off a frame boundary (corruption) */
  uint64_t lost_bytes;        /* input bytes dropped (unsynced, partial frames) */
  uint64_t reserved_bytes;    /* data bytes under IDs 0x70..0x7F */
  uint64_t null_bytes;        /* data bytes under ID 0 */
  uint64_t out_bytes;         /* bytes written to out */
  uint64_t id_changes;
  uint64_t bytes_per_id[128]; /* data bytes seen per ID (all IDs, selected or not) */
  int current_id;             /* -1 before any */
  bool synced;
};

struct sonde_swo_tpiu; /* opaque */

int sonde_swo_tpiu_new(const struct sonde_swo_tpiu_config *cfg, struct sonde_swo_tpiu **out);
void sonde_swo_tpiu_free(struct sonde_swo_tpiu *t);
void sonde_swo_tpiu_reset(struct sonde_swo_tpiu *t); /* keeps config and callback */
void sonde_swo_tpiu_set_event_callback(struct sonde_swo_tpiu *t, sonde_swo_tpiu_event_fn fn,
                                       void *ctx);

/* Output capacity one _feed of `n` bytes may need: a frame completed by
 * this call may include up to 15 bytes carried over from earlier calls. */
#define SONDE_SWO_TPIU_OUT_MAX(n) ((n) + 15u)

/* Deformat `n` input bytes (split anywhere). Data bytes of the selected
 * ID(s) are written to `out`, which must hold SONDE_SWO_TPIU_OUT_MAX(n)
 * bytes (over a whole stream, output never exceeds input). If `out_ids` is
 * not NULL it receives the ID of each output byte (same capacity rule).
 * Returns the number of bytes written.
 * All input is always consumed; never fails on any input. Output lags input
 * by up to one frame (a frame is decoded when its auxiliary byte arrives). */
size_t sonde_swo_tpiu_feed(struct sonde_swo_tpiu *t, const uint8_t *in, size_t n,
                           uint8_t *out, uint8_t *out_ids);

void sonde_swo_tpiu_get_stats(const struct sonde_swo_tpiu *t, struct sonde_swo_tpiu_stats *st);

/* Parse the argument of `--tpiu[=ID]`: NULL or "" -> 1; "all" -> ID_ALL;
 * decimal or 0x hex 1..0x6F. SONDE_E_ARG otherwise. */
int sonde_swo_tpiu_parse_id(const char *text, int *id);

#ifdef __cplusplus
}
#endif
#endif
