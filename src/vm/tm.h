/* The timing model of a Cortex-M3 with a memory system (tm.c, tm_mem.c):
 * the cycles from one instruction entering Execute to the next one entering
 * Execute, the definition a cycle-level PC trace (FrankenTrace, `--trace-pc`)
 * uses. It is driven one executed instruction at a time with the facts the
 * executor (or a recorded trace, `sonde cycles compare`) knows after running
 * it: the decoded instruction, its PC, where execution continues, its data
 * accesses and its operand-dependent execute cycles.
 *
 * What it models (docs/vm.md, "Memory-system timing"):
 *  - the fetch unit: 32-bit fetches, a prefetch queue of `fetch_depth` words
 *    ahead of Decode, one fetch in flight that a redirect cannot cancel;
 *    redirects in Decode (B, B<c>, BL: target fetched while the branch is in
 *    Decode) or in Execute (CBZ/CBNZ, BX/BLX, writes to PC, loads to PC);
 *  - the code memory: flash with wait states behind a line buffer, and a
 *    VIMS-style cache (sets x ways of lines, a tag-lookup cycle saved when
 *    the request is the next line after the previous one, cold after reset)
 *    whose mode follows writes to its control register;
 *  - one port shared by instruction fetch and data reads of the code memory
 *    (data has priority); the system bus for everything else with per-region
 *    latencies (slow peripheral domains behind bridges) and a one-entry write
 *    buffer (a store's data phase overlaps the next instruction).
 *
 * Per-instruction API (for any executor): fill a struct vm_tm_insn and call
 * vm_tm_step(); it returns the instruction's duration and advances the
 * model's clock. The model has no access to the VM: everything it needs is in
 * the arguments, so a block executor can call it per instruction (or cache
 * its answers for straight-line code whose fetch state repeats). */
#ifndef SONDE_VM_TM_H
#define SONDE_VM_TM_H

#include <stdbool.h>
#include <stdint.h>

#include "decode.h"

#define VM_TM_MAX_LAT 8

/* A region with its own access latency on the system bus (data phase cycles:
 * 1 = no wait state). */
struct vm_tm_lat {
  uint32_t base, size;
  uint8_t read, write;
};

/* The memory system a machine file declares (`memsys ...`, docs/vm.md). */
struct vm_tm_cfg {
  bool on;               /* the machine declares a memory system: the model times it */
  uint8_t fetch_depth;   /* prefetch words ahead of Decode (Cortex-M3: 3) */
  /* code memory (flash) */
  uint32_t flash_base, flash_size;
  uint8_t flash_wait;    /* wait states of a flash read (a line) */
  uint8_t flash_line;    /* line buffer width in bytes (power of two; 0: none) */
  /* VIMS-style cache in front of the flash */
  bool cache;
  uint32_t cache_ctl;    /* address of the control register (mode in bits 1:0) */
  uint32_t cache_size;   /* bytes */
  uint8_t cache_ways, cache_line;
  uint8_t cache_tag;     /* cycles of a tag lookup not prefetched */
  bool cache_prefetch;   /* next-line tag prefetch */
  uint8_t cache_mode;    /* mode after reset: 0 GPRAM, 1 cache, 3 off (VIMS_CTL.MODE) */
  /* system bus */
  struct vm_tm_lat lat[VM_TM_MAX_LAT];
  unsigned nlat;
  uint8_t sram_read, sram_write; /* any other address (1: no wait state) */
  bool write_buffer;     /* a store's data phase overlaps the next instruction */
  bool memo_off;         /* step every instruction, no memo (tests compare the two) */
};

/* One executed instruction. */
struct vm_tm_insn {
  const struct vm_insn *d;
  uint32_t pc;
  uint32_t next_pc;   /* where execution continues (the next instruction's PC) */
  bool executed;      /* false: failed its condition (IT block) */
  uint8_t extra;      /* operand-dependent execute cycles beyond the table's minimum
                       * (UMULL/SMULL early termination, SDIV/UDIV); 0 otherwise */
  uint8_t naccess;    /* data accesses (words of an LDM/STM count one each) */
  uint32_t addr;      /* first data address (0 when naccess = 0) */
  uint32_t wdata;     /* value of the first store (the cache control register's mode) */
};

