/* Floating-point extension instructions of the virtual Cortex-M: FPv4-SP
 * (Cortex-M4F) and the FPv5-SP additions of ARMv8-M (Cortex-M33).
 *
 * Encodings: ARMv7-M ARM (DDI 0403E) A6.4 (data processing), A6.5 (extension
 * register load/store), A6.6 (8/16/32-bit transfers), A6.7 (64-bit transfers),
 * instruction pages A7.7.2xx; FPv5 (VSEL, VMAXNM/VMINNM, VRINT*, VCVTA/N/P/M)
 * from the ARMv8-M ARM (DDI 0553). Arithmetic is fp_soft.c.
 * Timing: Cortex-M4 TRM (DDI 0439B) table 7-1 (FPU instruction set): 1 cycle
 * for most, VMLA/VMLS/VNMLA/VNMLS and the fused VFMA family 3, VDIV/VSQRT 14,
 * VMOV of two registers 2, VLDR/VSTR 2 (3 for .64), VLDM/VSTM/VPUSH/VPOP
 * 1 + number of words. The FPv5 additions are given 1 cycle (no M33 table).
 *
 * Only single precision exists: double-precision data processing is
 * UNDEFINED, while D registers (D0-D15, aliasing S pairs) serve the loads,
 * stores and 64-bit moves, as on FPv4-SP-D16. See exec_ext.h for the calling
 * contract. */
#include "exec_ext.h"
#include "fp_soft.h"
#include "vm_internal.h"

/* Decoded operation. */
enum fp_op {
  FP_VMLA, FP_VMLS, FP_VNMLA, FP_VNMLS, FP_VMUL, FP_VNMUL, FP_VADD, FP_VSUB, FP_VDIV,
  FP_VFMA, FP_VFMS, FP_VFNMA, FP_VFNMS, FP_VMOV_IMM, FP_VMOV_REG, FP_VABS, FP_VNEG,
  FP_VSQRT, FP_VCVT_TO_HALF, FP_VCVT_FROM_HALF, FP_VCMP, FP_VRINT, FP_VCVT_FROM_INT,
  FP_VCVT_TO_INT, FP_VCVT_TO_FIXED, FP_VCVT_FROM_FIXED, FP_VSEL, FP_VMAXNM, FP_VMINNM,
  FP_VMOV_S_CORE, FP_VMOV_CORE_S, FP_VMSR, FP_VMRS, FP_VMOV_SCALAR_TO, FP_VMOV_SCALAR_FROM,
  FP_VMOV_2S_TO, FP_VMOV_2S_FROM, FP_VLDR, FP_VSTR, FP_VLDM, FP_VSTM,
};

struct fp_dec {
  enum fp_op op;
  unsigned d, n, m;   /* S register numbers (for D forms: the first S) */
  unsigned t, t2, rn; /* core registers */
  uint32_t imm;       /* immediate, offset, flags per op */
  unsigned size, fbits, words;
  bool uns, flag;     /* flag: T (top half), E (VCMPE), with zero, add, wback... */
  enum vm_fp_rmode rmode;
  bool rmode_fpscr;   /* use FPSCR.RMode instead of rmode */
};

static inline bool bad_reg(unsigned r)
{
  return r == 13 || r == 15;
}

