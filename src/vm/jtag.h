/* The virtual chip's JTAG debug port (internal): a JTAG TAP (jtag_tap.c) in
 * front of an ARM JTAG-DP with one AHB-AP on the VM's debug bus (jtag_dp.c),
 * served to OpenOCD's remote_bitbang adapter by jtag_server.c.
 *
 * Specs: IEEE 1149.1 (TAP controller states); ARM Debug Interface v5.2 (IHI
 * 0031), B3 "The JTAG Debug Port" (IR instructions, DPACC/APACC scan chains,
 * OK/FAULT and WAIT acknowledges, the read pipeline), B2 "DP registers"
 * (CTRL/STAT, SELECT, RDBUFF, DPIDR), C2 "MEM-AP" (CSW, TAR, DRW, BD0-3, CFG,
 * BASE, IDR); Cortex-M3/M4 TRMs (the JTAG-DP IDCODE 0x4BA00477, AHB-AP IDR). */
#ifndef SONDE_VM_JTAG_H
#define SONDE_VM_JTAG_H

#include <stdbool.h>
#include <stdint.h>

struct sonde_vm;

/* IR instructions of the ARM JTAG-DP (4-bit IR). */
enum { JTAG_IR_ABORT = 0x8, JTAG_IR_DPACC = 0xA, JTAG_IR_APACC = 0xB, JTAG_IR_IDCODE = 0xE,
       JTAG_IR_BYPASS = 0xF };
/* Acknowledges in the low 3 bits of a DPACC/APACC capture. */
enum { JTAG_ACK_WAIT = 1, JTAG_ACK_OK = 2 };

/* CTRL/STAT bits (ADIv5.2 B2.2.2). */
#define DP_ORUNDETECT (1u << 0)
#define DP_STICKYORUN (1u << 1)
#define DP_STICKYCMP (1u << 4)
#define DP_STICKYERR (1u << 5)
#define DP_CDBGRSTREQ (1u << 26)
#define DP_CDBGRSTACK (1u << 27)
#define DP_CDBGPWRUPREQ (1u << 28)
#define DP_CDBGPWRUPACK (1u << 29)
#define DP_CSYSPWRUPREQ (1u << 30)
#define DP_CSYSPWRUPACK (1u << 31)

/* AHB-AP register offsets (APBANKSEL << 4 | A[3:2] << 2). */
enum { AP_CSW = 0x00, AP_TAR = 0x04, AP_DRW = 0x0C, AP_BD0 = 0x10, AP_CFG = 0xF4,
       AP_BASE = 0xF8, AP_IDR = 0xFC };

struct vm_jtag_dp {
  struct sonde_vm *vm;
  uint32_t idcode;      /* the TAP's IDCODE (and DPIDR on a DPv1) */
  unsigned dpv;         /* DP architecture version: 0 or 1 */
  uint32_t ap_idr;      /* AHB-AP identification */
  unsigned ap_busy_tck; /* TCKs an AP access keeps the AP busy (WAIT meanwhile); 0: none */
  uint32_t ctrl;        /* CTRL/STAT: control and sticky bits (the ACKs are computed) */
  uint32_t select;
  uint32_t result;      /* the result of the last DPACC/APACC read: shifted out next */
  uint32_t rdbuff;      /* the last AP read (RDBUFF) */
  bool wait_scan;       /* this scan captured WAIT: its update is ignored */
  uint64_t tck;         /* TCK rising edges so far (the TAP counts them) */
  uint64_t busy_until;  /* tck at which the last AP access completes */
  uint32_t csw, tar;    /* AHB-AP */
  /* Called before every memory access of the AP (the server catches the VM up
   * with the TCKs it owes it); may be NULL. */
  void (*sync)(void *ctx);
  void *sync_ctx;
  /* Counters for --stats and the tests. */
  uint64_t dp_reads, dp_writes, ap_reads, ap_writes, waits, bus_errors;
};

enum vm_tap_state {
  TAP_RESET, TAP_IDLE, TAP_SELECT_DR, TAP_CAPTURE_DR, TAP_SHIFT_DR, TAP_EXIT1_DR, TAP_PAUSE_DR,
  TAP_EXIT2_DR, TAP_UPDATE_DR, TAP_SELECT_IR, TAP_CAPTURE_IR, TAP_SHIFT_IR, TAP_EXIT1_IR,
  TAP_PAUSE_IR, TAP_EXIT2_IR, TAP_UPDATE_IR,
};

struct vm_jtag_tap {
  enum vm_tap_state state;
  uint8_t ir, ir_shift;
  uint64_t dr;      /* the selected data register while it shifts */
  unsigned dr_len;
  struct vm_jtag_dp *dp;
};

/* jtag_dp.c: set up for the VM's core and machine (IDCODE, DP version, AP IDR). */
void vm_jtag_dp_init(struct vm_jtag_dp *dp, struct sonde_vm *vm);
/* Capture-DR and Update-DR of the chains DPACC, APACC and ABORT (35 bits:
 * data[34:3], A[3:2] in bits 2:1, RnW in bit 0). */
uint64_t vm_jtag_dp_capture(struct vm_jtag_dp *dp, unsigned ir);
void vm_jtag_dp_update(struct vm_jtag_dp *dp, unsigned ir, uint64_t dr);

/* jtag_tap.c */
void vm_jtag_tap_init(struct vm_jtag_tap *t, struct vm_jtag_dp *dp);
/* TRST or five TMS-high clocks: Test-Logic-Reset, IR = IDCODE. */
void vm_jtag_tap_reset(struct vm_jtag_tap *t);
/* One rising edge of TCK with these TMS and TDI levels. */
void vm_jtag_tap_clock(struct vm_jtag_tap *t, bool tms, bool tdi);
/* The TDO level (the LSB of the register being shifted, else 0). */
static inline bool vm_jtag_tap_tdo(const struct vm_jtag_tap *t)
{
  if (t->state == TAP_SHIFT_DR)
    return t->dr & 1;
  if (t->state == TAP_SHIFT_IR)
    return t->ir_shift & 1;
  return false;
}

#endif
