/* The system bus: memory regions, devices, bit-band, debug access (bus.h). */
#include "bus.h"

#include <stdlib.h>

#include "sonde/common.h"

#define PAGE_SIZE (1u << VM_PAGE_SHIFT)
#define PAGE_MASK (PAGE_SIZE - 1)

/* ARMv7-M ARM B3.5 (bit-banding): 32 MiB alias windows over 1 MiB regions. */
#define BB_SRAM_BASE 0x20000000u
#define BB_PERI_BASE 0x40000000u

void vm_bus_init(struct vm_bus *bus)
{
  memset(bus, 0, sizeof *bus);
}

void vm_bus_free(struct vm_bus *bus)
{
  for (unsigned i = 0; i < bus->nregions; i++)
    free(bus->region[i].mem);
  bus->nregions = 0;
  bus->ndevices = 0;
  memset(bus->device_seen, 0, sizeof bus->device_seen);
}

static bool overlaps(uint32_t a, uint32_t alen, uint32_t b, uint32_t blen)
{
  uint64_t a_end = (uint64_t)a + alen, b_end = (uint64_t)b + blen;
  return a < b_end && b < a_end;
}

static bool range_is_taken(const struct vm_bus *bus, uint32_t base, uint32_t size)
{
  for (unsigned i = 0; i < bus->nregions; i++)
    if (overlaps(base, size, bus->region[i].base, bus->region[i].size))
      return true;
  for (unsigned i = 0; i < bus->ndevices; i++)
    if (overlaps(base, size, bus->device[i].base, bus->device[i].size))
      return true;
  return false;
}

/* Recompute the fast-path entry of one page. A page is fast only if memory
 * regions and nothing else intersect it; with several (SRAM and the MTB's
 * buffer next to it, as on the built-in cm33), the largest one takes the
 * fast path: lo..hi bound it, so the others' accesses fail the check and
 * take the slow path. */
static void page_update(struct vm_bus *bus, uint32_t pageno)
{
  struct vm_page *p = &bus->page[pageno];
  uint32_t pbase = pageno << VM_PAGE_SHIFT;
  memset(p, 0, sizeof *p);
  const struct vm_region *hit = NULL;
  unsigned n = 0;
  for (unsigned i = 0; i < bus->nregions; i++)
    if (overlaps(pbase, PAGE_SIZE, bus->region[i].base, bus->region[i].size) &&
        (!hit || bus->region[i].size > hit->size))
      hit = &bus->region[i];
  for (unsigned i = 0; i < bus->ndevices; i++)
    if (overlaps(pbase, PAGE_SIZE, bus->device[i].base, bus->device[i].size))
      n++;
  if (bus->bitband && (overlaps(pbase, PAGE_SIZE, VM_BUS_BB_SRAM_ALIAS, VM_BUS_BB_ALIAS_SIZE) ||
                       overlaps(pbase, PAGE_SIZE, VM_BUS_BB_PERI_ALIAS, VM_BUS_BB_ALIAS_SIZE)))
    n++;
  if (n || !hit)
    return;
  uint64_t lo = hit->base > pbase ? hit->base - pbase : 0;
  uint64_t end = (uint64_t)hit->base + hit->size;
  uint64_t hi = end - pbase > PAGE_SIZE ? PAGE_SIZE : end - pbase;
  p->host = hit->mem + ((int64_t)pbase - (int64_t)hit->base);
  p->lo = (uint32_t)lo;
  p->hi = (uint32_t)hi;
  p->wait_read = hit->wait_read;
  p->wait_write = hit->wait_write;
  p->rlim = p->hi - p->lo;
  p->wlim = !(hit->flags & VM_REGION_READONLY) && !bus->code_watch[pageno] ? p->rlim : 0;
}

static void pages_update_range(struct vm_bus *bus, uint32_t base, uint32_t size)
{
  if (!size)
    return;
  uint32_t first = base >> VM_PAGE_SHIFT;
  uint32_t last = (uint32_t)(((uint64_t)base + size - 1) >> VM_PAGE_SHIFT);
  for (uint32_t pg = first; pg <= last; pg++)
    page_update(bus, pg);
}