/* Data processing, A6.4 (hw1 = 1110 1110, hw2[4] = 0) and FPv5 (1111 1110). */
static int decode_dp(const struct sonde_vm *vm, uint32_t insn, struct fp_dec *o)
{
  bool uncond = (insn >> 28) & 1;
  unsigned D = (insn >> 22) & 1, N = (insn >> 7) & 1, M = (insn >> 5) & 1;
  o->d = ((insn >> 11) & 0x1e) | D;
  o->n = ((insn >> 15) & 0x1e) | N;
  o->m = ((insn << 1) & 0x1e) | M;
  if (insn & 0x100) /* sz: double precision */
    return VM_EXT_UNDEFINED;
  unsigned op6 = (insn >> 6) & 1, op7 = (insn >> 7) & 1;
  if (uncond) {
    if (!vm->has_v8m)
      return VM_EXT_UNDEFINED;
    uint32_t hw1 = insn >> 16;
    if ((hw1 & 0xff80) == 0xfe00 && !op6) {
      o->op = FP_VSEL;
      o->imm = (hw1 >> 4) & 3;
      return 0;
    }
    if ((hw1 & 0xffb0) == 0xfe80) {
      o->op = op6 ? FP_VMINNM : FP_VMAXNM;
      return 0;
    }
    if ((hw1 & 0xffbc) == 0xfeb8 && op6 && !op7) {
      o->op = FP_VRINT;
      o->rmode = (enum vm_fp_rmode[]){VM_FP_RA, VM_FP_RN, VM_FP_RP, VM_FP_RM}[hw1 & 3];
      o->flag = false;
      return 0;
    }
    if ((hw1 & 0xffbc) == 0xfebc && op6) {
      o->op = FP_VCVT_TO_INT;
      o->rmode = (enum vm_fp_rmode[]){VM_FP_RA, VM_FP_RN, VM_FP_RP, VM_FP_RM}[hw1 & 3];
      o->uns = !op7;
      return 0;
    }
    return VM_EXT_UNDEFINED;
  }
  unsigned opc1 = (insn >> 20) & 0xb, opc2 = (insn >> 16) & 15;
  static const enum fp_op arith[11][2] = {
    {FP_VMLA, FP_VMLS}, {FP_VNMLS, FP_VNMLA}, {FP_VMUL, FP_VNMUL}, {FP_VADD, FP_VSUB},
    {0, 0}, {0, 0}, {0, 0}, {0, 0},
    {FP_VDIV, FP_VDIV}, {FP_VFNMS, FP_VFNMA}, {FP_VFMA, FP_VFMS},
  };
  if (opc1 <= 3 || opc1 == 9 || opc1 == 10 || (opc1 == 8 && !op6)) {
    o->op = arith[opc1][op6];
    return 0;
  }
  if (opc1 != 0xb)
    return VM_EXT_UNDEFINED;
  if (!op6) {
    o->op = FP_VMOV_IMM;
    o->imm = vm_fp32_expand_imm((uint8_t)(opc2 << 4 | (insn & 15)));
    return 0;
  }
  o->rmode_fpscr = true;
  switch (opc2) {
  case 0: o->op = op7 ? FP_VABS : FP_VMOV_REG; return 0;
  case 1: o->op = op7 ? FP_VSQRT : FP_VNEG; return 0;
  case 2: case 3:
    o->op = opc2 & 1 ? FP_VCVT_TO_HALF : FP_VCVT_FROM_HALF;
    o->flag = op7; /* T: top half */
    return 0;
  case 4: case 5:
    o->op = FP_VCMP;
    o->flag = op7;        /* E */
    o->imm = opc2 & 1;    /* with zero */
    return 0;
  case 6: case 7:
    if (opc2 == 7 && op7)
      return VM_EXT_UNDEFINED; /* VCVT between double and single */
    if (!vm->has_v8m)
      return VM_EXT_UNDEFINED;
    o->op = FP_VRINT;
    o->flag = opc2 == 7; /* VRINTX: exact */
    if (opc2 == 6 && op7) {
      o->rmode_fpscr = false;
      o->rmode = VM_FP_RZ;
    }
    return 0;
  case 8:
    o->op = FP_VCVT_FROM_INT;
    o->uns = !op7;
    return 0;
  case 12: case 13:
    o->op = FP_VCVT_TO_INT;
    o->uns = !(opc2 & 1);
    if (op7) {
      o->rmode_fpscr = false;
      o->rmode = VM_FP_RZ;
    }
    return 0;
  case 10: case 11: case 14: case 15: {
    o->op = opc2 & 4 ? FP_VCVT_TO_FIXED : FP_VCVT_FROM_FIXED;
    o->uns = opc2 & 1;
    o->size = op7 ? 32 : 16;
    unsigned imm5 = ((insn & 15) << 1) | M;
    if (imm5 > o->size)
      return VM_EXT_UNDEFINED; /* negative fraction bits: UNPREDICTABLE */
    o->fbits = o->size - imm5;
    if (o->op == FP_VCVT_TO_FIXED) {
      o->rmode_fpscr = false;
      o->rmode = VM_FP_RZ;
    }
    return 0;
  }
  default:
    return VM_EXT_UNDEFINED;
  }
}

