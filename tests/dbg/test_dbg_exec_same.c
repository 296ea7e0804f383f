/* Trace blocks on, every executor alike (issue 20 item 1): every firmware
 * image of the build (build/firmware/images.txt names each one's machine)
 * runs with the trace blocks set through the debug port before its first
 * instruction, as a probe does:
 *   - DWT PC sampling every 128 cycles (DWT_CTRL[12:0] = 0x1003), exception
 *     trace and local timestamps, SWO at the core clock (M3/M4/M33);
 *   - the MTB on a 4 KiB circle (M33, M0+);
 * on the block compiler, on the interpreted block executor and on the
 * one-at-a-time executor (a retire hook puts the VM on its hooked path),
 * stopped every 1-20,000 cycles (the same pseudo-random limits for all
 * three), where a debugger reads DWT_PCSR and DWT_CYCCNT. Required equal:
 * every SWO byte with its start cycle, the program's output, the MTB
 * buffer and POSITION, and at each stop the cycle and instruction counts,
 * r0-r15, xPSR and the two debug-port reads. The firmware may set the trace
 * blocks itself too (the dbg_* and mtb_* images do); that runs alike.
 * Each run stops at its exit or at 3 M cycles. */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sonde/vm.h"

#ifndef SONDE_FIRMWARE_DIR
#define SONDE_FIRMWARE_DIR SONDE_BINARY_DIR "/firmware"
#endif

#define MAX_CYCLES 3000000u
#define MAX_STOPS 4096u

#define DEMCR 0xE000EDFCu
#define DWT_CTRL 0xE0001000u
#define DWT_CYCCNT 0xE0001004u
#define DWT_PCSR 0xE000101Cu
#define ITM_TCR 0xE0000E80u
#define ITM_LAR 0xE0000FB0u
#define TPIU_CSPSR 0xE0040004u
#define TPIU_ACPR 0xE0040010u
#define TPIU_SPPR 0xE00400F0u
#define TPIU_FFCR 0xE0040304u

enum { EX_JIT, EX_BLOCK, EX_ONE, EX_COUNT };
static const char *const ex_name[EX_COUNT] = {"compiled", "block executor", "one at a time"};

/* FNV-1a over everything a run shows, and one hash per stop to find the
 * first difference. */
struct run {
  uint64_t swo, out, stops[MAX_STOPS];
  unsigned nstops;
  uint64_t swo_bytes, cycles, instructions;
  uint8_t first[1u << 16];  /* the first SWO bytes, to show where runs part */
  uint64_t first_at[1u << 16];
  int reason;
  uint64_t mtb;
  uint8_t mtb_buf[4096]; /* to show the first packet that differs */
};

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++)
    h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}
#define FNV0 0xcbf29ce484222325ull

static int on_out(void *ctx, int stream, const void *data, size_t len)
{
  struct run *r = ctx;
  r->out = fnv(r->out, &stream, sizeof stream);
  r->out = fnv(r->out, data, len);
  return 0;
}

static int on_swo(void *ctx, const struct sonde_vm_swo_byte *b)
{
  struct run *r = ctx;
  r->swo = fnv(r->swo, &b->start_cycle, sizeof b->start_cycle);
  r->swo = fnv(r->swo, &b->byte, 1);
  if (r->swo_bytes < sizeof r->first) {
    r->first[r->swo_bytes] = b->byte;
    r->first_at[r->swo_bytes] = b->start_cycle;
  }
  r->swo_bytes++;
  return 0;
}

static void noop_retire(void *ctx, uint32_t pc, uint64_t cycle, uint32_t cycles)
{
  (void)ctx, (void)pc, (void)cycle, (void)cycles;
}

static void wr(struct sonde_vm *vm, uint32_t addr, uint32_t v)
{
  CHECK_EQ_I(sonde_vm_write_mem(vm, addr, &v, 4), 0);
}

