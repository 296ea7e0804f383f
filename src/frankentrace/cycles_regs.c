/* Register values along a recorded instruction stream, for the data
 * addresses of `sonde cycles compare` (cycles.c): a PC trace says which
 * instructions ran but not what they read or wrote. Values are known from
 * constants in the code (literal loads, MOV/MOVW/MOVT, ADR), from the LSU
 * trace (what a load returned) and from arithmetic on known values; anything
 * else makes the register unknown. Peripheral base addresses in embedded code
 * are almost always literals, so most data addresses come out exact. */
#include "cycles_regs.h"

#include <string.h>

#include "vm/timing.h"

void ft_regs_clear(struct ft_regs *r)
{
  r->known = 0;
}

void ft_regs_clobber_call(struct ft_regs *r)
{
  r->known &= (uint16_t)~(0xFu | (1u << 12) | (1u << 14));
}

void ft_regs_set_sp(struct ft_regs *r, uint32_t sp)
{
  r->known |= 1u << 13;
  r->v[13] = sp;
}

static bool mem_get(const struct ft_regs *r, uint32_t addr, unsigned size, uint32_t *v)
{
  uint32_t i = addr - FT_SHADOW_BASE;
  if (i >= FT_SHADOW_BYTES || FT_SHADOW_BYTES - i < size)
    return false;
  uint32_t x = 0;
  for (unsigned k = 0; k < size; k++) {
    if (!r->mem_known[i + k])
      return false;
    x |= (uint32_t)r->mem[i + k] << (8 * k);
  }
  *v = x;
  return true;
}

static void mem_set(struct ft_regs *r, uint32_t addr, unsigned size, bool known, uint32_t v)
{
  uint32_t i = addr - FT_SHADOW_BASE;
  if (i >= FT_SHADOW_BYTES || FT_SHADOW_BYTES - i < size)
    return;
  for (unsigned k = 0; k < size; k++) {
    r->mem_known[i + k] = known;
    r->mem[i + k] = (uint8_t)(v >> (8 * k));
  }
}

static bool get(const struct ft_regs *r, unsigned n, uint32_t *v)
{
  if (n > 14 || !(r->known & (1u << n)))
    return false;
  *v = r->v[n];
  return true;
}

static void set(struct ft_regs *r, unsigned n, bool known, uint32_t v)
{
  if (n > 14)
    return;
  if (known) {
    r->known |= (uint16_t)(1u << n);
    r->v[n] = v;
  } else {
    r->known &= (uint16_t)~(1u << n);
  }
}

static uint32_t shift(uint32_t v, unsigned type, unsigned n)
{
  switch (type) {
  case VM_SH_LSL: return n >= 32 ? 0 : v << n;
  case VM_SH_LSR: return n == 0 || n >= 32 ? 0 : v >> n;
  case VM_SH_ASR: return (uint32_t)((int32_t)v >> (n == 0 || n >= 32 ? 31 : n));
  case VM_SH_ROR: n &= 31; return n ? (v >> n) | (v << (32 - n)) : v;
  default: return v;
  }
}

static bool alu(unsigned op, uint32_t a, uint32_t b, uint32_t *out)
{
  switch (op) {
  case VM_ALU_AND: *out = a & b; return true;
  case VM_ALU_EOR: *out = a ^ b; return true;
  case VM_ALU_ORR: *out = a | b; return true;
  case VM_ALU_ORN: *out = a | ~b; return true;
  case VM_ALU_BIC: *out = a & ~b; return true;
  case VM_ALU_MOV: *out = b; return true;
  case VM_ALU_MVN: *out = ~b; return true;
  case VM_ALU_ADD: *out = a + b; return true;
  case VM_ALU_SUB: *out = a - b; return true;
  case VM_ALU_RSB: *out = b - a; return true;
  default: return false; /* ADC/SBC need the carry */
  }
}