/* 8, 16 and 32-bit transfers, A6.6 (hw1 = 1110 1110, hw2[4] = 1). */
static int decode_xfer(uint32_t insn, struct fp_dec *o)
{
  unsigned a = (insn >> 21) & 7, l = (insn >> 20) & 1, c = (insn >> 8) & 1;
  unsigned b = (insn >> 5) & 3;
  o->t = (insn >> 12) & 15;
  if (!c && a == 0) {
    if (bad_reg(o->t))
      return VM_EXT_UNDEFINED;
    o->op = l ? FP_VMOV_CORE_S : FP_VMOV_S_CORE;
    o->n = ((insn >> 15) & 0x1e) | ((insn >> 7) & 1);
    return 0;
  }
  if (!c && a == 7) {
    if (((insn >> 16) & 15) != 1) /* only FPSCR exists on M-profile */
      return VM_EXT_UNDEFINED;
    o->op = l ? FP_VMRS : FP_VMSR;
    if (o->t == 13 || (!l && o->t == 15))
      return VM_EXT_UNDEFINED;
    return 0;
  }
  if (c && (a & 6) == 0 && b == 0) {
    if (bad_reg(o->t))
      return VM_EXT_UNDEFINED;
    unsigned dreg = ((insn >> 3) & 0x10) | ((insn >> 16) & 15); /* D:Vd or N:Vn */
    if (dreg >= 16)
      return VM_EXT_UNDEFINED; /* D16-D31 do not exist */
    o->op = l ? FP_VMOV_SCALAR_FROM : FP_VMOV_SCALAR_TO;
    o->n = 2 * dreg + (a & 1);
    return 0;
  }
  return VM_EXT_UNDEFINED;
}

/* Extension register load/store and 64-bit transfers, A6.5/A6.7. */
static int decode_ls(uint32_t insn, struct fp_dec *o)
{
  unsigned opcode = (insn >> 20) & 0x1f;
  bool dbl = (insn >> 8) & 1;
  unsigned D = (insn >> 22) & 1, Vd = (insn >> 12) & 15;
  o->rn = (insn >> 16) & 15;
  if ((opcode & 0x1e) == 0x04) { /* 64-bit transfer */
    o->t = (insn >> 12) & 15;
    o->t2 = (insn >> 16) & 15;
    bool to_core = opcode & 1;
    unsigned M = (insn >> 5) & 1, Vm = insn & 15;
    if ((insn & 0xd0) != 0x10 || bad_reg(o->t) || bad_reg(o->t2) || (to_core && o->t == o->t2))
      return VM_EXT_UNDEFINED;
    if (dbl) {
      if (M)
        return VM_EXT_UNDEFINED;
      o->m = 2 * Vm;
    } else {
      o->m = (Vm << 1) | M;
      if (o->m == 31)
        return VM_EXT_UNDEFINED;
    }
    o->op = to_core ? FP_VMOV_2S_FROM : FP_VMOV_2S_TO;
    return 0;
  }
  bool p = opcode & 0x10, u = opcode & 0x08, w = opcode & 0x02, l = opcode & 0x01;
  if (!p && !u)
    return VM_EXT_UNDEFINED;
  if (p && u && w)
    return VM_EXT_UNDEFINED;
  unsigned imm8 = insn & 0xff;
  if (dbl) {
    if (D)
      return VM_EXT_UNDEFINED; /* D16-D31 */
    o->d = 2 * Vd;
  } else {
    o->d = (Vd << 1) | D;
  }
  o->imm = imm8 * 4;
  o->uns = u; /* add */
  if (p && !w) { /* VLDR/VSTR */
    o->op = l ? FP_VLDR : FP_VSTR;
    o->words = dbl ? 2 : 1;
    if (!l && o->rn == 15)
      return VM_EXT_UNDEFINED;
    return 0;
  }
  o->op = l ? FP_VLDM : FP_VSTM;
  o->flag = w;
  o->words = dbl ? (imm8 & ~1u) : imm8;
  if (o->words == 0 || o->d + o->words > 32 || o->rn == 15 || (dbl && (imm8 & 1)))
    return VM_EXT_UNDEFINED;
  return 0;
}