static uint32_t rd(struct sonde_vm *vm, uint32_t addr)
{
  uint32_t v = 0;
  if (sonde_vm_read_mem(vm, addr, &v, 4) != 0)
    return 0xdeadbeefu;
  return v;
}

/* The trace blocks, through the debug port (docs/vm.md "Debug and trace
 * blocks", "MTB"). */
static void trace_setup(struct sonde_vm *vm, const struct sonde_machine *m)
{
  enum sonde_vm_core core = sonde_machine_core(m);
  if (core != SONDE_VM_CORE_M0PLUS) {
    wr(vm, DEMCR, 1u << 24); /* TRCENA */
    wr(vm, TPIU_CSPSR, 1);
    wr(vm, TPIU_SPPR, 2); /* NRZ */
    wr(vm, TPIU_ACPR, 0);
    wr(vm, TPIU_FFCR, 0x100);
    wr(vm, ITM_LAR, 0xC5ACCE55u);
    wr(vm, ITM_TCR, (1u << 16) | (1u << 3) | (1u << 1) | 1u); /* ID 1, TXENA, TSENA, ITMENA */
    wr(vm, DWT_CTRL, 0x1002u | (1u << 16) | 1u); /* POSTPRESET 1, EXCTRCENA, CYCCNTENA */
    wr(vm, DWT_CTRL, 0x1003u | (1u << 16) | 1u); /* + PCSAMPLENA: every 128 cycles */
  }
  uint32_t mtb_regs = core == SONDE_VM_CORE_M33 ? 0xE0043000u : 0xF0000000u;
  if (core == SONDE_VM_CORE_M33 || core == SONDE_VM_CORE_M0PLUS) {
    uint32_t base = rd(vm, mtb_regs + 0xC);
    if (base != 0xdeadbeefu && base != 0) {
      wr(vm, mtb_regs + 0x0, 0);                  /* POSITION */
      wr(vm, mtb_regs + 0x4, (1u << 31) | 8u);    /* EN, MASK 8: a 4 KiB circle */
    }
  }
}

/* The MTB's buffer and POSITION at the end (0 without an MTB). */
static uint64_t mtb_state(struct sonde_vm *vm, const struct sonde_machine *m, uint8_t *buf)
{
  enum sonde_vm_core core = sonde_machine_core(m);
  if (core != SONDE_VM_CORE_M33 && core != SONDE_VM_CORE_M0PLUS)
    return 0;
  uint32_t regs = core == SONDE_VM_CORE_M33 ? 0xE0043000u : 0xF0000000u;
  uint32_t base = rd(vm, regs + 0xC);
  if (base == 0xdeadbeefu || base == 0)
    return 0;
  if (sonde_vm_read_mem(vm, base, buf, 4096) != 0)
    return 1;
  uint64_t h = fnv(FNV0, buf, 4096);
  uint32_t pos = rd(vm, regs), master = rd(vm, regs + 4);
  h = fnv(h, &pos, 4);
  return fnv(h, &master, 4);
}

static uint32_t rng_state;
static uint32_t rng(void)
{
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 17;
  rng_state ^= rng_state << 5;
  return rng_state;
}

