/* The core's CoreSight ROM table at 0xE00FF000 (ARMv7-M ARM C1.2.1 and
 * table C1-2 "ROM table entries"; ARMv6-M ARM C1.3; ADIv5.2 D3 "Class 0x1 ROM
 * tables", D1 "Component and Peripheral ID registers") and the SCS's own
 * identity registers (0xE000EFD0..0xE000EFFC).
 *
 * A debugger finds the debug blocks from the AHB-AP's BASE register
 * (jtag_dp.c): each 32-bit entry is the signed offset of a component from the
 * table, bit 1 (32-bit format) and bit 0 (present). Entries are listed for the
 * blocks this machine maps (SCS, DWT, FPB, ITM, TPIU, MTB, MTBDWT), then a zero entry
 * ends the table. The table reads the same from the core as from the AP. */
#include <stdlib.h>

#include "vm_internal.h"

#define ROM_BASE 0xE00FF000u
#define ROM_MAX 8
#define ARM_JEP106_ID 0x3Bu
#define ARM_JEP106_CONT 0x4u

struct vm_rom {
  uint32_t entry[ROM_MAX + 1]; /* ends with 0 */
  uint16_t part;
};

/* PIDR4..7 at 0xFD0.., PIDR0..3 at 0xFE0.., CIDR0..3 at 0xFF0.. of an ARM
 * component with part number `part` and component class `cls`. */
uint32_t vm_coresight_id(uint32_t off, uint16_t part, unsigned rev, unsigned cls)
{
  switch (off) {
  case 0xFD0: return ARM_JEP106_CONT; /* PIDR4: 4 KiB, JEP106 continuation code */
  case 0xFE0: return part & 0xFFu;
  case 0xFE4: return ((part >> 8) & 0xFu) | ((ARM_JEP106_ID & 0xFu) << 4);
  case 0xFE8: return (ARM_JEP106_ID >> 4) | 0x8u /* JEDEC */ | ((rev & 0xFu) << 4);
  case 0xFF0: return 0x0D;
  case 0xFF4: return (cls & 0xFu) << 4;
  case 0xFF8: return 0x05;
  case 0xFFC: return 0xB1;
  default: return 0;
  }
}

static uint16_t rom_part(enum sonde_vm_core core)
{
  switch (core) {
  case SONDE_VM_CORE_M0PLUS: return 0x4C0;
  case SONDE_VM_CORE_M3: return 0x4C3;
  case SONDE_VM_CORE_M4:
  case SONDE_VM_CORE_M4F: return 0x4C4;
  case SONDE_VM_CORE_M33: return 0x4C9;
  }
  return 0x4C3;
}

static int rom_read(void *ctx, struct sonde_vm *vm, uint32_t offset, unsigned size,
                    uint32_t *value, bool debug)
{
  (void)vm;
  (void)debug;
  const struct vm_rom *r = ctx;
  uint32_t w = offset & ~3u, v = 0;
  if (w < 4 * (ROM_MAX + 1))
    v = r->entry[w / 4];
  else if (w == 0xFCC)
    v = 1; /* MEMTYPE.SYSMEM: system memory is on this bus */
  else if (w >= 0xFD0)
    v = vm_coresight_id(w, r->part, 0, 0x1); /* class 0x1: ROM table */
  v >>= 8 * (offset & 3);
  *value = size == 4 ? v : v & ((1u << (8 * size)) - 1);
  return VM_BUS_OK;
}

static int rom_write(void *ctx, struct sonde_vm *vm, uint32_t offset, unsigned size,
                     uint32_t value, bool debug)
{
  (void)ctx, (void)vm, (void)offset, (void)size, (void)value, (void)debug;
  return VM_BUS_OK; /* read-only: writes are ignored */
}

static const struct vm_device_ops rom_ops = {"rom-table", rom_read, rom_write};

int vm_rom_init(struct sonde_vm *vm)
{
  struct vm_rom *r = calloc(1, sizeof *r);
  if (!r)
    return SONDE_E_NOMEM;
  r->part = rom_part(vm->core);
  uint32_t bases[ROM_MAX] = {0xE000E000u, VM_DWT_BASE, 0xE0002000u, VM_ITM_BASE, VM_TPIU_BASE};
  unsigned nb = 5, n = 0;
  if (vm->mtb)
    bases[nb++] = vm->mtb->regs_base;
  if (vm->mtb && vm->mtb->dwt)
    bases[nb++] = vm->mtb->dwt->regs_base;
  for (unsigned i = 0; i < nb; i++) {
    uint32_t cid0 = 0;
    if (vm_bus_debug_read(vm, &vm->bus, bases[i] + 0xFF0, &cid0, 4) == VM_BUS_OK && cid0 == 0x0D)
      r->entry[n++] = (bases[i] - ROM_BASE) | 3u; /* signed offset, 32-bit format, present */
  }
  int rc = vm_bus_add_device(&vm->bus, ROM_BASE, 0x1000, &rom_ops, r);
  if (rc < 0) {
    free(r);
    return rc;
  }
  vm->rom = r;
  return 0;
}

void vm_rom_free(struct sonde_vm *vm)
{
  free(vm->rom);
  vm->rom = NULL;
}