/* The CPACR test of vm_fp_prepare() without its side effects: an undefined
 * encoding in coprocessor space still reports NOCP when CP10 is off. */
static bool fp_accessible(const struct sonde_vm *vm)
{
  unsigned cp10 = (vm->sys.cpacr >> 20) & 3;
  bool priv = vm->cpu.ipsr || !(vm->cpu.control & 1);
  return vm->has_fpu && (cp10 == 3 || (cp10 == 1 && priv));
}

static bool cond_holds(uint32_t apsr, unsigned cc)
{
  bool n = apsr >> 31, z = (apsr >> 30) & 1, v = (apsr >> 28) & 1;
  switch (cc) {
  case 0: return z;              /* EQ */
  case 1: return v;              /* VS */
  case 2: return n == v;         /* GE */
  default: return !z && n == v;  /* GT */
  }
}

/* Loads and stores: word transfers through the bus, all-or-nothing for
 * registers (a faulting load changes no register, and no writeback). */
static int exec_mem(struct sonde_vm *vm, const struct fp_dec *o, int cycles)
{
  struct vm_cpu *c = &vm->cpu;
  uint32_t base = o->rn == 15 ? ((c->r[15] + 4) & ~3u) : c->r[o->rn];
  uint32_t addr;
  bool load = o->op == FP_VLDR || o->op == FP_VLDM;
  if (o->op == FP_VLDR || o->op == FP_VSTR)
    addr = o->uns ? base + o->imm : base - o->imm;
  else
    addr = o->uns ? base : base - o->imm;
  /* ARMv8-M stack limit (exception.c): VPUSH/VSTMDB/VLDM with writeback of SP
   * check the lowest address before any access, as the core's LDM/STM do. */
  if ((o->op == FP_VLDM || o->op == FP_VSTM) && o->flag && o->rn == 13 && c->splim_on &&
      !vm_sp_limit_check(vm, addr))
    return VM_EXT_FAULTED;
  if (addr & 3) { /* FP transfers are always word-aligned accesses (MemA) */
    vm_fault(vm, VM_FAULT_UNALIGNED, addr);
    return VM_EXT_FAULTED;
  }
  uint32_t val[32];
  for (unsigned i = 0; i < o->words; i++) {
    uint32_t a = addr + 4 * i;
    int rc;
    if (load) {
      rc = vm_bus_read(vm, &vm->bus, a, 4, &val[i]);
    } else {
      val[i] = c->s[o->d + i];
      rc = vm_bus_write(vm, &vm->bus, a, 4, val[i]);
    }
    if (rc != VM_BUS_OK) {
      vm_fault(vm, VM_FAULT_PRECISERR, a);
      return VM_EXT_FAULTED;
    }
  }
  if (load)
    memcpy(&c->s[o->d], val, 4 * o->words);
  if ((o->op == FP_VLDM || o->op == FP_VSTM) && o->flag)
    c->r[o->rn] = o->uns ? base + o->imm : base - o->imm;
  if (vm->hooked && (vm->hooks.transfer || vm->dbg_observe)) {
    /* Same stamping as the core's loads/stores: transfer i in cycle
     * start + 1 + i, clamped to the instruction's last cycle; the DWT's data
     * comparators see them as the core's (dbg_dwt.c). */
    for (unsigned i = 0; i < o->words; i++) {
      uint64_t cy = c->cycles + (i + 1 < (unsigned)cycles ? i + 1 : (unsigned)cycles - 1);
      if (vm->hooks.transfer)
        vm->hooks.transfer(vm->hooks.ctx, cy, c->r[15], addr + 4 * i, 4, val[i], !load);
      if (vm->dbg_observe)
        vm_dbg_transfer(vm, c->r[15], addr + 4 * i, 4, val[i], !load, cy);
    }
  }
  return cycles;
}

