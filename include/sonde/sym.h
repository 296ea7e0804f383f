/* Sonde: symbols of a firmware image (src/sym) — function names, source
 * lines and disassembly for target addresses, read in-process from the ELF
 * (libelf), its DWARF line tables (libdw) and its code bytes (capstone, ARM
 * Thumb + M-class).
 *
 * Specifications followed:
 *   - ELF for the Arm Architecture (IHI 0044), "Symbol values" (bit 0 of an
 *     STT_FUNC value marks Thumb code) and "Mapping symbols" ($t, $a, $d).
 *   - DWARF 2..5, section 6.2 "Line Number Information".
 *
 * Model. At _open the symbol table is read once into an array of functions
 * sorted by start address (Thumb bit cleared), so sonde_sym_lookup() is a
 * binary search with no allocation. Functions are STT_FUNC symbols; code
 * addresses that no sized STT_FUNC covers fall back to the nearest preceding
 * code label (a STT_NOTYPE symbol in an executable section that is not a
 * mapping symbol), so hand-written assembly still gets a name. When several
 * symbols share a start address, a GLOBAL one wins over WEAK over LOCAL and
 * then the first in the table (as `nm -n` lists them; `addr2line` agrees).
 * The DWARF line tables of every compilation unit are merged into one sorted
 * row array the first time a line is asked for (cached for the handle).
 *
 * Addresses are target addresses (uint32_t); bit 0 is ignored by every lookup
 * on an ARM ELF, so an exception return address or a function pointer can be
 * passed as is. Returned strings point into the handle and live until
 * sonde_sym_free(). A handle is not thread-safe (the line cache and the
 * disassembler are filled lazily).
 *
 * Errors: negative SONDE_E_* (common.h); sonde_sym_error_detail() explains
 * the last one. NULL handles are tolerated by every query (they return
 * SONDE_E_ARG / NULL / 0), so lookups chain without checks. */
#ifndef SONDE_SYM_H
#define SONDE_SYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sonde/common.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sonde_sym; /* opaque */

/* Open an ELF file. On failure *out is NULL and `diag` (may be NULL) explains:
 * SONDE_E_IO ("x.elf: No such file or directory"), SONDE_E_FORMAT (not an ELF,
 * truncated, not 32-bit), SONDE_E_NOMEM. A file with no DWARF opens fine
 * (sonde_sym_has_lines() is then false); one with no symbols too. */
int sonde_sym_open(const char *path, struct sonde_sym **out, struct sonde_diag *diag);
/* Release everything (NULL is a no-op). */
void sonde_sym_free(struct sonde_sym *s);
/* Detail of the last error on this handle ("" if none). Never NULL. */
const char *sonde_sym_error_detail(const struct sonde_sym *s);
/* The path given to _open. */
const char *sonde_sym_path(const struct sonde_sym *s);
/* e_machine of the file (40 = EM_ARM). */
unsigned sonde_sym_machine(const struct sonde_sym *s);
/* The ELF entry point (e_entry, Thumb bit as stored). */
uint32_t sonde_sym_entry(const struct sonde_sym *s);

/* The GNU build id (`ld --build-id`: the descriptor of the NT_GNU_BUILD_ID
 * note in a SHT_NOTE section, 20 bytes for the default SHA-1): copies up to
 * cap bytes into out and returns the id's full length, 0 when the ELF has
 * none. *addr (may be NULL) receives the target address of the descriptor
 * when the note is loaded (SHF_ALLOC; the firmware can then read its own id
 * there), else 0. */
size_t sonde_sym_build_id(const struct sonde_sym *s, uint8_t *out, size_t cap, uint32_t *addr);

/* ---- functions ---------------------------------------------------------- */

struct sonde_sym_func {
  const char *name;  /* symbol name, never NULL */
  uint32_t start;    /* first byte (Thumb bit cleared) */
  uint32_t size;     /* bytes; 0 if the symbol has no size (a code label) */
  bool global;       /* STB_GLOBAL or STB_WEAK */
  bool thumb;        /* bit 0 was set in the symbol value */
};