bool ft_regs_step(struct ft_regs *r, struct sonde_sym *sym, const struct vm_insn *d, uint32_t pc,
                  bool have_lsu, uint32_t lsu_addr, uint32_t lsu_val, uint32_t *addr)
{
  *addr = 0;
  uint32_t a = 0, b = 0, v = 0;
  bool known_addr = false;
  if (d->op >= VM_OP_DPI0) {
    bool reg = d->op >= VM_OP_DPR0;
    unsigned op = (d->op - (reg ? VM_OP_DPR0 : VM_OP_DPI0)) & 15;
    if (op == VM_ALU_TST || op == VM_ALU_TEQ || op == VM_ALU_CMP || op == VM_ALU_CMN)
      return false;
    bool ka = d->rn == VM_NOREG || (d->rn == 15 ? (a = (pc + 4) & ~3u, true) : get(r, d->rn, &a));
    bool kb = true;
    if (reg) {
      kb = d->rm == 15 ? (b = pc + 4, true) : get(r, d->rm, &b);
      b = shift(b, d->sh_type, d->sh_n);
    } else {
      b = d->imm;
    }
    bool kv = ka && kb && alu(op, a, b, &v);
    set(r, d->rd, kv, v);
    return false;
  }
  switch (d->op) {
  case VM_OP_ADR:
    set(r, d->rd, true, ((pc + 4) & ~3u) + d->imm);
    return false;
  case VM_OP_MOVT:
    if (get(r, d->rd, &a))
      set(r, d->rd, true, (a & 0xFFFF) | (d->imm << 16));
    return false;
  case VM_OP_LD: case VM_OP_ST: case VM_OP_LDREX: case VM_OP_STREX: case VM_OP_LDRD:
  case VM_OP_STRD: case VM_OP_TBB: case VM_OP_TBH: {
    bool kbase;
    if (d->flags & VM_F_LIT) {
      a = (pc + 4) & ~3u;
      kbase = true;
    } else {
      kbase = d->rn == 15 ? (a = (pc + 4), true) : get(r, d->rn, &a);
    }
    bool koff = true;
    uint32_t off = d->imm;
    if (d->op == VM_OP_TBB || d->op == VM_OP_TBH) {
      koff = get(r, d->rm, &off);
      off <<= d->op == VM_OP_TBH; /* base + index (halfwords for TBH) */
      known_addr = kbase && koff;
      *addr = a + off;
      break;
    }
    if (d->rm != VM_NOREG && (d->op == VM_OP_LD || d->op == VM_OP_ST)) {
      koff = get(r, d->rm, &off);
      off <<= d->sh_n;
    }
    uint32_t offaddr = (d->flags & VM_F_U) ? a + off : a - off;
    uint32_t ea = (d->flags & VM_F_P) || (d->flags & VM_F_LIT) ? offaddr : a;
    if (d->op == VM_OP_LDREX || d->op == VM_OP_STREX)
      ea = a + d->imm;
    known_addr = kbase && koff;
    *addr = ea;
    /* the LSU trace's transfer is the one of this execution only if the
     * addresses agree (its executions are matched by order) */
    if (have_lsu && known_addr && lsu_addr != ea)
      have_lsu = false;
    if (have_lsu) {
      *addr = lsu_addr;
      known_addr = true;
    }
    if ((d->flags & VM_F_W) && d->rn != 15)
      set(r, d->rn, kbase && koff, offaddr);
    if (d->op == VM_OP_LD) {
      uint32_t val = 0;
      bool kv = false;
      if (have_lsu) {
        val = lsu_val;
        kv = true;
      } else if (known_addr && mem_get(r, *addr, d->sub & 7, &val)) {
        kv = true;
      } else if (known_addr && sym && *addr < 0x20000000u &&
                 sonde_sym_read(sym, *addr, &val, d->sub & 7) == 0) {
        kv = true; /* a constant in the image (flash) */
      }
      if (kv && (d->sub & VM_SZ_SIGNED))
        val = (d->sub & 7) == 1 ? (uint32_t)(int32_t)(int8_t)val
                                : (uint32_t)(int32_t)(int16_t)val;
      set(r, d->rd, kv, val);
    } else if (d->op == VM_OP_ST && known_addr) {
      uint32_t sv = 0;
      bool ks = get(r, d->rd, &sv);
      mem_set(r, *addr, d->sub & 7, ks, sv);
    } else if (d->op == VM_OP_LDREX || d->op == VM_OP_LDRD) {
      set(r, d->rd, false, 0);
      if (d->op == VM_OP_LDRD)
        set(r, d->ra, false, 0);
    } else if (d->op == VM_OP_STREX) {
      set(r, d->ra, false, 0);
    }
    break;
  }
  case VM_OP_LDM: case VM_OP_STM: {
    unsigned n = (unsigned)__builtin_popcount(d->imm);
    bool kb = get(r, d->rn, &a);
    *addr = d->sub ? a - 4 * n : a;
    known_addr = kb;
    if (have_lsu && known_addr && lsu_addr != *addr)
      have_lsu = false;
    if (have_lsu) {
      *addr = lsu_addr;
      known_addr = true;
    }
    if (d->flags & VM_F_W)
      set(r, d->rn, kb, d->sub ? a - 4 * n : a + 4 * n);
    uint32_t wa = *addr;
    for (unsigned i = 0; i < 15; i++) {
      if (!(d->imm & (1u << i)))
        continue;
      uint32_t x = 0;
      if (d->op == VM_OP_LDM) {
        bool kx = known_addr && (mem_get(r, wa, 4, &x) ||
                                 (sym && wa < 0x20000000u && sonde_sym_read(sym, wa, &x, 4) == 0));
        if (i != d->rn || !(d->flags & VM_F_W))
          set(r, i, kx, x);
      } else if (known_addr) {
        bool kx = get(r, i, &x);
        mem_set(r, wa, 4, kx, x);
      }
      wa += 4;
    }
    break;
  }
  case VM_OP_BL: case VM_OP_BLX:
    set(r, 14, true, (pc + d->len) | 1);
    break;
  case VM_OP_B: case VM_OP_BX: case VM_OP_CBZ: case VM_OP_CBNZ: case VM_OP_IT:
  case VM_OP_HINT: case VM_OP_BARRIER: case VM_OP_MSR: case VM_OP_CPS: case VM_OP_BKPT:
  case VM_OP_SVC: case VM_OP_CLREX:
    break;
  case VM_OP_UMULL: case VM_OP_SMULL: case VM_OP_UMLAL: case VM_OP_SMLAL:
    set(r, d->rd, false, 0);
    set(r, d->ra, false, 0);
    break;
  default:
    if (d->rd != VM_NOREG)
      set(r, d->rd, false, 0);
    break;
  }
  return known_addr;
}

