/* Single-precision floating point of the virtual Cortex-M, bit-exact to the
 * ARMv7-M ARM (DDI 0403E) A2.5 pseudocode (FPUnpack, FPRound, FPProcessNaN(s),
 * FPAdd, FPMul, FPMulAdd, FPDiv, FPSqrt, FPCompare, FPToFixed, FixedToFP,
 * FPHalfToSingle, FPSingleToHalf) and, for the FPv5 additions of ARMv8-M,
 * FPRoundInt, FPMaxNum and FPMinNum (ARMv8-M ARM, DDI 0553).
 *
 * Everything is integer soft-float: the host FPU is never used, so results,
 * rounding modes, flush-to-zero (FZ, with IDC/UFC), default NaN (DN),
 * alternative half precision (AHP), NaN selection and the cumulative
 * exception flags do not depend on the host.
 *
 * Each operation takes the FPSCR value (`*fpscr`: RMode, FZ, DN, AHP) and ORs
 * the exception flags it raises into it (IOC DZC OFC UFC IXC IDC). */
#ifndef SONDE_VM_FP_SOFT_H
#define SONDE_VM_FP_SOFT_H

#include <stdbool.h>
#include <stdint.h>

/* FPSCR fields, ARMv7-M ARM A2.5.3 / B1.4.5 (the writable bits on M4/M33). */
#define VM_FPSCR_N (1u << 31)
#define VM_FPSCR_NZCV_SHIFT 28
#define VM_FPSCR_AHP (1u << 26)
#define VM_FPSCR_DN (1u << 25)
#define VM_FPSCR_FZ (1u << 24)
#define VM_FPSCR_RMODE_SHIFT 22
#define VM_FPSCR_IDC (1u << 7)
#define VM_FPSCR_IXC (1u << 4)
#define VM_FPSCR_UFC (1u << 3)
#define VM_FPSCR_OFC (1u << 2)
#define VM_FPSCR_DZC (1u << 1)
#define VM_FPSCR_IOC (1u << 0)
#define VM_FPSCR_WRITABLE 0xf7c0009fu

/* Rounding modes: FPSCR.RMode values, plus ties-away (FPv5 VRINTA/VCVTA). */
enum vm_fp_rmode { VM_FP_RN = 0, VM_FP_RP = 1, VM_FP_RM = 2, VM_FP_RZ = 3, VM_FP_RA = 4 };

static inline enum vm_fp_rmode vm_fp_rmode(uint32_t fpscr)
{
  return (enum vm_fp_rmode)((fpscr >> VM_FPSCR_RMODE_SHIFT) & 3);
}

uint32_t vm_fp32_add(uint32_t a, uint32_t b, uint32_t *fpscr);
uint32_t vm_fp32_sub(uint32_t a, uint32_t b, uint32_t *fpscr);
uint32_t vm_fp32_mul(uint32_t a, uint32_t b, uint32_t *fpscr);
uint32_t vm_fp32_div(uint32_t a, uint32_t b, uint32_t *fpscr);
uint32_t vm_fp32_sqrt(uint32_t a, uint32_t *fpscr);
/* FPMulAdd: addend + op1 * op2 with a single rounding (VFMA family). */
uint32_t vm_fp32_muladd(uint32_t addend, uint32_t op1, uint32_t op2, uint32_t *fpscr);

static inline uint32_t vm_fp32_neg(uint32_t a)
{
  return a ^ 0x80000000u;
}

static inline uint32_t vm_fp32_abs(uint32_t a)
{
  return a & 0x7fffffffu;
}

/* FPCompare: the NZCV result (in bits 3..0). `quiet_nan_exc` (VCMPE) makes a
 * quiet NaN operand raise Invalid Operation too. */
unsigned vm_fp32_compare(uint32_t a, uint32_t b, bool quiet_nan_exc, uint32_t *fpscr);

/* FPToFixed: to a `size`-bit (16 or 32) integer with `fbits` fraction bits,
 * saturating; the result is sign/zero-extended to 32 bits. */
uint32_t vm_fp32_to_fixed(uint32_t a, unsigned size, unsigned fbits, bool uns,
                          enum vm_fp_rmode rmode, uint32_t *fpscr);
/* FixedToFP: the low `size` bits of `v` as a fixed-point number. */
uint32_t vm_fp32_from_fixed(uint32_t v, unsigned size, unsigned fbits, bool uns,
                            enum vm_fp_rmode rmode, uint32_t *fpscr);
/* FPSingleToHalf / FPHalfToSingle, FPSCR-controlled (AHP, DN, FZ, RMode). */
uint16_t vm_fp32_to_f16(uint32_t a, uint32_t *fpscr);
uint32_t vm_fp16_to_f32(uint16_t h, uint32_t *fpscr);

/* FPRoundInt (VRINT*): `exact` raises Inexact when the value changes. */
uint32_t vm_fp32_round_int(uint32_t a, enum vm_fp_rmode rmode, bool exact, uint32_t *fpscr);
/* FPMaxNum / FPMinNum (VMAXNM, VMINNM): a quiet NaN loses to a number. */
uint32_t vm_fp32_maxnum(uint32_t a, uint32_t b, uint32_t *fpscr);
uint32_t vm_fp32_minnum(uint32_t a, uint32_t b, uint32_t *fpscr);

/* VFPExpandImm for single precision (VMOV immediate). */
static inline uint32_t vm_fp32_expand_imm(uint8_t imm8)
{
  uint32_t sign = (uint32_t)(imm8 >> 7) << 31;
  uint32_t exp = (imm8 & 0x40) ? 0x7cu : 0x80u;
  exp |= (imm8 >> 4) & 3;
  return sign | exp << 23 | (uint32_t)(imm8 & 15) << 19;
}

#endif
