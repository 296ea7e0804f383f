/* The memory system of the timing model (tm.h): what one access costs in
 * data-phase cycles, and the state the answer depends on (the flash line
 * buffer, the VIMS cache's tags and mode).
 *
 * Sources: TI CC26x0 TRM (SWCU117) 7.2 "VIMS": the cache (8 KB, 4-way, 64-bit
 * lines in front of the flash), its modes (GPRAM, cache, off) set in
 * VIMS_CTL.MODE, the flash's 64-bit line buffer; CMEmu (University of Warsaw,
 * cmemu-lib/src/component/vims/cache.rs, flash.rs), which gives the flash two
 * wait states behind a 64-bit line buffer, a tag lookup that costs a cycle
 * unless the request is the line after the previous one ("tag prefetch"),
 * and misses whose data phase lasts 3 (prefetched) or 4 cycles. The
 * replacement policy here is round robin per set, not CMEmu's measured
 * pseudo-random sequence. */
#include "tm.h"

static unsigned flash_read(struct vm_tm *tm, uint32_t addr)
{
  const struct vm_tm_cfg *c = &tm->cfg;
  if (!c->flash_line)
    return 1u + c->flash_wait;
  uint32_t line = addr & ~(uint32_t)(c->flash_line - 1);
  if (line == tm->lb_line)
    return 1;
  tm->lb_line = line;
  return 1u + c->flash_wait;
}

/* Look the line up; on a miss, fill it. Returns true on a hit. */
static bool cache_lookup(struct vm_tm *tm, uint32_t line)
{
  const struct vm_tm_cfg *c = &tm->cfg;
  unsigned set = (line >> tm->cline_shift) & (tm->csets - 1);
  uint32_t *tags = &tm->ctag[set * c->cache_ways];
  for (unsigned w = 0; w < c->cache_ways; w++)
    if (tags[w] == (line | 1)) {
      if (tm->rec_on) { /* a memoized run replays only while its lines are there */
        unsigned i = 0;
        while (i < tm->rec_nlines && tm->rec_lines[i] != line)
          i++;
        if (i == tm->rec_nlines) {
          if (i == sizeof tm->rec_lines / sizeof tm->rec_lines[0])
            tm->rec_bad = true;
          else
            tm->rec_lines[tm->rec_nlines++] = line;
        }
      }
      return true;
    }
  tm->rec_bad = true; /* a miss changes the tags: such a run is not memoized */
  unsigned w = tm->cnext[set];
  tags[w] = line | 1;
  tm->tag_epoch++;
  tm->cnext[set] = (uint8_t)(w + 1 == c->cache_ways ? 0 : w + 1);
  return false;
}

bool vm_tm_cache_has(const struct vm_tm *tm, uint32_t line)
{
  const uint32_t *tags =
      &tm->ctag[((line >> tm->cline_shift) & (tm->csets - 1)) * tm->cfg.cache_ways];
  for (unsigned w = 0; w < tm->cfg.cache_ways; w++)
    if (tags[w] == (line | 1))
      return true;
  return false;
}

unsigned vm_tm_code_access_slow(struct vm_tm *tm, uint32_t addr)
{
  const struct vm_tm_cfg *c = &tm->cfg;
  if (!tm->cache_on)
    return flash_read(tm, addr);
  uint32_t line = addr & ~(uint32_t)(c->cache_line - 1);
  /* the cache answers the line it answered last from its output register;
   * right after a miss that line is still being written into the cache RAM
   * and its tags updated (CMEmu vims/cache.rs: the TAG update comes cycles
   * after the flash's answer), which costs the second word a cycle */
  if (line == tm->last_cline) {
    bool fresh = tm->last_miss;
    tm->last_miss = false;
    return fresh ? 2 : 1;
  }
  bool pref = c->cache_prefetch && line == tm->last_cline + c->cache_line;
  tm->last_cline = line;
  unsigned tag = pref ? 0 : c->cache_tag;
  tm->last_miss = false;
  if (cache_lookup(tm, line))
    return 1 + tag;
  tm->last_miss = pref; /* a prefetched miss's shorter data phase ends before the update */
  /* a miss reads the flash line (through the flash line buffer) */
  tm->lb_line = 1;
  return tag + flash_read(tm, addr);
}

unsigned vm_tm_sys_access_slow(const struct vm_tm *tm, uint32_t addr, bool write)
{
  const struct vm_tm_cfg *c = &tm->cfg;
  /* a bit-band alias (ARMv7-M B3.4.1) costs what the word it maps to costs */
  if (addr - 0x22000000u < 0x2000000u || addr - 0x42000000u < 0x2000000u)
    addr = (addr & 0xF0000000u) + ((addr & 0x1FFFFFFu) >> 5);
  for (unsigned i = 0; i < c->nlat; i++)
    if (addr - c->lat[i].base < c->lat[i].size)
      return write ? c->lat[i].write : c->lat[i].read;
  return write ? c->sram_write : c->sram_read;
}

void vm_tm_store_hook(struct vm_tm *tm, uint32_t addr, uint32_t v)
{
  const struct vm_tm_cfg *c = &tm->cfg;
  if (!c->cache || addr != c->cache_ctl)
    return;
  uint8_t mode = (uint8_t)(v & 3);
  if (mode == 2)
    return; /* reserved */
  if (mode != tm->mode && mode == 1) {
    /* entering cache mode: the tags are invalid (TRM 7.2.4: GPRAM and off
     * modes do not keep them) */
    for (unsigned i = 0; i < tm->csets * c->cache_ways; i++)
      tm->ctag[i] = 0;
    tm->tag_epoch++;
  }
  tm->mode = mode;
  tm->cache_on = mode == 1;
  tm->last_cline = 1;
}