/* Number of functions (deduplicated by start address), and the i-th in
 * address order, i < count. Iterate with `for (i = 0; i < n; i++)`. */
size_t sonde_sym_func_count(const struct sonde_sym *s);
int sonde_sym_func_at(const struct sonde_sym *s, size_t i, struct sonde_sym_func *out);

/* The function containing `addr`: returns its index (>= 0) and fills *out
 * (may be NULL) and *offset (may be NULL) = addr - start, or SONDE_E_NOTFOUND
 * when no function covers the address (outside every sized function and not
 * preceded by a code label in the same section). O(log n), no allocation. */
long sonde_sym_lookup(const struct sonde_sym *s, uint32_t addr, struct sonde_sym_func *out,
                      uint32_t *offset);

/* Convenience: the name of the function containing addr, or NULL. */
const char *sonde_sym_name(const struct sonde_sym *s, uint32_t addr, uint32_t *offset);

/* Format "name+0xOFF" ("name" when the offset is 0) or, if unknown,
 * "0xADDR" (8 hex digits) into buf (NUL-terminated, truncated to cap).
 * Returns the length it would have had, like snprintf. */
int sonde_sym_format(const struct sonde_sym *s, uint32_t addr, char *buf, size_t cap);

/* Address of a symbol by exact name (functions first, then any other symbol:
 * objects, labels). Thumb bit cleared for functions. Optional *size.
 * SONDE_E_NOTFOUND if absent. O(log n) after a one-time sorted index. */
int sonde_sym_address(const struct sonde_sym *s, const char *name, uint32_t *addr,
                      uint32_t *size);

/* ---- source lines ------------------------------------------------------- */

/* True if the ELF carries a DWARF line table. */
bool sonde_sym_has_lines(struct sonde_sym *s);

struct sonde_sym_line {
  const char *file; /* as recorded in the line table (may be absolute) */
  unsigned line;    /* 1-based; 0 = no line ("compiler generated") */
  unsigned column;  /* 0 if not recorded */
  uint32_t addr;    /* start address of the line-table row that covers addr */
};

/* file:line for addr: the last line-table row whose address is <= addr,
 * within its sequence. SONDE_E_NOTFOUND outside every sequence or without
 * DWARF. The first call builds and caches the merged table. */
int sonde_sym_line(struct sonde_sym *s, uint32_t addr, struct sonde_sym_line *out);

/* ---- code bytes and disassembly ------------------------------------------ */

/* Copy n bytes of the image at target address addr from the ELF's allocated
 * PROGBITS sections. SONDE_E_RANGE if any byte is not in the file. */
int sonde_sym_read(const struct sonde_sym *s, uint32_t addr, void *buf, size_t n);

/* True if addr lies in a data region of code (a $d mapping symbol range,
 * e.g. a literal pool). */
bool sonde_sym_is_data(const struct sonde_sym *s, uint32_t addr);

struct sonde_sym_insn {
  uint32_t addr;
  unsigned size;        /* 2 or 4 bytes (4 for a literal word) */
  uint32_t raw;         /* the halfword, or first halfword << 16 | second */
  char mnemonic[32];    /* "ldr.w", "bne", "addhi" (IT condition applied) */
  char operands[160];   /* "r3, [r2, #0x48]" (capstone's syntax) */
  bool is_data;         /* literal pool word: mnemonic ".word" */
};

/* Disassemble the instruction at addr (ARM Thumb-2, M-profile). The decoder
 * starts at the enclosing function (or up to 64 bytes before addr) so that
 * instructions inside an IT block get their condition, and so that a 32-bit
 * instruction is not mistaken for two halves. SONDE_E_RANGE if the bytes are
 * not in the image, SONDE_E_FORMAT if they do not decode, SONDE_E_UNSUPPORTED
 * for a non-ARM ELF. */
int sonde_sym_disasm(struct sonde_sym *s, uint32_t addr, struct sonde_sym_insn *out);

#ifdef __cplusplus
}
#endif
#endif
