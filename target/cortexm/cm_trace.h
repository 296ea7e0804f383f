/* Target-side setup of the Cortex-M debug and trace blocks: DEMCR, DWT, ITM
 * and TPIU/SWO, written as production firmware would (portable C99, no libc).
 * Registers and bits: ARMv7-M ARM (DDI 0403E) C1.6.5 DEMCR, C1.7 ITM, C1.8
 * DWT, C1.10 TPIU. Works on silicon and on Sonde's virtual Cortex-M. */
#ifndef SONDE_CM_TRACE_H
#define SONDE_CM_TRACE_H

#include <stdarg.h>
#include <stdint.h>

#define CM_REG(a) (*(volatile uint32_t *)(a))
#define CM_DEMCR CM_REG(0xE000EDFCu)
#define CM_ITM_STIM(n) CM_REG(0xE0000000u + 4u * (n))
#define CM_ITM_STIM8(n) (*(volatile uint8_t *)(0xE0000000u + 4u * (n)))
#define CM_ITM_TER CM_REG(0xE0000E00u)
#define CM_ITM_TPR CM_REG(0xE0000E40u)
#define CM_ITM_TCR CM_REG(0xE0000E80u)
#define CM_ITM_LAR CM_REG(0xE0000FB0u)
#define CM_DWT_CTRL CM_REG(0xE0001000u)
#define CM_DWT_CYCCNT CM_REG(0xE0001004u)
#define CM_DWT_PCSR CM_REG(0xE000101Cu)
#define CM_DWT_COMP(n) CM_REG(0xE0001020u + 16u * (n))
#define CM_DWT_MASK(n) CM_REG(0xE0001024u + 16u * (n))
#define CM_DWT_FUNCTION(n) CM_REG(0xE0001028u + 16u * (n))
#define CM_TPIU_CSPSR CM_REG(0xE0040004u)
#define CM_TPIU_ACPR CM_REG(0xE0040010u)
#define CM_TPIU_SPPR CM_REG(0xE00400F0u)
#define CM_TPIU_FFCR CM_REG(0xE0040304u)

#define CM_DEMCR_TRCENA (1u << 24)
#define CM_ITM_TCR_ITMENA (1u << 0)
#define CM_ITM_TCR_TSENA (1u << 1)
#define CM_ITM_TCR_SYNCENA (1u << 2)
#define CM_ITM_TCR_TXENA (1u << 3)
#define CM_DWT_CTRL_CYCCNTENA (1u << 0)
#define CM_DWT_CTRL_PCSAMPLENA (1u << 12)
#define CM_DWT_CTRL_EXCTRCENA (1u << 16)
#define CM_DWT_FUNCTION_CYCMATCH (1u << 7)
#define CM_DWT_FUNCTION_DATAVMATCH (1u << 8)
#define CM_DWT_FUNCTION_LNK1ENA (1u << 9)
#define CM_DWT_FUNCTION_MATCHED (1u << 24)

/* TPIU: SWO pin at traceclk_hz / (prescaler + 1), NRZ (nrz != 0) or
 * Manchester, formatter bypassed. */
void cm_tpiu_swo(uint32_t prescaler, int nrz);
/* ITM: enable with the given stimulus ports, local timestamps (ts), sync
 * packets (sync) and DWT hardware packets (hw); trace bus ID 1. Also sets
 * DEMCR.TRCENA. */
void cm_itm_setup(uint32_t ports, int ts, int sync, int hw);
/* Write a character/string to a stimulus port, polling FIFOREADY first (so
 * no character is lost however slow the pin). No-op if the port is off. */
void cm_itm_putc(unsigned port, char c);
void cm_itm_puts(unsigned port, const char *s);
/* printf to a stimulus port: %d %u %x %08x %s %c %% (no floats). */
int cm_itm_printf(unsigned port, const char *fmt, ...);
int cm_itm_vprintf(unsigned port, const char *fmt, va_list ap);
/* ITM global timestamps (ARMv7-M C1.7.6 ITM_TCR.GTSFREQ, D4.2.5): 0 off, 1 about
 * every 128 cycles, 2 about every 8192, 3 after every packet that finds the
 * output FIFO empty. Call after cm_itm_setup (the ITM must be unlocked). */
void cm_itm_global_timestamps(unsigned gtsfreq);
/* DWT periodic PC sampling: ctrl13 is DWT_CTRL[12:0] as in FrankenTrace's
 * Table 2 (e.g. 0x1209: every 5120 cycles); CYCCNT starts at cyccnt0. The
 * first sample comes (POSTINIT+1) taps after this call's DWT_CTRL write. */
void cm_dwt_pc_sampling(uint32_t ctrl13, uint32_t cyccnt0);
/* DWT exception trace (entry, exit, return packets) on or off. */
void cm_dwt_exception_trace(int on);
/* DWT comparator n on the 2^mask_bits bytes at addr with FUNCTION fn
 * (ARMv7-M C1.8.17, e.g. 0x2 data value R/W, 0x22 data value + address
 * offset, 0x1 PC of the access, 0x3 PC + data). */
void cm_dwt_data_trace(unsigned n, const volatile void *addr, unsigned mask_bits, uint32_t fn);
/* DWT comparator 0 against the cycle counter (C1.8.4, FUNCTION0.CYCMATCH):
 * when CYCCNT reaches `cyccnt`, action fn: 0x1 PC sample packet, 0x4
 * watchpoint debug event, 0x8 CMPMATCH to the ETM. CYCCNT must be running
 * (DWT_CTRL.CYCCNTENA). FUNCTION0.MATCHED is set on a match and cleared by
 * reading FUNCTION0 (cm_dwt_matched). */
void cm_dwt_cycle_match(uint32_t cyccnt, uint32_t fn);
/* Read-and-clear comparator n's MATCHED flag: nonzero if it matched since
 * the last read. */
int cm_dwt_matched(unsigned n);
/* Data value watchpoint on comparator 1 (C1.8.4 "Data value matching",
 * DATAVMATCH): matches accesses whose `size`-byte (1, 2, 4) unit equals
 * `value`; link0/link1 name address comparators (set up beforehand with
 * cm_dwt_data_trace(n, addr, mask, 0)) that restrict it to their addresses
 * (pass 1 for no link). fn: 0x5/0x6/0x7 watchpoint on read/write/either,
 * 0x9/0xA/0xB CMPMATCH. Returns -1 if the DWT has no comparator 1 or it does
 * not support data value matching, or link1 is asked for without LNK1ENA. */
int cm_dwt_value_match(uint32_t value, unsigned size, unsigned link0, unsigned link1,
                       uint32_t fn);

#endif
