/* Sonde: ground-truth trace files (src/trace) — the PC trace (which
 * instruction occupied every cycle) and the LSU trace (every data transfer),
 * as written by `sonde run --trace-pc/--trace-lsu` and read back by the
 * analyses. Formats: docs/formats.md, "PC trace" and "LSU trace".
 *
 * Writers stream to a caller-owned FILE (never closed by the library) through
 * an internal buffer; call _finish() to flush and learn about write errors.
 * Readers pull from a FILE or a memory buffer and report bad input with the
 * byte offset in _error_detail(). All functions return 0 (or 1 from _next)
 * on success and a negative SONDE_E_* on failure; errors are sticky. */
#ifndef SONDE_TRACE_H
#define SONDE_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sonde/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- PC trace --------------------------------------------------------- */

enum sonde_pctrace_format {
  SONDE_PCTRACE_BINARY = 0, /* "SONDEPCT" version 1 */
  SONDE_PCTRACE_CSV = 1,    /* header `cycle,pc`, one row per cycle */
};

/* What occupied a span of cycles. The values are the binary format's span
 * kinds (docs/formats.md); SONDE_PCTRACE_INSN is an instruction. */
enum sonde_pctrace_kind {
  SONDE_PCTRACE_INSN = 0,
  SONDE_PCTRACE_SLEEP = 1,      /* WFI/WFE */
  SONDE_PCTRACE_EXC_ENTRY = 2,  /* exception entry (stacking, vector fetch) */
  SONDE_PCTRACE_EXC_RETURN = 3, /* exception return (unstacking) */
  SONDE_PCTRACE_TAIL_CHAIN = 4, /* tail-chain into another handler */
  SONDE_PCTRACE_HALTED = 5,     /* core halted (debug) */
  SONDE_PCTRACE_UNKNOWN = 6,    /* not known (a reconstructed trace's unrecoverable cycles) */
};
#define SONDE_PCTRACE_EXC_MAX 0xFFFFFFu /* exception numbers fit in 24 bits */

struct sonde_pctrace_record {
  uint64_t cycle;   /* first cycle of the span */
  uint32_t cycles;  /* length, >= 1 */
  enum sonde_pctrace_kind kind;
  uint32_t pc;      /* instruction address (kind == SONDE_PCTRACE_INSN), else 0 */
  uint32_t exc;     /* exception number (entry, return, tail-chain), else 0 */
};

struct sonde_pctrace_writer; /* opaque */

/* Start a PC trace on `f` (owned by the caller, left open). `clock_hz` may be
 * 0 (unknown); `first_cycle` is the cycle number of the first record. The
 * binary header is written at once. `name` (a file name, may be NULL) is used
 * in messages. */
int sonde_pctrace_writer_new(FILE *f, const char *name, enum sonde_pctrace_format format,
                             uint64_t clock_hz, uint64_t first_cycle,
                             struct sonde_pctrace_writer **out);
/* An instruction at `pc` (even) occupying the next `cycles` (>= 1) cycles. */
int sonde_pctrace_write(struct sonde_pctrace_writer *w, uint32_t pc, uint32_t cycles);
/* A span that is not an instruction (kind != SONDE_PCTRACE_INSN). */
int sonde_pctrace_write_span(struct sonde_pctrace_writer *w, enum sonde_pctrace_kind kind,
                             uint32_t exc, uint32_t cycles);
/* The cycle number the next record will start at. */
uint64_t sonde_pctrace_writer_cycle(const struct sonde_pctrace_writer *w);
/* Flush buffered records to the FILE (and fflush it). */
int sonde_pctrace_writer_finish(struct sonde_pctrace_writer *w);
/* Free without flushing anything further (call _finish first). NULL is a no-op. */
void sonde_pctrace_writer_free(struct sonde_pctrace_writer *w);
const char *sonde_pctrace_writer_error_detail(const struct sonde_pctrace_writer *w);

struct sonde_pctrace_reader; /* opaque */

/* Read a PC trace from `f` (owned by the caller) or from a memory buffer
 * (`data` must outlive the reader). The format (binary or CSV) is detected
 * from the first bytes. `name` is used in messages. An empty or unrecognised
 * input fails here with SONDE_E_FORMAT / SONDE_E_TRUNCATED / SONDE_E_UNSUPPORTED
 * (version) and, when `diag` is not NULL, the reason in it. */
int sonde_pctrace_reader_new(FILE *f, const char *name, struct sonde_pctrace_reader **out,
                             struct sonde_diag *diag);
int sonde_pctrace_reader_new_buffer(const void *data, size_t len, const char *name,
                                    struct sonde_pctrace_reader **out, struct sonde_diag *diag);
/* The next record: returns 1 and fills *rec, 0 at the end of the trace, or a
 * negative error (SONDE_E_TRUNCATED: input ends inside a record; SONDE_E_FORMAT:
 * corrupt; SONDE_E_IO), with the byte offset in the error detail.
 * CSV: consecutive rows with the same `pc` column are returned as one record
 * (CSV cannot tell one 2-cycle instruction from two 1-cycle ones). */