static uint32_t sig_bits_u(uint32_t v)
{
  return v ? 32 - (uint32_t)__builtin_clz(v) : 0;
}

static uint32_t sig_bits_s(uint32_t v)
{
  return sig_bits_u((int32_t)v < 0 ? ~v : v) + 1;
}

int ft_regs_extra(const struct ft_regs *r, const struct vm_insn *d)
{
  uint32_t n, m;
  struct vm_timing t = {0};
  t.long_mul_fast = false; /* Cortex-M3 early termination (timing.h) */
  if (d->op != VM_OP_UMULL && d->op != VM_OP_SMULL && d->op != VM_OP_UMLAL &&
      d->op != VM_OP_SMLAL && d->op != VM_OP_UDIV && d->op != VM_OP_SDIV)
    return 0;
  if (!get(r, d->rn, &n) || !get(r, d->rm, &m))
    return -1;
  switch (d->op) {
  case VM_OP_UMULL: case VM_OP_UMLAL:
    return (int)vm_timing_mull(&t, sig_bits_u(n > m ? m : n), d->op == VM_OP_UMLAL) -
           (d->op == VM_OP_UMLAL ? 4 : 3);
  case VM_OP_SMULL: case VM_OP_SMLAL: {
    uint32_t bn = sig_bits_s(n), bm = sig_bits_s(m);
    return (int)vm_timing_mull(&t, bn < bm ? bn : bm, d->op == VM_OP_SMLAL) -
           (d->op == VM_OP_SMLAL ? 4 : 3);
  }
  case VM_OP_UDIV:
    return (int)vm_timing_div(&t, n, m) - 2;
  default: {
    int32_t sn = (int32_t)n, sm = (int32_t)m;
    return (int)vm_timing_div(&t, sn < 0 ? -n : n, sm < 0 ? -m : m) - 2;
  }
  }
}
