/* The system bus of the virtual Cortex-M: memories with wait states and
 * memory-mapped devices.
 *
 * The 4 GiB address space is split into 4096 pages of 1 MiB. A page that lies
 * inside one memory region has a direct host pointer, so RAM and flash accesses
 * are an index, a bounds check and a memcpy (the fast path below). Everything
 * else — devices (peripherals, the PPB, debug blocks), bit-band aliases,
 * unmapped addresses, writes to read-only memory, and writes to pages whose
 * code is cached by the CPU — takes vm_bus_*_slow() in bus.c.
 *
 * Timing: each access adds its region's wait states to bus->stall_cycles; the
 * CPU's cycle model takes them from there (vm_bus_take_stalls). */
#ifndef SONDE_VM_BUS_H
#define SONDE_VM_BUS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

struct sonde_vm;

#define VM_PAGE_SHIFT 20
#define VM_PAGE_COUNT (1u << (32 - VM_PAGE_SHIFT))

#if defined(__GNUC__)
#define VM_LIKELY(x) __builtin_expect(!!(x), 1)
#define VM_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define VM_INLINE static inline __attribute__((always_inline))
#else
#define VM_LIKELY(x) (x)
#define VM_UNLIKELY(x) (x)
#define VM_INLINE static inline
#endif

/* Result of a bus access. */
enum vm_bus_status {
  VM_BUS_OK = 0,
  VM_BUS_ERROR = 1, /* unmapped, or the device/region refused: BusFault */
};

/* A memory-mapped device. `offset` is from the device's base; size is 1, 2 or
 * 4 and the offset is aligned to it. `debug` is true for host (debugger)
 * accesses, which must not have side effects a debugger read would not have. */
struct vm_device_ops {
  const char *name;
  int (*read)(void *ctx, struct sonde_vm *vm, uint32_t offset, unsigned size, uint32_t *value,
              bool debug);
  int (*write)(void *ctx, struct sonde_vm *vm, uint32_t offset, unsigned size, uint32_t value,
               bool debug);
};

enum vm_region_flags {
  VM_REGION_READONLY = 1u << 0, /* core writes fault (flash); the loader may write */
  VM_REGION_EXEC = 1u << 1,     /* instructions may be fetched */
  VM_REGION_RETAIN = 1u << 2,   /* contents survive a system reset (SRAM) */
};

struct vm_region {
  char name[24];
  uint32_t base, size;
  uint8_t *mem;             /* host memory (size bytes), owned by the bus */
  uint8_t wait_read, wait_write; /* extra cycles per access */
  uint32_t flags;           /* VM_REGION_* */
};

struct vm_device {
  uint32_t base, size;
  const struct vm_device_ops *ops;
  void *ctx;
};

/* One 1 MiB page: `host` points at the byte for page address 0 (may be outside
 * `mem` when the region starts inside the page; `lo..hi` bounds the valid
 * offsets). rlim/wlim are hi - lo where core reads/writes may take the fast
 * path, else 0: then one compare checks both bounds (vm_page_fast). */
struct vm_page {
  uint8_t *host;
  uint32_t lo, hi;    /* valid page offsets: lo <= off && off + size <= hi */
  uint32_t rlim, wlim;
  uint8_t wait_read, wait_write;
  uint8_t pad[6];     /* 32 bytes: the index is a shift */
};
_Static_assert(sizeof(struct vm_page) == 32, "page entry size");

/* Whether [off, off + size) of page p is plain memory the fast path may read
 * (write false) or write: lo <= off && off + size <= hi, and allowed. off - lo
 * wraps to at least 2^32 - 2^20 when off < lo, which no limit reaches. */
static inline bool vm_page_fast(const struct vm_page *p, uint32_t off, uint32_t size, bool write)
{
  return (uint64_t)(uint32_t)(off - p->lo) + size <= (write ? p->wlim : p->rlim);
}

#define VM_BUS_MAX_REGIONS 16
#define VM_BUS_MAX_DEVICES 48
#define VM_BUS_DEVICE_SEEN 16

struct vm_bus {
  struct vm_page page[VM_PAGE_COUNT];
  struct vm_region region[VM_BUS_MAX_REGIONS];
  unsigned nregions;
  struct vm_device device[VM_BUS_MAX_DEVICES];
  unsigned ndevices;
  /* Devices the slow path found, by bits 12-15 of their address (or NULL):
   * devices and regions never overlap, so an address inside one is that
   * device's (bus.c). */
  const struct vm_device *device_seen[VM_BUS_DEVICE_SEEN];
  bool bitband;            /* Cortex-M3/M4 bit-band aliases at 0x22000000, 0x42000000 */
  uint64_t stall_cycles;   /* wait states accumulated since the CPU last took them */
  /* Called for core writes to pages marked with vm_bus_watch_code (cached code). */
  void (*code_written)(struct sonde_vm *vm, uint32_t addr, unsigned size);
  uint8_t code_watch[VM_PAGE_COUNT];
};

/* Setup (bus.c). Regions and devices may not overlap each other. */
void vm_bus_init(struct vm_bus *bus);
void vm_bus_free(struct vm_bus *bus);
int vm_bus_add_region(struct vm_bus *bus, const char *name, uint32_t base, uint32_t size,
                      unsigned wait_read, unsigned wait_write, uint32_t flags);
int vm_bus_add_device(struct vm_bus *bus, uint32_t base, uint32_t size,
                      const struct vm_device_ops *ops, void *ctx);
const struct vm_region *vm_bus_find_region(const struct vm_bus *bus, uint32_t addr);
/* Writes to this page take the slow path and call bus->code_written. */
void vm_bus_watch_code(struct vm_bus *bus, uint32_t addr);
/* Zero every region not flagged VM_REGION_RETAIN (or all, when `all`). */
void vm_bus_clear(struct vm_bus *bus, bool all);

