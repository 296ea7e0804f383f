/* Sonde: decode a Micro Trace Buffer (src/mtb) — the branch packets an MTB
 * (Cortex-M0+ MTB-M0+, Cortex-M33 MTB-M33) wrote into SRAM, and the full
 * instruction history rebuilt from them with the firmware ELF.
 *
 * Specifications followed:
 *   - ARM CoreSight MTB-M0+ TRM (DDI 0486B) 3.2 "Trace packet format" and
 *     3.3 POSITION/MASTER; Cortex-M33 TRM (100230) MTB chapter.
 *   - Thumb-2 instruction length (ARMv7-M/ARMv8-M ARM A5.1): a halfword whose
 *     top five bits are 0b11101, 0b11110 or 0b11111 starts a 32-bit
 *     instruction; every other halfword is a 16-bit instruction.
 *
 * Packets. Each packet is 8 bytes: word 0 the source address with the A-bit
 * in bit 0, word 1 the destination with the S-bit in bit 0.
 *   - A=0: a taken branch, source = the branch instruction.
 *   - A=1, source not an EXC_RETURN (0xFxxxxxxx): exception entry; source =
 *     the last instruction retired before the entry, destination = the
 *     handler's first instruction (src/vm/dbg_mtb.c, docs/vm.md "MTB").
 *   - exception return, two packets: (return instruction -> EXC_RETURN), then
 *     (EXC_RETURN with A=1 -> the instruction returned to, or the next
 *     handler when tail-chaining).
 *   - S=1: the first packet after MASTER.EN went from 0 to 1 (a trace
 *     session start; what ran before it in the buffer is not contiguous).
 * The buffer is a circle of 2^(MASTER.MASK+4) bytes; POSITION.POINTER is the
 * byte offset of the next write and POSITION.WRAP says the circle wrapped, so
 * the oldest packet is at POINTER when WRAP is set, else at offset 0.
 *
 * Rebuilding. Between the destination of one packet and the source of the
 * next, the core ran sequentially: the decoder walks the ELF's code from the
 * one to the other, one instruction length at a time. A source that this walk
 * does not reach (past it, out of the image, more than SONDE_MTB_MAX_RUN
 * bytes away) is an inconsistent packet: it is reported with its index and
 * both addresses and the history restarts at that source (a `gap` event), so
 * one bad packet does not hide the rest.
 *
 * Errors: negative SONDE_E_* (common.h) with a message in the sonde_diag. */
#ifndef SONDE_MTB_H
#define SONDE_MTB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sonde/common.h"
#include "sonde/sym.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Longest sequential run between two packets that the decoder walks. */
#define SONDE_MTB_MAX_RUN (1u << 20)

/* ---- packets ----------------------------------------------------------- */

struct sonde_mtb_packet {
  uint32_t src;    /* source, bit 0 cleared */
  uint32_t dst;    /* destination, bit 0 cleared */
  bool a;          /* A-bit: exception entry or the second half of a return */
  bool s;          /* S-bit: first packet of a trace session */
  uint32_t offset; /* byte offset of the packet in the buffer */
};

/* A raw buffer as read from the target, with the registers that describe it. */
struct sonde_mtb_raw {
  const void *buf;  /* the bytes from MTB_BASE on */
  size_t len;       /* bytes in buf */
  uint32_t base;    /* MTB_BASE (target address of buf[0]) */
  uint32_t position; /* MTB_POSITION: POINTER[31:3], WRAP[2] */
  uint32_t master;  /* MTB_MASTER: MASK[4:0] gives the circle size */
  bool have_master; /* false: the circle is the whole buffer (len bytes) */
};

/* True for an EXC_RETURN value (0xFxxxxxxx, bit 0 ignored). */
static inline bool sonde_mtb_is_exc_return(uint32_t a) { return (a & 0xF0000000u) == 0xF0000000u; }