int vm_bus_add_region(struct vm_bus *bus, const char *name, uint32_t base, uint32_t size,
                      unsigned wait_read, unsigned wait_write, uint32_t flags)
{
  if (bus->nregions >= VM_BUS_MAX_REGIONS)
    return SONDE_E_LIMIT;
  if (!size || (uint64_t)base + size > 0x100000000ull || wait_read > 255 || wait_write > 255)
    return SONDE_E_RANGE;
  if (range_is_taken(bus, base, size))
    return SONDE_E_ARG;
  uint8_t *mem = calloc(1, size);
  if (!mem)
    return SONDE_E_NOMEM;
  struct vm_region *r = &bus->region[bus->nregions++];
  memset(r, 0, sizeof *r);
  for (size_t i = 0; name && name[i] && i + 1 < sizeof r->name; i++)
    r->name[i] = name[i];
  r->base = base;
  r->size = size;
  r->mem = mem;
  r->wait_read = (uint8_t)wait_read;
  r->wait_write = (uint8_t)wait_write;
  r->flags = flags;
  pages_update_range(bus, base, size);
  return SONDE_OK;
}

int vm_bus_add_device(struct vm_bus *bus, uint32_t base, uint32_t size,
                      const struct vm_device_ops *ops, void *ctx)
{
  if (bus->ndevices >= VM_BUS_MAX_DEVICES)
    return SONDE_E_LIMIT;
  if (!size || (uint64_t)base + size > 0x100000000ull || !ops)
    return SONDE_E_RANGE;
  if (range_is_taken(bus, base, size))
    return SONDE_E_ARG;
  struct vm_device *d = &bus->device[bus->ndevices++];
  d->base = base;
  d->size = size;
  d->ops = ops;
  d->ctx = ctx;
  pages_update_range(bus, base, size);
  return SONDE_OK;
}

const struct vm_region *vm_bus_find_region(const struct vm_bus *bus, uint32_t addr)
{
  for (unsigned i = 0; i < bus->nregions; i++)
    if (addr - bus->region[i].base < bus->region[i].size)
      return &bus->region[i];
  return NULL;
}

/* (vm_bus_device_seen, bus.h, reads the same slot) */
static inline unsigned device_seen_slot(uint32_t addr)
{
  return (addr >> 12) & (VM_BUS_DEVICE_SEEN - 1);
}

static const struct vm_device *find_device(struct vm_bus *bus, uint32_t addr)
{
  for (unsigned i = 0; i < bus->ndevices; i++)
    if (addr - bus->device[i].base < bus->device[i].size)
      return bus->device_seen[device_seen_slot(addr)] = &bus->device[i];
  return NULL;
}

/* The device at addr when the slow path found it there before, else NULL.
 * Regions and devices never overlap (range_is_taken), so this answers what
 * the region and device scans would, without them: firmware mostly goes
 * back to the devices it used last (a timer's status write per interrupt,
 * the NVIC's set-pending register, a GPIO), which mostly lie in different
 * 4 KiB blocks. */
static inline const struct vm_device *seen_device(const struct vm_bus *bus, uint32_t addr)
{
  const struct vm_device *d = bus->device_seen[device_seen_slot(addr)];
  return d && addr - d->base < d->size ? d : NULL;
}

void vm_bus_watch_code(struct vm_bus *bus, uint32_t addr)
{
  uint32_t pg = addr >> VM_PAGE_SHIFT;
  if (!bus->code_watch[pg]) {
    bus->code_watch[pg] = 1;
    page_update(bus, pg);
  }
}

void vm_bus_clear(struct vm_bus *bus, bool all)
{
  for (unsigned i = 0; i < bus->nregions; i++) {
    struct vm_region *r = &bus->region[i];
    if (all || !(r->flags & VM_REGION_RETAIN))
      if (!(r->flags & VM_REGION_READONLY))
        memset(r->mem, 0, r->size);
  }
}