static bool run_image(const unsigned char *elf, size_t len, const char *name,
                      const struct sonde_machine *m, int ex, uint32_t seed, struct run *r)
{
  memset(r, 0, sizeof *r);
  r->swo = r->out = FNV0;
  struct sonde_vm *vm = NULL;
  if (sonde_vm_new(m, &vm) != 0 || sonde_vm_load_elf(vm, elf, len, name) != 0) {
    CHECK_FAIL_("%s: cannot load", name);
    sonde_vm_free(vm);
    return false;
  }
  sonde_vm_set_output(vm, on_out, r);
  sonde_vm_set_swo(vm, on_swo, r);
  sonde_vm_set_jit(vm, ex == EX_JIT);
  if (ex == EX_ONE) {
    struct sonde_vm_hooks h = {.retire = noop_retire};
    sonde_vm_set_hooks(vm, &h);
  }
  sonde_vm_reset(vm);
  trace_setup(vm, m);
  rng_state = seed;
  bool dwt = sonde_machine_core(m) != SONDE_VM_CORE_M0PLUS;
  struct sonde_vm_stop stop = {0};
  struct sonde_vm_stats st;
  uint64_t limit = 0;
  for (;;) {
    limit += 1 + rng() % 20000;
    if (limit > MAX_CYCLES)
      limit = MAX_CYCLES;
    int rc = sonde_vm_run(vm, limit, &stop);
    sonde_vm_get_stats(vm, &st);
    uint64_t h = fnv(FNV0, &st.cycles, sizeof st.cycles);
    h = fnv(h, &st.instructions, sizeof st.instructions);
    h = fnv(h, &rc, sizeof rc);
    h = fnv(h, &stop.reason, sizeof stop.reason);
    for (unsigned i = 0; i <= SONDE_VM_REG_XPSR; i++) { /* r0-r15, xPSR */
      uint32_t v = 0;
      sonde_vm_read_reg(vm, i, &v);
      h = fnv(h, &v, 4);
    }
    if (dwt) {
      uint32_t pcsr = rd(vm, DWT_PCSR), cyc = rd(vm, DWT_CYCCNT);
      h = fnv(h, &pcsr, 4);
      h = fnv(h, &cyc, 4);
    }
    if (r->nstops < MAX_STOPS)
      r->stops[r->nstops++] = h;
    if (rc != 0 || stop.reason != SONDE_VM_STOP_CYCLE_LIMIT || limit >= MAX_CYCLES)
      break;
  }
  sonde_vm_swo_flush(vm);
  r->cycles = st.cycles;
  r->instructions = st.instructions;
  r->reason = stop.reason;
  r->mtb = mtb_state(vm, m, r->mtb_buf);
  sonde_vm_free(vm);
  return true;
}

static void compare(const char *name, const struct run *a, const struct run *b, int ex)
{
  const char *what = ex_name[ex];
  if (a->nstops != b->nstops)
    CHECK_FAIL_("%s: %s: %u stops, compiled %u", name, what, b->nstops, a->nstops);
  for (unsigned i = 0; i < a->nstops && i < b->nstops; i++)
    if (a->stops[i] != b->stops[i]) {
      CHECK_FAIL_("%s: %s: stop %u differs from the compiled run's", name, what, i);
      break;
    }
  if (a->cycles != b->cycles || a->instructions != b->instructions)
    CHECK_FAIL_("%s: %s: %llu cycles, %llu instructions; compiled %llu, %llu", name, what,
                (unsigned long long)b->cycles, (unsigned long long)b->instructions,
                (unsigned long long)a->cycles, (unsigned long long)a->instructions);
  if (a->swo != b->swo || a->swo_bytes != b->swo_bytes) {
    uint64_t i = 0, n = a->swo_bytes < b->swo_bytes ? a->swo_bytes : b->swo_bytes;
    while (i < n && i < sizeof a->first && a->first[i] == b->first[i] &&
           a->first_at[i] == b->first_at[i])
      i++;
    CHECK_FAIL_("%s: %s: SWO differs (%llu bytes; compiled %llu) from byte %llu (cycle %llu)",
                name, what, (unsigned long long)b->swo_bytes, (unsigned long long)a->swo_bytes,
                (unsigned long long)i,
                (unsigned long long)(i < sizeof a->first ? b->first_at[i] : 0));
    if (i < n && i < sizeof a->first) {
      fprintf(stderr, "  %s:", what);
      for (uint64_t k = i > 8 ? i - 8 : 0; k < i + 8 && k < n; k++)
        fprintf(stderr, " %02x", b->first[k]);
      fprintf(stderr, "\n  compiled:");
      for (uint64_t k = i > 8 ? i - 8 : 0; k < i + 8 && k < n; k++)
        fprintf(stderr, " %02x", a->first[k]);
      fprintf(stderr, "\n");
    }
  }
  if (a->out != b->out)
    CHECK_FAIL_("%s: %s: output differs", name, what);
  if (a->mtb != b->mtb) {
    unsigned i = 0;
    while (i < sizeof a->mtb_buf && !memcmp(a->mtb_buf + i, b->mtb_buf + i, 8))
      i += 8;
    uint32_t w[4] = {0, 0, 0, 0};
    if (i < sizeof a->mtb_buf) {
      memcpy(w, b->mtb_buf + i, 8);
      memcpy(w + 2, a->mtb_buf + i, 8);
    }
    CHECK_FAIL_("%s: %s: MTB buffer differs from offset %u: %08x -> %08x, compiled %08x -> %08x",
                name, what, i, w[0], w[1], w[2], w[3]);
  }
  if (a->reason != b->reason)
    CHECK_FAIL_("%s: %s: stop reason %d, compiled %d", name, what, b->reason, a->reason);
}