/* The circle size in bytes the registers describe: 2^(MASK+4) with MASTER,
 * else len. Checks the buffer against the registers: SONDE_E_TRUNCATED when
 * len is not a multiple of 8 or smaller than the circle, SONDE_E_FORMAT when
 * len is not a power of two >= 16 (without MASTER), SONDE_E_RANGE when
 * POSITION.POINTER lies outside the circle (an absolute address in
 * [base, base + size) is accepted as the same offset). */
int sonde_mtb_geometry(const struct sonde_mtb_raw *raw, uint32_t *size, uint32_t *pointer,
                       struct sonde_diag *d);

/* The packets oldest first into a malloc'd array (*out, free() it; NULL when
 * *n is 0). Without WRAP only [0, POINTER) holds packets. */
int sonde_mtb_packets(const struct sonde_mtb_raw *raw, struct sonde_mtb_packet **out, size_t *n,
                      struct sonde_diag *d);

/* ---- instruction history ----------------------------------------------- */

enum sonde_mtb_kind {
  SONDE_MTB_INSN,      /* an instruction that retired: pc, size */
  SONDE_MTB_BRANCH,    /* a taken branch: pc (the branch) -> dst */
  SONDE_MTB_EXC_ENTRY, /* exception entry: pc (the interrupted instruction, not run) -> dst */
  SONDE_MTB_EXC_RETURN, /* exception return: pc (return instruction), exc_return -> dst */
  SONDE_MTB_SESSION,   /* a trace session starts (S-bit): what precedes is not contiguous */
  SONDE_MTB_GAP,       /* an inconsistent packet: the history restarts at pc */
};

struct sonde_mtb_event {
  uint8_t kind;        /* enum sonde_mtb_kind */
  uint8_t size;        /* SONDE_MTB_INSN: 2 or 4 */
  uint32_t pc;
  uint32_t dst;        /* branch and exception events */
  uint32_t exc_return; /* SONDE_MTB_EXC_RETURN: the EXC_RETURN value */
  uint32_t packet;     /* index of the packet the event comes from (or that ends the run) */
  bool tail_chain;     /* SONDE_MTB_EXC_RETURN: dst is a handler in the vector table: the
                        * return chained into the next exception instead of the thread */
};

/* An inconsistent packet. */
struct sonde_mtb_issue {
  uint32_t packet; /* its index, oldest = 0 */
  uint32_t from;   /* where the sequential walk started (previous destination) */
  uint32_t to;     /* the source the walk should have reached */
  char why[96];    /* "source not reached sequentially", "0x... is not in the ELF", ... */
};

struct sonde_mtb_history {
  struct sonde_mtb_event *ev; /* oldest first */
  size_t n;
  struct sonde_mtb_issue *issues;
  size_t nissues;
  size_t packets;      /* packets decoded */
  size_t instructions; /* SONDE_MTB_INSN events */
  size_t in_image;     /* packet addresses (sources and destinations) found in the ELF */
  size_t addresses;    /* packet addresses that should be code (not EXC_RETURN) */
};

struct sonde_mtb_options {
  /* Where the core stopped after the last packet (the instruction that
   * cleared MASTER.EN, or the halt PC): the history then runs on
   * sequentially from the last destination through end_pc. 0 = unknown:
   * the history ends with the last destination. */
  uint32_t end_pc;
  /* The vector table in the ELF (VTOR; default 0): a return pair whose
   * destination is one of its handlers is marked tail_chain. Entries are
   * read while the ELF has them, at most 256. */
  uint32_t vectors;
};

/* Rebuild the history of `n` packets (oldest first) with the code of `sym`.
 * Needs the ELF for instruction lengths: SONDE_E_ARG without it. Returns 0
 * (inconsistencies are in out->issues, not errors) or SONDE_E_NOMEM; on
 * failure out is empty. opt may be NULL. */
int sonde_mtb_rebuild(const struct sonde_mtb_packet *p, size_t n, const struct sonde_sym *sym,
                      const struct sonde_mtb_options *opt, struct sonde_mtb_history *out,
                      struct sonde_diag *d);
