/* The ARM JTAG-DP and its AHB-AP (ADIv5.2 B2-B3, C2), over the VM's debug
 * bus: the AP's memory accesses are the debugger accesses of
 * sonde_vm_read_mem/_write_mem (no effect on the core's timing), of the size
 * CSW.Size gives, so a 32-bit write of DHCSR is one DHCSR write (dbg_halt.c).
 *
 * The JTAG-DP pipeline (B3.3): a DPACC or APACC scan shifts out the result of
 * the previous read with an OK/FAULT acknowledge, and its own request is done
 * when Update-DR is entered; a read's data comes out in the next scan (the
 * debugger ends a run of reads with a read of RDBUFF, which returns the last
 * AP read again without a new access). A write leaves the read data as it
 * was, so a debugger that repeats a scan after WAIT still finds it.
 * While the AP is busy (ap_busy_tck TCKs after an access, 0 by default) a
 * scan captures WAIT and its request is ignored; with CTRL/STAT.ORUNDETECT a
 * WAIT sets STICKYORUN instead, after which scans are answered OK and AP
 * requests ignored until the debugger clears it (B3.3.3, overrun detection). A bus error (an unmapped address, a bad size)
 * sets STICKYERR; while a sticky flag is set, or before the debug power-up
 * handshake (CDBGPWRUPREQ/ACK), AP requests are not performed. Sticky flags
 * are cleared by writing one to them in CTRL/STAT, as on every JTAG-DP. */
#include <string.h>

#include "jtag.h"
#include "machine.h"
#include "vm_internal.h"

#define DBGKEY 0xA05Fu
#define DHCSR_ADDR 0xE000EDF0u
/* CSW (C2.6.4): Size[2:0], AddrInc[5:4], DeviceEn[6] (reads 1), Prot[30:24],
 * DbgSwEnable[31]. Packed increment (AddrInc 0b10) is not implemented: it
 * reads back as off, which tells the debugger so. */
#define CSW_WRITABLE 0xFF000037u
#define CSW_DEVICEEN (1u << 6)
#define CSW_ADDRINC_MASK (3u << 4)
#define CSW_ADDRINC_SINGLE (1u << 4)
#define TAR_AUTOINC_BLOCK 0xFFFu /* TAR[11:0] increments: 4 KiB blocks (Cortex-M AHB-AP) */

static uint32_t default_idcode(enum sonde_vm_core core)
{
  switch (core) {
  case SONDE_VM_CORE_M0PLUS: return 0x0BA01477u; /* CoreSight JTAG-DP, DPv1 */
  case SONDE_VM_CORE_M33: return 0x4BA06477u;
  default: return 0x4BA00477u; /* Cortex-M3/M4 JTAG-DP */
  }
}

static uint32_t default_ap_idr(enum sonde_vm_core core)
{
  switch (core) {
  case SONDE_VM_CORE_M0PLUS: return 0x04770031u; /* AHB-AP, Cortex-M0+ */
  case SONDE_VM_CORE_M33: return 0x04770015u;    /* AHB5-AP */
  default: return 0x24770011u;                   /* AHB-AP, Cortex-M3/M4 */
  }
}

void vm_jtag_dp_init(struct vm_jtag_dp *dp, struct sonde_vm *vm)
{
  memset(dp, 0, sizeof *dp);
  dp->vm = vm;
  const struct sonde_machine *m = vm->machine;
  dp->idcode = m && m->dp_idcode ? m->dp_idcode : default_idcode(vm->core);
  dp->dpv = m && m->dp_idcode ? m->dp_version : (vm->core == SONDE_VM_CORE_M0PLUS ? 1 : 0);
  dp->ap_idr = default_ap_idr(vm->core);
  dp->csw = CSW_ADDRINC_SINGLE | 2u; /* word accesses, single increment */
}

static bool ap_busy(const struct vm_jtag_dp *dp)
{
  return dp->tck < dp->busy_until;
}