/* Loader and debugger access: bytes, no timing, may write read-only memory,
 * devices see debug=true. Return VM_BUS_OK or VM_BUS_ERROR at the first
 * unmapped byte (its address in *bad_addr when not NULL). */
int vm_bus_load(struct vm_bus *bus, uint32_t addr, const void *data, uint32_t len,
                uint32_t *bad_addr);
int vm_bus_debug_read(struct sonde_vm *vm, struct vm_bus *bus, uint32_t addr, void *buf,
                      uint32_t len);
int vm_bus_debug_write(struct sonde_vm *vm, struct vm_bus *bus, uint32_t addr,
                       const void *buf, uint32_t len);

/* Slow paths (bus.c). `size` 1, 2 or 4; unaligned accesses to memory are
 * allowed here (the CPU decides whether an unaligned access faults). */
int vm_bus_read_slow(struct sonde_vm *vm, struct vm_bus *bus, uint32_t addr, unsigned size,
                     uint32_t *value);
int vm_bus_write_slow(struct sonde_vm *vm, struct vm_bus *bus, uint32_t addr, unsigned size,
                      uint32_t value);

/* Core data accesses: the fast path for plain memory. Little-endian host
 * assumed (x86-64, AArch64), as is the target. */
VM_INLINE int vm_bus_read(struct sonde_vm *vm, struct vm_bus *bus, uint32_t addr, unsigned size,
                          uint32_t *value)
{
  const struct vm_page *p = &bus->page[addr >> VM_PAGE_SHIFT];
  uint32_t off = addr & ((1u << VM_PAGE_SHIFT) - 1);
  if (VM_LIKELY(vm_page_fast(p, off, size, false))) {
    uint32_t v = 0;
    memcpy(&v, p->host + off, size);
    *value = v;
    bus->stall_cycles += p->wait_read;
    return VM_BUS_OK;
  }
  return vm_bus_read_slow(vm, bus, addr, size, value);
}

VM_INLINE int vm_bus_write(struct sonde_vm *vm, struct vm_bus *bus, uint32_t addr, unsigned size,
                           uint32_t value)
{
  const struct vm_page *p = &bus->page[addr >> VM_PAGE_SHIFT];
  uint32_t off = addr & ((1u << VM_PAGE_SHIFT) - 1);
  if (VM_LIKELY(vm_page_fast(p, off, size, true))) {
    memcpy(p->host + off, &value, size);
    bus->stall_cycles += p->wait_write;
    return VM_BUS_OK;
  }
  return vm_bus_write_slow(vm, bus, addr, size, value);
}

/* A core access that only a device answers, the one the slow path met at
 * addr before (bus->device_seen): vm_bus_*_slow's device case without its
 * scans, for compiled code's loads and stores (exec_threaded.h, vm_jit_dev).
 * VM_BUS_OK or VM_BUS_ERROR as the device answered; VM_BUS_NOT_SEEN, with
 * nothing done, for anything else (a bit-band alias, memory, a device not
 * met yet, an access that does not fit it): the slow path decides. */
#define VM_BUS_NOT_SEEN 2
/* The bit-band alias windows (ARMv7-M ARM B3.1.2), which bus.c maps. */
#define VM_BUS_BB_SRAM_ALIAS 0x22000000u
#define VM_BUS_BB_PERI_ALIAS 0x42000000u
#define VM_BUS_BB_ALIAS_SIZE 0x02000000u
VM_INLINE const struct vm_device *vm_bus_device_seen(const struct vm_bus *bus, uint32_t addr,
                                                     unsigned size)
{
  if (bus->bitband && (addr - VM_BUS_BB_SRAM_ALIAS < VM_BUS_BB_ALIAS_SIZE ||
                       addr - VM_BUS_BB_PERI_ALIAS < VM_BUS_BB_ALIAS_SIZE))
    return NULL;
  const struct vm_device *d = bus->device_seen[(addr >> 12) & (VM_BUS_DEVICE_SEEN - 1)];
  if (!d || (uint64_t)(addr - d->base) + size > d->size || ((addr - d->base) & (size - 1)))
    return NULL;
  return d;
}

VM_INLINE int vm_bus_device_read(struct sonde_vm *vm, struct vm_bus *bus, uint32_t addr,
                                 unsigned size, uint32_t *value)
{
  const struct vm_device *d = vm_bus_device_seen(bus, addr, size);
  if (!d || !d->ops->read)
    return VM_BUS_NOT_SEEN;
  uint32_t v = 0;
  int rc = d->ops->read(d->ctx, vm, addr - d->base, size, &v, false);
  if (rc == VM_BUS_OK)
    *value = size == 4 ? v : (v & ((1u << (size * 8)) - 1));
  return rc;
}

VM_INLINE int vm_bus_device_write(struct sonde_vm *vm, struct vm_bus *bus, uint32_t addr,
                                  unsigned size, uint32_t value)
{
  const struct vm_device *d = vm_bus_device_seen(bus, addr, size);
  if (!d || !d->ops->write)
    return VM_BUS_NOT_SEEN;
  return d->ops->write(d->ctx, vm, addr - d->base, size, value, false);
}

/* Instruction fetch of a halfword (for the decoder / block builder): returns a
 * host pointer to executable memory at `addr` with at least `*avail` bytes, or
 * NULL when `addr` is not in executable memory. */
const uint8_t *vm_bus_code_ptr(const struct vm_bus *bus, uint32_t addr, uint32_t *avail,
                               unsigned *wait_states);

VM_INLINE uint64_t vm_bus_take_stalls(struct vm_bus *bus)
{
  uint64_t s = bus->stall_cycles;
  bus->stall_cycles = 0;
  return s;
}

#endif