/* Model state. */
struct vm_tm {
  struct vm_tm_cfg cfg;
  uint64_t now;          /* cycle in which the current instruction entered Execute */
  /* fetch unit */
  uint32_t fa;           /* next word address to fetch */
  uint64_t f_issue;      /* earliest cycle of the next fetch's address phase */
  uint32_t qbase;        /* fetched words (consecutive): the oldest's address, */
  unsigned qn;           /* how many, and per word ((addr >> 2) & 7) the cycle */
  uint64_t qt[8];        /* at whose end its data is there */
  uint32_t dpc;          /* PC of the instruction in Decode (the next to execute) */
  /* code port, system bus */
  uint64_t port_free;    /* first cycle the code port can start a data phase */
  uint64_t sbus_free;    /* same for the system bus */
  uint64_t wb_until;     /* the write buffer holds a store until this cycle */
  uint32_t lb_line;      /* line in the flash line buffer (1: none) */
  uint32_t last_cline;   /* last cache request's line (tag prefetch), 1: none */
  bool last_miss;        /* ... and it missed */
  uint8_t mode;          /* VIMS mode */
  bool prev_ls;          /* previous instruction was a single load/store (pipelining) */
  uint8_t prev_ld_rd;    /* its destination when a load, else VM_NOREG */
  bool fold_it;          /* the next instruction is an IT folded into this one */
  uint32_t *ctag;        /* cache tags (line | 1; 0 empty), sets x ways */
  uint8_t *cnext;        /* per set: next way to replace (round robin) */
  unsigned csets;
  unsigned cline_shift;  /* log2(cache_line) */
  uint32_t lb_mask;      /* ~(flash_line - 1); 0 without a line buffer */
  uint32_t cl_mask;      /* ~(cache_line - 1) */
  bool cache_on;         /* cfg.cache and mode 1: requests go through the cache */
  uint32_t lat_g[8];     /* per 16 MB granule (addr >> 24), a bit: a cfg.lat region
                          * is in it, or it is a bit-band alias */
  /* the memo of the model's answers (tm_memo.c); NULL: every step is
   * modelled. While a memoized run replays, only now and dpc are kept up to
   * date: the rest is the state at the run's start (vm_tm_memo_sync). */
  struct vm_tm_memo *memo;
  bool rec_on;           /* a run is being recorded: cache lookups note their lines */
  bool rec_bad;          /* ... and one missed (or too many lines): not memoized */
  uint8_t rec_nlines;
  uint32_t rec_lines[8];
  uint64_t tag_epoch;    /* counts changes of the cache tags */
  /* reads the halfword at addr (is the next instruction 32-bit?); NULL:
   * taken as 16-bit */
  uint16_t (*read16)(void *ctx, uint32_t addr);
  void *read_ctx;
};

/* Set up (tm->cfg copied from cfg); cold caches, empty queue. 0 or
 * SONDE_E_NOMEM. */
int vm_tm_init(struct vm_tm *tm, const struct vm_tm_cfg *cfg, uint32_t reset_pc);
void vm_tm_free(struct vm_tm *tm);
/* Restart the fetch unit at `pc` (exception entry/return, reset, code the
 * model did not see): the instruction there is to enter Execute `cycles`
 * from now, its fetch having gone out during them; the queue is flushed. */
void vm_tm_redirect(struct vm_tm *tm, uint32_t pc, unsigned cycles);
/* Charge one executed instruction: returns the cycles until the next
 * instruction (at in->next_pc) enters Execute. Answers from the memo where
 * it has them (tm_memo.c), else vm_tm_step_model(). */
unsigned vm_tm_step(struct vm_tm *tm, const struct vm_tm_insn *in);
/* The model itself (tm.c): one step, no memo. */
unsigned vm_tm_step_model(struct vm_tm *tm, const struct vm_tm_insn *in);
void vm_tm_redirect_model(struct vm_tm *tm, uint32_t pc, unsigned cycles);

/* The memo (tm_memo.c): runs of steps from a branch target to the next
 * branch, keyed by the model's state relative to `now`, replayed when the
 * state and each step's facts (PC, where it went, the class of its data
 * accesses) repeat. Created by vm_tm_init (none when out of memory). */
int vm_tm_memo_new(struct vm_tm *tm);
void vm_tm_memo_free(struct vm_tm *tm);
/* Bring the model's state up to date (a replay stopped between steps) and
 * end a recording: before anything but vm_tm_step looks at the state. */
void vm_tm_memo_sync(struct vm_tm *tm);
/* Code in [addr, addr + size) was written: forget the runs that read it. */
void vm_tm_memo_code_written(struct vm_tm *tm, uint32_t addr, unsigned size);
/* Is the line in the cache (tm_mem.c; no state change)? */
bool vm_tm_cache_has(const struct vm_tm *tm, uint32_t line);

/* Memory system (tm_mem.c): data phase cycles of a code fetch or code data
 * read of the word at addr (line buffer, cache, updates their state). */
unsigned vm_tm_code_access_slow(struct vm_tm *tm, uint32_t addr);
/* Inline: the common answers (the word is in the line the flash's line
 * buffer or the cache's output register holds, which changes no state) cost
 * no call; everything else goes to vm_tm_code_access_slow(). */
static inline unsigned vm_tm_code_access(struct vm_tm *tm, uint32_t addr, bool data)
{
  (void)data;
  if (tm->cache_on) {
    if ((addr & tm->cl_mask) == tm->last_cline && !tm->last_miss)
      return 1;
  } else if ((addr & tm->lb_mask) == tm->lb_line) {
    return 1;
  }
  return vm_tm_code_access_slow(tm, addr);
}
/* Data phase cycles of a system-bus access. */
unsigned vm_tm_sys_access_slow(const struct vm_tm *tm, uint32_t addr, bool write);
static inline unsigned vm_tm_sys_access(const struct vm_tm *tm, uint32_t addr, bool write)
{
  /* no region with its own latency in addr's 16 MB: the default */
  if (!(tm->lat_g[addr >> 29] >> ((addr >> 24) & 31) & 1))
    return write ? tm->cfg.sram_write : tm->cfg.sram_read;
  return vm_tm_sys_access_slow(tm, addr, write);
}
static inline bool vm_tm_is_code(const struct vm_tm *tm, uint32_t addr)
{
  return addr - tm->cfg.flash_base < tm->cfg.flash_size;
}
/* The code region (0x00000000-0x1FFFFFFF: flash, ROM, GPRAM) is reached
 * through the I-code/D-code port that instruction fetches use (Cortex-M3 TRM
 * 2.3 "Bus interfaces"); everything else through the system bus. */
static inline bool vm_tm_on_port(uint32_t addr)
{
  return addr < 0x20000000u;
}
/* A store to addr with value v (the cache control register changes mode). */
void vm_tm_store_hook(struct vm_tm *tm, uint32_t addr, uint32_t v);

#endif