static uint32_t ctrl_read(const struct vm_jtag_dp *dp)
{
  uint32_t v = dp->ctrl;
  if (v & DP_CDBGRSTREQ)
    v |= DP_CDBGRSTACK;
  if (v & DP_CDBGPWRUPREQ)
    v |= DP_CDBGPWRUPACK;
  if (v & DP_CSYSPWRUPREQ)
    v |= DP_CSYSPWRUPACK;
  return v;
}

static void ctrl_write(struct vm_jtag_dp *dp, uint32_t v)
{
  const uint32_t sticky = DP_STICKYORUN | DP_STICKYCMP | DP_STICKYERR;
  const uint32_t control = DP_ORUNDETECT | (3u << 2) | (0xFu << 8) | (0xFFFu << 12) |
                           DP_CDBGRSTREQ | DP_CDBGPWRUPREQ | DP_CSYSPWRUPREQ;
  dp->ctrl = (dp->ctrl & sticky & ~v) | (v & control); /* sticky bits: write one to clear */
}

/* ---- AHB-AP ---------------------------------------------------------------- */

static bool mem_access(struct vm_jtag_dp *dp, uint32_t addr, unsigned size, bool write,
                       uint32_t *lanes)
{
  if (dp->sync)
    dp->sync(dp->sync_ctx);
  struct sonde_vm *vm = dp->vm;
  addr &= ~(size - 1); /* the AHB-AP makes aligned accesses */
  unsigned shift = 8 * (addr & 3);
  uint32_t v = 0;
  int rc;
  if (write) {
    v = *lanes >> shift; /* the byte lanes of the address */
    rc = sonde_vm_write_mem(vm, addr, &v, size);
    /* A debugger's DHCSR write that clears C_HALT resumes a halted core. */
    if (rc == 0 && addr == DHCSR_ADDR && size == 4 && (v >> 16) == DBGKEY && vm->dbgh &&
        vm->dbgh->halted && !(vm->dbgh->dhcsr & DHCSR_C_HALT))
      vm_dbgh_set_halted(vm, false);
  } else {
    rc = sonde_vm_read_mem(vm, addr, &v, size);
    *lanes = rc == 0 ? v << shift : 0;
  }
  if (rc < 0) {
    dp->ctrl |= DP_STICKYERR;
    dp->bus_errors++;
    return false;
  }
  return true;
}

static void tar_increment(struct vm_jtag_dp *dp, unsigned size)
{
  if ((dp->csw & CSW_ADDRINC_MASK) == CSW_ADDRINC_SINGLE)
    dp->tar = (dp->tar & ~TAR_AUTOINC_BLOCK) | ((dp->tar + size) & TAR_AUTOINC_BLOCK);
}

static uint32_t ap_read(struct vm_jtag_dp *dp, unsigned reg)
{
  uint32_t v = 0;
  unsigned size = 1u << (dp->csw & 7);
  switch (reg) {
  case AP_CSW: return dp->csw | CSW_DEVICEEN;
  case AP_TAR: return dp->tar;
  case AP_DRW:
    if ((dp->csw & 7) > 2) {
      dp->ctrl |= DP_STICKYERR; /* no 64/128-bit accesses on an AHB-AP */
      dp->bus_errors++;
      return 0;
    }
    if (mem_access(dp, dp->tar, size, false, &v))
      tar_increment(dp, size);
    return v;
  case AP_BD0: case AP_BD0 + 4: case AP_BD0 + 8: case AP_BD0 + 12:
    mem_access(dp, (dp->tar & ~0xFu) + (reg - AP_BD0), 4, false, &v);
    return v;
  case AP_CFG: return 0; /* little-endian, 32-bit addresses */
  case AP_BASE: return VM_ROM_TABLE_BASE | 3u; /* ADIv5 format, an entry present */
  case AP_IDR: return dp->ap_idr;
  default: return 0;
  }
}