int sonde_pctrace_next(struct sonde_pctrace_reader *r, struct sonde_pctrace_record *rec);
enum sonde_pctrace_format sonde_pctrace_reader_format(const struct sonde_pctrace_reader *r);
uint64_t sonde_pctrace_reader_clock_hz(const struct sonde_pctrace_reader *r); /* 0: unknown */
uint64_t sonde_pctrace_reader_first_cycle(const struct sonde_pctrace_reader *r);
const char *sonde_pctrace_reader_error_detail(const struct sonde_pctrace_reader *r);
void sonde_pctrace_reader_free(struct sonde_pctrace_reader *r); /* NULL is a no-op */

/* ---- What a PC sample at cycle T shows -------------------------------------
 *
 * The one mapping from a ground-truth PC trace to what a DWT PC sample (and
 * a DWT_PCSR read, `monitor pcsr`) at cycle T shows; the VM's samples follow
 * it exactly (docs/vm.md, "Which PC a sample carries"):
 *   - T inside an instruction's cycles: that instruction's address;
 *   - T in a sleep span (WFI/WFE): the sleep form (packet 0x15 0x00);
 *   - T in an exception entry, tail-chain or exception return span: no
 *     instruction is in Execute; the PC sampling register still holds the
 *     last instruction that entered it, so the address of the last
 *     instruction that started before T;
 *   - T in a halted span, or before any instruction: no address (DWT_PCSR
 *     reads 0xFFFFFFFF). */
enum sonde_pcsample_kind {
  SONDE_PCSAMPLE_PC = 0,    /* `pc` holds the address */
  SONDE_PCSAMPLE_SLEEP = 1, /* the core sleeps: the sleep form */
  SONDE_PCSAMPLE_NONE = 2,  /* no address (halted, or no instruction yet) */
};

struct sonde_pcsample {
  uint64_t cycle;                /* T */
  enum sonde_pcsample_kind kind;
  uint32_t pc;                   /* SONDE_PCSAMPLE_PC: the address, else 0 */
};

/* The sample at `cycle` given the record `rec` that contains it (rec->cycle
 * <= cycle < rec->cycle + rec->cycles) and the address of the last
 * instruction record before `rec` (have_prev false: none). A pure function:
 * the rule above. */
struct sonde_pcsample sonde_pcsample_of(const struct sonde_pctrace_record *rec, uint64_t cycle,
                                        bool have_prev, uint32_t prev_pc);

/* The same over a whole trace, for cycles in increasing order: a projector
 * pulls records from `r` (owned by the caller, must outlive it) as needed. */
struct sonde_pcsample_projector; /* opaque */
int sonde_pcsample_projector_new(struct sonde_pctrace_reader *r,
                                 struct sonde_pcsample_projector **out);
/* 1 and *out filled; 0 when `cycle` lies after the end of the trace;
 * SONDE_E_ARG when `cycle` is below the previous call's or before the
 * trace's first cycle; a reader error (negative) as sonde_pctrace_next. */
int sonde_pcsample_at(struct sonde_pcsample_projector *p, uint64_t cycle,
                      struct sonde_pcsample *out);
void sonde_pcsample_projector_free(struct sonde_pcsample_projector *p); /* NULL: no-op */

/* ---- LSU trace (CSV) ---------------------------------------------------- */

struct sonde_lsutrace_record {
  uint64_t cycle;
  uint32_t pc, addr, value;
  unsigned size; /* 1, 2 or 4 */
  bool write;
  bool stacking;  /* exception stacking/unstacking (rw `W`/`R`); pc = return address */
  /* Read only (FrankenTrace's LSU output): rw `gap`, an ITM overflow may
   * have lost transfers of the range at addr in the `value` cycles from
   * `cycle`; cycle UINT64_MAX: not placed on a PC trace; pc 0xFFFFFFFF:
   * unknown. */
  bool gap;
};

struct sonde_lsutrace_writer; /* opaque */

/* Start an LSU trace on `f` (owned by the caller): writes the CSV header. */
int sonde_lsutrace_writer_new(FILE *f, const char *name, struct sonde_lsutrace_writer **out);
int sonde_lsutrace_write(struct sonde_lsutrace_writer *w, const struct sonde_lsutrace_record *rec);
int sonde_lsutrace_writer_finish(struct sonde_lsutrace_writer *w);
void sonde_lsutrace_writer_free(struct sonde_lsutrace_writer *w); /* NULL is a no-op */
const char *sonde_lsutrace_writer_error_detail(const struct sonde_lsutrace_writer *w);

struct sonde_lsutrace_reader; /* opaque */

int sonde_lsutrace_reader_new(FILE *f, const char *name, struct sonde_lsutrace_reader **out,
                              struct sonde_diag *diag);
int sonde_lsutrace_reader_new_buffer(const void *data, size_t len, const char *name,
                                     struct sonde_lsutrace_reader **out, struct sonde_diag *diag);
/* 1 and *rec filled, 0 at the end, or a negative error (detail: line, offset). */
int sonde_lsutrace_next(struct sonde_lsutrace_reader *r, struct sonde_lsutrace_record *rec);
const char *sonde_lsutrace_reader_error_detail(const struct sonde_lsutrace_reader *r);
void sonde_lsutrace_reader_free(struct sonde_lsutrace_reader *r); /* NULL is a no-op */

#ifdef __cplusplus
}
#endif
#endif