static unsigned char *read_file(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *buf = n > 0 ? malloc((size_t)n) : NULL;
  *len = buf ? fread(buf, 1, (size_t)n, f) : 0;
  fclose(f);
  return buf;
}

/* The image's machine: a built-in, or the machine file its tests use. */
static struct sonde_machine *machine_for(const char *mname)
{
  struct sonde_machine *m = NULL;
  if (!strcmp(mname, "microbit")) /* QEMU's ARMv6-M board; the VM runs it as the M0+ */
    mname = "cm0plus";
  if (!strcmp(mname, "an505")) {
    size_t len;
    unsigned char *text = read_file(SONDE_SOURCE_DIR "/tests/vm/an505.machine", &len);
    if (text && sonde_machine_parse((const char *)text, len, "an505.machine", &m, NULL) != 0)
      m = NULL;
    free(text);
    return m;
  }
  if (sonde_machine_builtin(mname, &m) != 0)
    return NULL;
  return m;
}

static struct run runs[EX_COUNT];

static void test_every_image(void)
{
  FILE *list = fopen(SONDE_FIRMWARE_DIR "/images.txt", "r");
  REQUIRE(list);
  char line[512];
  unsigned images = 0, swo_images = 0, mtb_images = 0;
  uint32_t seed = 12345;
  while (fgets(line, sizeof line, list)) {
    char name[256], mname[64];
    if (sscanf(line, "%255s %63s", name, mname) != 2)
      continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.elf", SONDE_FIRMWARE_DIR, name);
    size_t len;
    unsigned char *elf = read_file(path, &len);
    if (!elf) {
      CHECK_FAIL_("missing %s (build the 'firmware' target)", path);
      continue;
    }
    struct sonde_machine *m = machine_for(mname);
    if (!m) {
      CHECK_FAIL_("%s: no machine '%s'", name, mname);
      free(elf);
      continue;
    }
    seed = seed * 1103515245u + 12345u;
    bool ok = true;
    for (int ex = 0; ex < EX_COUNT && ok; ex++)
      ok = run_image(elf, len, name, m, ex, seed | 1u, &runs[ex]);
    if (ok) {
      for (int ex = 1; ex < EX_COUNT; ex++)
        compare(name, &runs[EX_JIT], &runs[ex], ex);
      images++;
      swo_images += runs[EX_JIT].swo_bytes > 0;
      mtb_images += runs[EX_JIT].mtb != 0;
    }
    sonde_machine_free(m);
    free(elf);
  }
  fclose(list);
  printf("%u images, %u with SWO bytes, %u with the MTB on\n", images, swo_images, mtb_images);
  CHECK(images >= 150);
}

int main(void)
{
  RUN(test_every_image);
  return check_summary();
}
