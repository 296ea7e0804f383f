/* Loading firmware images into the virtual Cortex-M: ELF32 executables and raw
 * binaries (include/sonde/vm.h: sonde_vm_load_elf, sonde_vm_load_binary).
 *
 * ELF: System V ABI "Object Files" (ELF header, program headers) with the ARM
 * supplement "ELF for the Arm Architecture" (IHI 0044: EM_ARM = 40, little-endian
 * ELFCLASS32 images for M-profile). Only what a loader needs is parsed — the
 * ELF header and the PT_LOAD program headers; sections and symbols are
 * src/sym's job. Each PT_LOAD segment goes to its physical (load) address
 * p_paddr: file bytes first, then zeros up to p_memsz. A flash image's .data
 * therefore lands at its load address in flash, and the startup code copies it.
 *
 * Every segment is checked (bounds in the file, inside the machine's memory
 * regions) before any byte is written, so a rejected image leaves memory as
 * it was. The VM module has no dependencies, so this is its own small parser. */
#include <stdio.h>
#include <string.h>

#include "vm_internal.h"

/* ELF header (Elf32_Ehdr) field offsets. */
enum {
  EH_IDENT_CLASS = 4, EH_IDENT_DATA = 5, EH_IDENT_VERSION = 6,
  EH_TYPE = 16, EH_MACHINE = 18, EH_VERSION = 20, EH_ENTRY = 24, EH_PHOFF = 28,
  EH_SHOFF = 32, EH_FLAGS = 36, EH_EHSIZE = 40, EH_PHENTSIZE = 42, EH_PHNUM = 44,
  EH_SIZE = 52,
};
/* Program header (Elf32_Phdr) field offsets. */
enum {
  PH_TYPE = 0, PH_OFFSET = 4, PH_VADDR = 8, PH_PADDR = 12, PH_FILESZ = 16, PH_MEMSZ = 20,
  PH_FLAGS = 24, PH_ALIGN = 28, PH_SIZE = 32,
};
enum { ELFCLASS32 = 1, ELFDATA2LSB = 1, EV_CURRENT = 1, ET_EXEC = 2, EM_ARM = 40, PT_LOAD = 1 };

#define LOADER_MAX_SEGMENTS 64