/* Bit-band alias -> (bit address, bit number), ARMv7-M ARM B3.5.3. */
static bool bitband_target(const struct vm_bus *bus, uint32_t addr, uint32_t *word, unsigned *bit)
{
  if (!bus->bitband)
    return false;
  uint32_t region_base;
  if (addr - VM_BUS_BB_SRAM_ALIAS < VM_BUS_BB_ALIAS_SIZE)
    region_base = BB_SRAM_BASE;
  else if (addr - VM_BUS_BB_PERI_ALIAS < VM_BUS_BB_ALIAS_SIZE)
    region_base = BB_PERI_BASE;
  else
    return false;
  uint32_t off = addr & (VM_BUS_BB_ALIAS_SIZE - 1);
  uint32_t byte_off = off >> 5;
  *bit = (off >> 2) & 7;
  *word = region_base + byte_off; /* the byte holding the bit */
  return true;
}

static int mem_read(const struct vm_region *r, uint32_t addr, unsigned size, uint32_t *value)
{
  uint32_t off = addr - r->base;
  if ((uint64_t)off + size > r->size)
    return VM_BUS_ERROR;
  uint32_t v = 0;
  memcpy(&v, r->mem + off, size);
  *value = v;
  return VM_BUS_OK;
}

static int raw_read(struct sonde_vm *vm, struct vm_bus *bus, uint32_t addr, unsigned size,
                    uint32_t *value, bool debug)
{
  const struct vm_device *d = seen_device(bus, addr);
  if (!d) {
    const struct vm_region *r = vm_bus_find_region(bus, addr);
    if (r) {
      if (!debug)
        bus->stall_cycles += r->wait_read;
      return mem_read(r, addr, size, value);
    }
    d = find_device(bus, addr);
  }
  if (d) {
    uint32_t off = addr - d->base;
    if ((uint64_t)off + size > d->size || !d->ops->read)
      return VM_BUS_ERROR;
    if (off & (size - 1)) /* devices see aligned accesses only */
      return VM_BUS_ERROR;
    uint32_t v = 0;
    int rc = d->ops->read(d->ctx, vm, off, size, &v, debug);
    if (rc == VM_BUS_OK)
      *value = size == 4 ? v : (v & ((1u << (size * 8)) - 1));
    return rc;
  }
  return VM_BUS_ERROR;
}

static int raw_write(struct sonde_vm *vm, struct vm_bus *bus, uint32_t addr, unsigned size,
                     uint32_t value, bool debug)
{
  const struct vm_device *d = seen_device(bus, addr);
  if (!d) {
    struct vm_region *r = (struct vm_region *)vm_bus_find_region(bus, addr);
    if (r) {
      uint32_t off = addr - r->base;
      if ((uint64_t)off + size > r->size)
        return VM_BUS_ERROR;
      if ((r->flags & VM_REGION_READONLY) && !debug)
        return VM_BUS_ERROR;
      memcpy(r->mem + off, &value, size);
      if (!debug)
        bus->stall_cycles += r->wait_write;
      if (bus->code_watch[addr >> VM_PAGE_SHIFT] && bus->code_written)
        bus->code_written(vm, addr, size);
      return VM_BUS_OK;
    }
    d = find_device(bus, addr);
  }
  if (d) {
    uint32_t off = addr - d->base;
    if ((uint64_t)off + size > d->size || !d->ops->write || (off & (size - 1)))
      return VM_BUS_ERROR;
    return d->ops->write(d->ctx, vm, off, size, value, debug);
  }
  return VM_BUS_ERROR;
}

int vm_bus_read_slow(struct sonde_vm *vm, struct vm_bus *bus, uint32_t addr, unsigned size,
                     uint32_t *value)
{
  uint32_t word;
  unsigned bit;
  if (bitband_target(bus, addr, &word, &bit)) {
    uint32_t b;
    if (raw_read(vm, bus, word, 1, &b, false) != VM_BUS_OK)
      return VM_BUS_ERROR;
    *value = (b >> bit) & 1;
    return VM_BUS_OK;
  }
  return raw_read(vm, bus, addr, size, value, false);
}