static void ap_write(struct vm_jtag_dp *dp, unsigned reg, uint32_t v)
{
  unsigned size = 1u << (dp->csw & 7);
  switch (reg) {
  case AP_CSW:
    dp->csw = v & CSW_WRITABLE;
    if ((dp->csw & CSW_ADDRINC_MASK) > CSW_ADDRINC_SINGLE)
      dp->csw &= ~CSW_ADDRINC_MASK; /* packed / reserved: not implemented */
    break;
  case AP_TAR: dp->tar = v; break;
  case AP_DRW:
    if ((dp->csw & 7) > 2) {
      dp->ctrl |= DP_STICKYERR;
      dp->bus_errors++;
      break;
    }
    if (mem_access(dp, dp->tar, size, true, &v))
      tar_increment(dp, size);
    break;
  case AP_BD0: case AP_BD0 + 4: case AP_BD0 + 8: case AP_BD0 + 12:
    mem_access(dp, (dp->tar & ~0xFu) + (reg - AP_BD0), 4, true, &v);
    break;
  default: break; /* read-only or reserved */
  }
}

/* ---- the scan chains ----------------------------------------------------------- */

uint64_t vm_jtag_dp_capture(struct vm_jtag_dp *dp, unsigned ir)
{
  if (ir == JTAG_IR_ABORT)
    return 0;
  /* With overrun detection on, a WAIT sets STICKYORUN and from then on scans
   * are answered OK and AP requests ignored until the debugger clears it; the
   * CTRL/STAT write that clears it must not be refused in turn. */
  if (ap_busy(dp) && !(dp->ctrl & DP_STICKYORUN)) {
    dp->wait_scan = true;
    dp->waits++;
    if (dp->ctrl & DP_ORUNDETECT)
      dp->ctrl |= DP_STICKYORUN;
    return JTAG_ACK_WAIT;
  }
  dp->wait_scan = false;
  return (uint64_t)dp->result << 3 | JTAG_ACK_OK;
}

static void dp_access(struct vm_jtag_dp *dp, unsigned a, bool read, uint32_t data)
{
  uint32_t v = 0;
  switch (a) {
  case 0x0: /* DPv1: DPIDR (read-only); DPv0: reserved */
    v = dp->dpv ? dp->idcode : 0;
    break;
  case 0x4:
    if (dp->dpv && (dp->select & 0xF))
      break; /* CTRL/STAT is bank 0; the other banks are SW-DP registers */
    if (read)
      v = ctrl_read(dp);
    else
      ctrl_write(dp, data);
    break;
  case 0x8:
    if (read)
      v = dp->select;
    else
      dp->select = data;
    break;
  default: /* 0xC RDBUFF: the last AP read again */
    v = dp->rdbuff;
    break;
  }
  if (read) {
    dp->dp_reads++;
    dp->result = v;
  } else {
    dp->dp_writes++;
  }
}

static void ap_access(struct vm_jtag_dp *dp, unsigned a, bool read, uint32_t data)
{
  if (read)
    dp->result = dp->rdbuff = 0;
  if (dp->ctrl & (DP_STICKYERR | DP_STICKYORUN))
    return; /* not performed until the debugger clears the sticky flags */
  if (!(ctrl_read(dp) & DP_CDBGPWRUPACK)) {
    dp->ctrl |= DP_STICKYERR; /* the debug domain is powered down */
    dp->bus_errors++;
    return;
  }
  unsigned reg = (dp->select & 0xF0) | a;
  if (dp->select >> 24) /* only AP 0 exists: the others read as zero */
    return;
  if (read) {
    dp->result = dp->rdbuff = ap_read(dp, reg);
    dp->ap_reads++;
  } else {
    ap_write(dp, reg, data);
    dp->ap_writes++;
  }
  dp->busy_until = dp->tck + dp->ap_busy_tck;
}

void vm_jtag_dp_update(struct vm_jtag_dp *dp, unsigned ir, uint64_t dr)
{
  bool read = dr & 1;
  unsigned a = (unsigned)(dr >> 1 & 3) << 2;
  uint32_t data = (uint32_t)(dr >> 3);
  if (ir == JTAG_IR_ABORT) {
    if (a == 0 && !read && (data & 1))
      dp->busy_until = 0; /* DAPABORT: the AP transaction is abandoned */
    return;
  }
  if (dp->wait_scan)
    return; /* the scan was answered WAIT: the debugger repeats it */
  if (ir == JTAG_IR_DPACC)
    dp_access(dp, a, read, data);
  else
    ap_access(dp, a, read, data);
}
