/* Trace Port Interface Unit at 0xE0040000 (ARMv7-M ARM C1.10 "The Trace Port
 * Interface Unit"; Cortex-M3 TRM DDI 0337 / Cortex-M4 TRM DDI 0439 ch. 9
 * "TPIU"): SSPSR (0x000, supported port sizes: 1 bit), CSPSR (0x004), ACPR
 * (0x010, SWO prescaler: bit time = ACPR+1 TRACECLKIN cycles), SPPR (0x0F0,
 * 1 = SWO Manchester, 2 = SWO NRZ), FFSR (0x300), FFCR (0x304), the
 * integration and ID registers (RAZ except the IDs).
 *
 * FFCR.EnFCont (bit 1, reset 1) selects the formatter's 16-byte frames or
 * bypass; the frames are built in dbg_swo.c (docs/vm.md). */
#include "dbg.h"
#include "vm_internal.h"

static uint32_t id_reg(uint32_t off)
{
  switch (off) {
  case 0xFC8: return 0xCA0; /* DEVID: SWO NRZ + Manchester, async FIFO */
  case 0xFCC: return 0x11;  /* DEVTYPE: trace sink, port */
  case 0xFD0: return 0x04;
  case 0xFE0: return 0xA1;  /* PID0: Cortex-M3/M4 TPIU part 0x9A1 */
  case 0xFE4: return 0xB9;
  case 0xFE8: return 0x0B;
  case 0xFF0: return 0x0D;
  case 0xFF4: return 0x90;
  case 0xFF8: return 0x05;
  case 0xFFC: return 0xB1;
  }
  return 0;
}

static int tpiu_read(void *ctx, struct sonde_vm *vm, uint32_t offset, unsigned size,
                     uint32_t *value, bool debug)
{
  (void)ctx;
  (void)debug;
  struct vm_dbg *d = vm->dbg;
  uint32_t off = offset & ~3u, v;
  switch (off) {
  case 0x000: v = 1; break; /* SSPSR: port size 1 */
  case 0x004: v = d->cspsr; break;
  case 0x010: v = d->acpr; break;
  case 0x0F0: v = d->sppr; break;
  case 0x300: v = 0x8; break; /* FFSR: FtNonStop */
  case 0x304: v = d->ffcr; break;
  default: v = id_reg(off); break;
  }
  v >>= 8 * (offset & 3);
  *value = size == 4 ? v : v & ((1u << (8 * size)) - 1);
  return VM_BUS_OK;
}

static int tpiu_write(void *ctx, struct sonde_vm *vm, uint32_t offset, unsigned size,
                      uint32_t value, bool debug)
{
  (void)ctx;
  (void)debug;
  struct vm_dbg *d = vm->dbg;
  uint32_t off = offset & ~3u;
  uint32_t shift = 8 * (offset & 3);
  uint32_t mask = (size == 4 ? 0xFFFFFFFFu : ((1u << (8 * size)) - 1)) << shift;
  value <<= shift;
#define MERGE(r, m) (r) = (((r) & ~mask) | (value & mask)) & (m)
  switch (off) {
  case 0x004: MERGE(d->cspsr, 1u); break;
  case 0x010: MERGE(d->acpr, 0x1FFFu); break;
  case 0x0F0: MERGE(d->sppr, 3u); break;
  case 0x304: MERGE(d->ffcr, 0x102u); break;
  default: break;
  }
#undef MERGE
  return VM_BUS_OK;
}

const struct vm_device_ops vm_tpiu_ops = {"tpiu", tpiu_read, tpiu_write};