static uint32_t rd16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t rd32(const uint8_t *p)
{
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Is [addr, addr + len) entirely inside memory regions (not devices)? On
 * failure *bad is the first address that is not. len may be 0. */
static bool in_memory(const struct vm_bus *bus, uint32_t addr, uint32_t len, uint32_t *bad)
{
  uint64_t a = addr, end = (uint64_t)addr + len;
  while (a < end) {
    const struct vm_region *r = vm_bus_find_region(bus, (uint32_t)a);
    if (!r) {
      *bad = (uint32_t)a;
      return false;
    }
    a = (uint64_t)r->base + r->size;
  }
  return true;
}

/* Write `len` bytes (or zeros when data is NULL) through the loader path. */
static int load_bytes(struct sonde_vm *vm, uint32_t addr, const uint8_t *data, uint32_t len,
                      uint32_t *bad)
{
  static const uint8_t zeros[4096];
  if (data)
    return vm_bus_load(&vm->bus, addr, data, len, bad);
  while (len) {
    uint32_t n = len < sizeof zeros ? len : (uint32_t)sizeof zeros;
    if (vm_bus_load(&vm->bus, addr, zeros, n, bad) != VM_BUS_OK)
      return VM_BUS_ERROR;
    addr += n;
    len -= n;
  }
  return VM_BUS_OK;
}

struct segment {
  unsigned index; /* program header number, for messages */
  uint32_t offset, paddr, filesz, memsz;
};

int sonde_vm_load_elf(struct sonde_vm *vm, const void *data, size_t len, const char *name)
{
  const uint8_t *p = data;
  struct sonde_diag *d = &vm->diag;
  if (!name)
    name = "firmware";
  if (!data && len)
    return sonde_diag_set(d, SONDE_E_ARG, "%s: no data", name);
  if (len < 4 || memcmp(p, "\177ELF", 4) != 0)
    return sonde_diag_set(d, SONDE_E_FORMAT, "%s: offset 0: not an ELF file (bad magic)", name);
  if (len < EH_SIZE)
    return sonde_diag_set(d, SONDE_E_TRUNCATED,
                          "%s: offset %zu: truncated ELF header (%zu of 52 bytes)", name, len, len);
  if (p[EH_IDENT_CLASS] != ELFCLASS32)
    return sonde_diag_set(d, SONDE_E_UNSUPPORTED,
                          "%s: offset 4: not a 32-bit ELF file (class %u); Cortex-M images are ELF32",
                          name, p[EH_IDENT_CLASS]);
  if (p[EH_IDENT_DATA] != ELFDATA2LSB)
    return sonde_diag_set(d, SONDE_E_UNSUPPORTED,
                          "%s: offset 5: not a little-endian ELF file (data encoding %u)", name,
                          p[EH_IDENT_DATA]);
  if (p[EH_IDENT_VERSION] != EV_CURRENT || rd32(p + EH_VERSION) != EV_CURRENT)
    return sonde_diag_set(d, SONDE_E_FORMAT, "%s: offset 6: bad ELF version", name);
  uint32_t machine = rd16(p + EH_MACHINE);
  if (machine != EM_ARM)
    return sonde_diag_set(d, SONDE_E_UNSUPPORTED,
                          "%s: offset 18: not an ARM executable (e_machine %u, expected 40 EM_ARM)",
                          name, machine);
  uint32_t type = rd16(p + EH_TYPE);
  if (type != ET_EXEC)
    return sonde_diag_set(d, SONDE_E_UNSUPPORTED,
                          "%s: offset 16: not an executable (e_type %u, expected 2 ET_EXEC; "
                          "link the object first)", name, type);
  uint32_t phoff = rd32(p + EH_PHOFF), phentsize = rd16(p + EH_PHENTSIZE),
           phnum = rd16(p + EH_PHNUM);
  if (phnum == 0)
    return sonde_diag_set(d, SONDE_E_FORMAT, "%s: offset 44: no program headers", name);
  if (phnum == 0xFFFF)
    return sonde_diag_set(d, SONDE_E_UNSUPPORTED,
                          "%s: offset 44: extended program header count is not supported", name);
  if (phentsize < PH_SIZE)
    return sonde_diag_set(d, SONDE_E_FORMAT,
                          "%s: offset 42: program header size %u is below 32", name, phentsize);
  if ((uint64_t)phoff + (uint64_t)phnum * phentsize > len)
    return sonde_diag_set(d, SONDE_E_TRUNCATED,
                          "%s: offset %u: program header table (%u x %u bytes) extends past the "
                          "end of the file (%zu bytes)", name, phoff, phnum, phentsize, len);

  /* Pass 1: validate every loadable segment. */
  struct segment seg[LOADER_MAX_SEGMENTS];
  unsigned nseg = 0;
  for (uint32_t i = 0; i < phnum; i++) {
    const uint8_t *ph = p + phoff + (size_t)i * phentsize;
    uint64_t at = (uint64_t)phoff + (uint64_t)i * phentsize;
    if (rd32(ph + PH_TYPE) != PT_LOAD)
      continue;
    struct segment s = {i, rd32(ph + PH_OFFSET), rd32(ph + PH_PADDR), rd32(ph + PH_FILESZ),
                        rd32(ph + PH_MEMSZ)};
    if (s.memsz == 0)
      continue;
    if (s.filesz > s.memsz)
      return sonde_diag_set(d, SONDE_E_FORMAT,
                            "%s: offset %llu: ELF segment %u has p_filesz 0x%x above p_memsz 0x%x",
                            name, (unsigned long long)at + PH_FILESZ, i, s.filesz, s.memsz);
    if ((uint64_t)s.offset + s.filesz > len)
      return sonde_diag_set(d, SONDE_E_TRUNCATED,
                            "%s: offset %llu: ELF segment %u (file bytes 0x%x..0x%llx) extends past "
                            "the end of the file (%zu bytes)", name,
                            (unsigned long long)at + PH_OFFSET, i, s.offset,
                            (unsigned long long)s.offset + s.filesz, len);
    if ((uint64_t)s.paddr + s.memsz > 0x100000000ull)
      return sonde_diag_set(d, SONDE_E_RANGE,
                            "%s: ELF segment %u at 0x%08x (0x%x bytes) wraps past the top of the "
                            "address space", name, i, s.paddr, s.memsz);
    uint32_t bad;
    if (!in_memory(&vm->bus, s.paddr, s.memsz, &bad)) {
      const char *mname = vm->machine ? sonde_machine_name(vm->machine) : "this machine";
      if (bad == s.paddr)
        return sonde_diag_set(d, SONDE_E_RANGE,
                              "%s: ELF segment %u at 0x%08x (0x%x bytes) is outside every memory "
                              "region of %s", name, i, s.paddr, s.memsz, mname);
      return sonde_diag_set(d, SONDE_E_RANGE,
                            "%s: ELF segment %u at 0x%08x (0x%x bytes) does not fit in the memory "
                            "of %s: 0x%08x is outside every memory region", name, i, s.paddr,
                            s.memsz, mname, bad);
    }
    if (nseg == LOADER_MAX_SEGMENTS)
      return sonde_diag_set(d, SONDE_E_UNSUPPORTED, "%s: more than %d loadable segments", name,
                            LOADER_MAX_SEGMENTS);
    seg[nseg++] = s;
  }
  if (nseg == 0)
    return sonde_diag_set(d, SONDE_E_FORMAT, "%s: no loadable (PT_LOAD) segments", name);

  /* Pass 2: write them. */
  for (unsigned k = 0; k < nseg; k++) {
    const struct segment *s = &seg[k];
    uint32_t bad = 0;
    if (load_bytes(vm, s->paddr, p + s->offset, s->filesz, &bad) != VM_BUS_OK ||
        load_bytes(vm, s->paddr + s->filesz, NULL, s->memsz - s->filesz, &bad) != VM_BUS_OK)
      return sonde_diag_set(d, SONDE_E_RANGE, "%s: ELF segment %u: cannot write 0x%08x", name,
                            s->index, bad);
  }
  sonde_diag_clear(d);
  return 0;
}

int sonde_vm_load_binary(struct sonde_vm *vm, const void *data, size_t len, uint32_t base)
{
  struct sonde_diag *d = &vm->diag;
  if (!data && len)
    return sonde_diag_set(d, SONDE_E_ARG, "binary image: no data");
  if (len == 0)
    return sonde_diag_set(d, SONDE_E_FORMAT, "binary image: empty");
  if ((uint64_t)base + len > 0x100000000ull)
    return sonde_diag_set(d, SONDE_E_RANGE,
                          "binary image of %zu bytes at 0x%08x wraps past the top of the address "
                          "space", len, base);
  uint32_t bad;
  if (!in_memory(&vm->bus, base, (uint32_t)len, &bad))
    return sonde_diag_set(d, SONDE_E_RANGE,
                          "binary image at 0x%08x (0x%zx bytes): 0x%08x is outside every memory "
                          "region", base, len, bad);
  if (load_bytes(vm, base, data, (uint32_t)len, &bad) != VM_BUS_OK)
    return sonde_diag_set(d, SONDE_E_RANGE, "binary image: cannot write 0x%08x", bad);
  sonde_diag_clear(d);
  return 0;
}
