/* The core's CoreSight ROM table (dbg_rom.c) and the identity registers every
 * ARM CoreSight component carries at 0xFD0..0xFFC. */
#ifndef SONDE_VM_DBG_ROM_H
#define SONDE_VM_DBG_ROM_H

#include <stdint.h>

struct sonde_vm;

#define VM_ROM_TABLE_BASE 0xE00FF000u

/* Map the ROM table (after every debug block is mapped); vm.c calls it. */
int vm_rom_init(struct sonde_vm *vm);
void vm_rom_free(struct sonde_vm *vm);
/* PIDR4 (0xFD0), PIDR0-3 (0xFE0..), CIDR0-3 (0xFF0..) of an ARM component
 * with part number `part`, revision `rev` and component class `cls` (0x1 ROM
 * table, 0x9 CoreSight, 0xE generic IP); 0 for other offsets. */
uint32_t vm_coresight_id(uint32_t off, uint16_t part, unsigned rev, unsigned cls);

#endif