int vm_exec_fp(struct sonde_vm *vm, uint32_t insn)
{
  struct fp_dec o;
  memset(&o, 0, sizeof o);
  int rc;
  uint32_t hw1 = insn >> 16;
  if (((insn >> 9) & 7) != 5) /* coprocessor 10/11 only */
    rc = VM_EXT_UNDEFINED;
  else if ((hw1 & 0xef00) == 0xee00) /* 111x 1110 */
    rc = insn & 0x10 ? ((hw1 & 0x1000) ? VM_EXT_UNDEFINED : decode_xfer(insn, &o))
                     : decode_dp(vm, insn, &o);
  else if ((hw1 & 0xfe00) == 0xec00)
    rc = decode_ls(insn, &o);
  else
    rc = VM_EXT_UNDEFINED;
  if (rc < 0) {
    if (fp_accessible(vm))
      return VM_EXT_UNDEFINED;
    vm_fault(vm, VM_FAULT_NOCP, 0);
    return VM_EXT_FAULTED;
  }
  if (!vm_fp_prepare(vm))
    return VM_EXT_FAULTED;

  struct vm_cpu *c = &vm->cpu;
  uint32_t *s = c->s;
  uint32_t f = c->fpscr;
  enum vm_fp_rmode rm = o.rmode_fpscr ? vm_fp_rmode(f) : o.rmode;
  int cycles = 1;
  switch (o.op) {
  case FP_VMLA: case FP_VMLS: case FP_VNMLA: case FP_VNMLS: {
    /* Not fused: the product is rounded, then added (two roundings). */
    uint32_t p = vm_fp32_mul(s[o.n], s[o.m], &f);
    if (o.op == FP_VMLS || o.op == FP_VNMLA)
      p = vm_fp32_neg(p);
    uint32_t acc = o.op == FP_VMLA || o.op == FP_VMLS ? s[o.d] : vm_fp32_neg(s[o.d]);
    s[o.d] = vm_fp32_add(acc, p, &f);
    cycles = 3;
    break;
  }
  case FP_VMUL: s[o.d] = vm_fp32_mul(s[o.n], s[o.m], &f); break;
  case FP_VNMUL: s[o.d] = vm_fp32_neg(vm_fp32_mul(s[o.n], s[o.m], &f)); break;
  case FP_VADD: s[o.d] = vm_fp32_add(s[o.n], s[o.m], &f); break;
  case FP_VSUB: s[o.d] = vm_fp32_sub(s[o.n], s[o.m], &f); break;
  case FP_VDIV:
    s[o.d] = vm_fp32_div(s[o.n], s[o.m], &f);
    cycles = 14;
    break;
  case FP_VFMA: case FP_VFMS: case FP_VFNMA: case FP_VFNMS: {
    uint32_t op1 = o.op == FP_VFMS || o.op == FP_VFNMA ? vm_fp32_neg(s[o.n]) : s[o.n];
    uint32_t acc = o.op == FP_VFNMA || o.op == FP_VFNMS ? vm_fp32_neg(s[o.d]) : s[o.d];
    s[o.d] = vm_fp32_muladd(acc, op1, s[o.m], &f);
    cycles = 3;
    break;
  }
  case FP_VMOV_IMM: s[o.d] = o.imm; break;
  case FP_VMOV_REG: s[o.d] = s[o.m]; break;
  case FP_VABS: s[o.d] = vm_fp32_abs(s[o.m]); break;
  case FP_VNEG: s[o.d] = vm_fp32_neg(s[o.m]); break;
  case FP_VSQRT:
    s[o.d] = vm_fp32_sqrt(s[o.m], &f);
    cycles = 14;
    break;
  case FP_VCVT_TO_HALF: {
    uint32_t h = vm_fp32_to_f16(s[o.m], &f);
    s[o.d] = o.flag ? (s[o.d] & 0xffffu) | h << 16 : (s[o.d] & 0xffff0000u) | h;
    break;
  }
  case FP_VCVT_FROM_HALF:
    s[o.d] = vm_fp16_to_f32((uint16_t)(o.flag ? s[o.m] >> 16 : s[o.m]), &f);
    break;
  case FP_VCMP: {
    unsigned nzcv = vm_fp32_compare(s[o.d], o.imm ? 0 : s[o.m], o.flag, &f);
    f = (f & 0x0fffffffu) | nzcv << VM_FPSCR_NZCV_SHIFT;
    break;
  }
  case FP_VRINT: s[o.d] = vm_fp32_round_int(s[o.m], rm, o.flag, &f); break;
  case FP_VCVT_FROM_INT: s[o.d] = vm_fp32_from_fixed(s[o.m], 32, 0, o.uns, rm, &f); break;
  case FP_VCVT_TO_INT: s[o.d] = vm_fp32_to_fixed(s[o.m], 32, 0, o.uns, rm, &f); break;
  case FP_VCVT_TO_FIXED:
    s[o.d] = vm_fp32_to_fixed(s[o.d], o.size, o.fbits, o.uns, rm, &f);
    break;
  case FP_VCVT_FROM_FIXED:
    s[o.d] = vm_fp32_from_fixed(s[o.d], o.size, o.fbits, o.uns, rm, &f);
    break;
  case FP_VSEL: s[o.d] = cond_holds(c->apsr, o.imm) ? s[o.n] : s[o.m]; break;
  case FP_VMAXNM: s[o.d] = vm_fp32_maxnum(s[o.n], s[o.m], &f); break;
  case FP_VMINNM: s[o.d] = vm_fp32_minnum(s[o.n], s[o.m], &f); break;
  case FP_VMOV_S_CORE: s[o.n] = c->r[o.t]; break;
  case FP_VMOV_CORE_S: c->r[o.t] = s[o.n]; break;
  case FP_VMOV_SCALAR_TO: s[o.n] = c->r[o.t]; break;
  case FP_VMOV_SCALAR_FROM: c->r[o.t] = s[o.n]; break;
  case FP_VMSR: f = c->r[o.t] & VM_FPSCR_WRITABLE; break;
  case FP_VMRS:
    if (o.t == 15)
      c->apsr = (c->apsr & 0x0fffffffu) | (f & 0xf0000000u);
    else
      c->r[o.t] = f;
    break;
  case FP_VMOV_2S_TO:
    s[o.m] = c->r[o.t];
    s[o.m + 1] = c->r[o.t2];
    cycles = 2;
    break;
  case FP_VMOV_2S_FROM:
    c->r[o.t] = s[o.m];
    c->r[o.t2] = s[o.m + 1];
    cycles = 2;
    break;
  case FP_VLDR: case FP_VSTR:
    return exec_mem(vm, &o, o.words == 2 ? 3 : 2);
  case FP_VLDM: case FP_VSTM:
    return exec_mem(vm, &o, 1 + (int)o.words);
  }
  c->fpscr = f;
  return cycles;
}