int vm_bus_write_slow(struct sonde_vm *vm, struct vm_bus *bus, uint32_t addr, unsigned size,
                      uint32_t value)
{
  uint32_t word;
  unsigned bit;
  if (bitband_target(bus, addr, &word, &bit)) {
    /* A bit-band write is a locked read-modify-write of the target byte. */
    uint32_t b;
    if (raw_read(vm, bus, word, 1, &b, false) != VM_BUS_OK)
      return VM_BUS_ERROR;
    b = (value & 1) ? (b | (1u << bit)) : (b & ~(1u << bit));
    return raw_write(vm, bus, word, 1, b, false);
  }
  return raw_write(vm, bus, addr, size, value, false);
}

int vm_bus_load(struct vm_bus *bus, uint32_t addr, const void *data, uint32_t len,
                uint32_t *bad_addr)
{
  const uint8_t *src = data;
  while (len) {
    struct vm_region *r = (struct vm_region *)vm_bus_find_region(bus, addr);
    if (!r) {
      if (bad_addr)
        *bad_addr = addr;
      return VM_BUS_ERROR;
    }
    uint32_t off = addr - r->base;
    uint32_t n = r->size - off < len ? r->size - off : len;
    memcpy(r->mem + off, src, n);
    if (bus->code_written && bus->code_watch[addr >> VM_PAGE_SHIFT])
      bus->code_written(NULL, addr, n);
    src += n;
    addr += n;
    len -= n;
    if (!addr && len) { /* wrapped past 4 GiB */
      if (bad_addr)
        *bad_addr = 0;
      return VM_BUS_ERROR;
    }
  }
  return VM_BUS_OK;
}

/* Debug access in the largest naturally aligned units, so 32-bit-only device
 * registers read correctly through a byte buffer. */
int vm_bus_debug_read(struct sonde_vm *vm, struct vm_bus *bus, uint32_t addr, void *buf,
                      uint32_t len)
{
  uint8_t *dst = buf;
  while (len) {
    unsigned size = (!(addr & 3) && len >= 4) ? 4 : (!(addr & 1) && len >= 2) ? 2 : 1;
    uint32_t v = 0, word;
    unsigned bit;
    int rc;
    if (bitband_target(bus, addr, &word, &bit)) {
      uint32_t b = 0;
      rc = raw_read(vm, bus, word, 1, &b, true);
      v = (b >> bit) & 1;
    } else {
      rc = raw_read(vm, bus, addr, size, &v, true);
    }
    if (rc != VM_BUS_OK)
      return VM_BUS_ERROR;
    memcpy(dst, &v, size);
    dst += size;
    addr += size;
    len -= size;
  }
  return VM_BUS_OK;
}

int vm_bus_debug_write(struct sonde_vm *vm, struct vm_bus *bus, uint32_t addr,
                       const void *buf, uint32_t len)
{
  const uint8_t *src = buf;
  while (len) {
    unsigned size = (!(addr & 3) && len >= 4) ? 4 : (!(addr & 1) && len >= 2) ? 2 : 1;
    uint32_t v = 0;
    memcpy(&v, src, size);
    if (raw_write(vm, bus, addr, size, v, true) != VM_BUS_OK)
      return VM_BUS_ERROR;
    src += size;
    addr += size;
    len -= size;
  }
  return VM_BUS_OK;
}

const uint8_t *vm_bus_code_ptr(const struct vm_bus *bus, uint32_t addr, uint32_t *avail,
                               unsigned *wait_states)
{
  const struct vm_region *r = vm_bus_find_region(bus, addr);
  if (!r || !(r->flags & VM_REGION_EXEC))
    return NULL;
  uint32_t off = addr - r->base;
  if (avail)
    *avail = r->size - off;
  if (wait_states)
    *wait_states = r->wait_read;
  return r->mem + off;
}