void sonde_mtb_history_free(struct sonde_mtb_history *h);

/* ---- post-mortem bundle (docs/formats.md "MTB post-mortem bundle") ------ */

#define SONDE_MTB_BUNDLE_VERSION 2    /* written; versions 1 and 2 are read */
#define SONDE_MTB_BUNDLE_HEADER 320   /* v2: bytes before the trace buffer */
#define SONDE_MTB_BUNDLE_HEADER_V1 128
#define SONDE_MTB_BUILD_ID_MAX 20     /* bytes of build id a bundle carries */
#define SONDE_MTB_REGS_CORE (1u << 0) /* v2: r4-r11, MSP, PSP valid */
#define SONDE_MTB_REGS_FPU (1u << 1)  /* v2: S0-S31, FPSCR valid (FPU present and on) */
#define SONDE_MTB_REGS_SPLIM (1u << 2) /* v2: MSPLIM, PSPLIM valid (ARMv8-M) */

struct sonde_mtb_bundle {
  unsigned version;         /* 1 or 2 */
  unsigned arch;            /* 6 = ARMv6-M (M0+), 8 = ARMv8-M Mainline (M33) */
  struct sonde_mtb_raw raw; /* buf points into the bundle's bytes */
  uint32_t flow;            /* MTB FLOW */
  uint32_t exc_return;      /* LR on fault-handler entry */
  uint32_t frame[8];        /* stacked r0, r1, r2, r3, r12, lr, pc, xpsr */
  uint32_t cfsr, hfsr, mmfar, bfar, shcsr; /* 0 on ARMv6-M */
  uint32_t ipsr;            /* the exception being handled (3 = HardFault) */
  uint32_t stack_addr;      /* where the stack slice starts (the frame) */
  const uint8_t *stack;     /* into the bundle's bytes */
  size_t stack_len;
  uint8_t build_id[SONDE_MTB_BUILD_ID_MAX]; /* the firmware's GNU build id */
  unsigned build_id_len;    /* bytes of build_id set; 0: none recorded (v1: 20 unless all zero) */
  /* version 2 (zero in a v1 bundle): */
  uint32_t flags;           /* SONDE_MTB_REGS_* */
  uint32_t r4_r11[8];
  uint32_t msp, psp;        /* on fault-handler entry (after stacking) */
  uint32_t control;
  uint32_t msplim, psplim;
  uint32_t fpscr;
  uint32_t s[32];           /* S0..S31 */
};

/* Parse a bundle (version 1 or 2): magic "SMTB", version, header size,
 * sizes, and the CRC-32 trailer are checked; SONDE_E_FORMAT / SONDE_E_TRUNCATED / SONDE_E_UNSUPPORTED with the
 * byte offset of what is wrong. Pointers in *out point into data. */
int sonde_mtb_bundle_parse(const void *data, size_t len, struct sonde_mtb_bundle *out,
                           struct sonde_diag *d);
/* Write b as a version-2 bundle (b->raw.buf/len = the buffer, b->stack/
 * stack_len the stack slice, a multiple of 4; b->version is ignored) into
 * out: returns the size (320 + buffer + stack + 4), or SONDE_E_RANGE when
 * cap is smaller. With out NULL only the size is returned. Used by `sonde
 * mtb fetch`. */
long sonde_mtb_bundle_write(const struct sonde_mtb_bundle *b, void *out, size_t cap);
/* CRC-32 (IEEE 802.3, reflected, as zlib's crc32) of n bytes, starting from crc (0). */
uint32_t sonde_mtb_crc32(uint32_t crc, const void *data, size_t n);
/* The set bits of CFSR and HFSR in words ("PRECISERR BFARVALID FORCED"),
 * "" when none; returns buf. */
const char *sonde_mtb_fault_words(uint32_t cfsr, uint32_t hfsr, char *buf, size_t cap);

/* ---- fault analysis (src/mtb/fault.c) ---------------------------------- */

struct sonde_mtb_site {
  uint32_t pc;      /* the instruction the entry interrupted: for a synchronous
                     * fault the faulting one (it did not retire) */
  uint32_t last;    /* the last instruction retired before the entry, as far as
                     * the history shows (0: not in it) */
  uint32_t handler; /* where the entry went */
  uint32_t packet;  /* index of the entry packet */
};
/* The newest exception entry of the history and the instruction it
 * interrupted (the entry packet's source). SONDE_E_NOTFOUND when the window
 * holds no entry. Lets the decoder check the stacked PC, or stand in for it when the
 * frame was not pushed (an ARMv8-M stack-limit fault). */
int sonde_mtb_entry_site(const struct sonde_mtb_history *h, const struct sonde_sym *sym,
                         struct sonde_mtb_site *out);
/* The newest branch or exception return of the history that went to pc (a
 * wild PC: the culprit), or NULL. */
const struct sonde_mtb_event *sonde_mtb_branch_to(const struct sonde_mtb_history *h, uint32_t pc);

/* The deepest call chain the history shows (src/mtb/calls.c): calls (BL,
 * BLX) and exception entries push a frame, returns (POP/LDM with pc, BX lr,
 * LDR pc) and exception returns pop one; a pop with no frame pushed in the
 * window reveals a frame that was live when the window began (the function
 * returned from, and the caller it returned to). fn[] holds the function
 * start addresses, outermost first (what called fn[0] is older than the
 * window); tail calls are not followed. Stops at the first session start or
 * gap. A deep or recursive chain points at a stack overflow. */
struct sonde_mtb_chain {
  uint32_t *fn;
  size_t n;
};
int sonde_mtb_deepest_chain(const struct sonde_mtb_history *h, struct sonde_sym *sym,
                            struct sonde_mtb_chain *out);
void sonde_mtb_chain_free(struct sonde_mtb_chain *c);

enum {
  SONDE_MTB_ID_MATCH,           /* the bundle's build id is the ELF's */
  SONDE_MTB_ID_MISMATCH,        /* another build of the firmware */
  SONDE_MTB_ID_NONE_IN_BUNDLE,  /* the firmware recorded no build id */
  SONDE_MTB_ID_NONE_IN_ELF,     /* the ELF was linked without --build-id */
};
/* Compare the bundle's build id with the ELF's (sonde_sym_build_id()). */
int sonde_mtb_build_id_check(const struct sonde_mtb_bundle *b, const uint8_t *elf_id,
                             size_t elf_len);

/* ---- Perfetto (src/mtb/perfetto.c) -------------------------------------- */

struct sonde_mtb_mark { /* the fault, shown as an instant after the history */
  const char *label;    /* "fault: HardFault", "halted"; NULL: none */
  uint32_t pc;
  const char *status;   /* CFSR/HFSR in words, or NULL */
};
/* Write events [first, h->n) as a Perfetto trace (perfetto.protos.Trace,
 * docs/formats.md): process "MTB history" with a thread "functions" (one
 * slice per run of instructions in the same function) and slice tracks
 * "exceptions" (entries, returns, tail-chains, session starts, gaps, the
 * fault) and "branches" (instants with from/to). The MTB has no time: the
 * axis counts instructions, 1 us each. name is the output's name for
 * messages. */
int sonde_mtb_write_perfetto(FILE *f, const char *name, const struct sonde_mtb_history *h,
                             size_t first, struct sonde_sym *sym,
                             const struct sonde_mtb_mark *fault, struct sonde_diag *d);

/* Thumb instruction length from its first halfword: 2 or 4. */
static inline unsigned sonde_mtb_insn_size(uint16_t hw) { return (hw >> 11) >= 0x1D ? 4u : 2u; }

/* "instruction", "branch", "exception", "exception", "session", "gap". */
const char *sonde_mtb_kind_name(enum sonde_mtb_kind k);

#ifdef __cplusplus
}
#endif
#endif
