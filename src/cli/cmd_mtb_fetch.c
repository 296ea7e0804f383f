/* `sonde mtb fetch`: read the MTB of a live target through a debug link (a
 * GDB server: the VM's `sonde run --gdb`, OpenOCD's, J-Link's; or OpenOCD's
 * Tcl port) and write a post-mortem bundle (docs/formats.md), or copy a
 * bundle the firmware stored in its RAM. docs/mtb.md. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_mtb.h"
#include "sonde/monitor.h"
#include "sonde/mtb.h"
#include "sonde/sym.h"

static int write_file(const char *path, const void *data, size_t n)
{
  FILE *f = cli_open_output(path, true);
  if (!f)
    return CLI_FAIL;
  fwrite(data, 1, n, f);
  return cli_close_output(f, path);
}

/* A bundle the firmware wrote (mtb_bundle_write) at addr: header first for
 * its size, then the whole of it; checked like a file. */
static int fetch_stored(struct sonde_mon_link *l, uint32_t addr, const char *out)
{
  uint32_t hdr[4];
  if (sonde_mon_read_words(l, addr, hdr, 4) < 0)
    return cli_error("%s", sonde_mon_link_error(l));
  if (memcmp(hdr, "SMTB", 4))
    return cli_error("0x%08x: no MTB bundle stored there (no \"SMTB\" magic)", addr);
  uint32_t total = hdr[2];
  if (total < SONDE_MTB_BUNDLE_HEADER_V1 + 4 || total > (64u << 20) || total % 4)
    return cli_error("0x%08x: stored bundle claims %u bytes", addr, total);
  uint32_t *w = malloc(total);
  if (!w)
    return cli_error("out of memory");
  int rc = CLI_FAIL;
  struct sonde_mtb_bundle b;
  struct sonde_diag d;
  if (sonde_mon_read_words(l, addr, w, total / 4) < 0)
    cli_error("%s", sonde_mon_link_error(l));
  else if (sonde_mtb_bundle_parse(w, total, &b, &d) < 0)
    cli_error("0x%08x: stored bundle: %s", addr, d.msg);
  else
    rc = write_file(out, w, total);
  free(w);
  return rc;
}

/* A core register of the halted core through DCRSR/DCRDR (ARMv7-M/ARMv8-M ARM
 * C1.6.3; ARMv6-M C1.6.3 too): select, wait for DHCSR.S_REGRDY, read. */
static int read_core_reg(struct sonde_mon_link *l, uint32_t sel, uint32_t *v)
{
  if (sonde_mon_write32(l, 0xE000EDF4u, sel) < 0)
    return -1;
  for (int i = 0; i < 100; i++) {
    uint32_t dhcsr;
    if (sonde_mon_read32(l, 0xE000EDF0u, &dhcsr) < 0)
      return -1;
    if (dhcsr & (1u << 16))
      return sonde_mon_read32(l, 0xE000EDF8u, v);
  }
  return -1;
}

/* The halted core's registers into the bundle: the "frame" holds the live
 * r0-r3, r12, lr, xpsr (no exception frame: IPSR 0 means halted), and the
 * version-2 fields r4-r11, MSP, PSP, CONTROL and, with the FPU on, S0-S31
 * and FPSCR. A register the link cannot read leaves its flag clear. */
static void read_core(struct sonde_mon_link *l, unsigned arch, struct sonde_mtb_bundle *b)
{
  static const uint32_t frame_sel[8] = {0, 1, 2, 3, 12, 14, 15, 16};
  uint32_t v[8];
  for (int i = 0; i < 8; i++)
    if (read_core_reg(l, frame_sel[i], &v[i]) < 0)
      return;
  uint32_t pc = b->frame[6];
  memcpy(b->frame, v, sizeof v);
  b->frame[6] = pc; /* as sonde_mon_read_pc() gave it */
  for (int i = 0; i < 8; i++)
    if (read_core_reg(l, 4 + (uint32_t)i, &b->r4_r11[i]) < 0)
      return;
  uint32_t special;
  if (read_core_reg(l, 17, &b->msp) < 0 || read_core_reg(l, 18, &b->psp) < 0 ||
      read_core_reg(l, 20, &special) < 0)
    return;
  b->control = special >> 24;
  b->flags |= SONDE_MTB_REGS_CORE;
  uint32_t cpacr;
  if (arch != 8 || sonde_mon_read32(l, 0xE000ED88u, &cpacr) < 0 || ((cpacr >> 20) & 0xF) != 0xF)
    return;
  for (int i = 0; i < 32; i++)
    if (read_core_reg(l, 64 + (uint32_t)i, &b->s[i]) < 0)
      return;
  if (read_core_reg(l, 33, &b->fpscr) == 0)
    b->flags |= SONDE_MTB_REGS_FPU;
}

/* The build id the running firmware carries: the ELF says where its note
 * is loaded; the bytes are read from the target, so a bundle from another
 * build than the ELF's is caught by the decoder. */
static int read_build_id(struct sonde_mon_link *l, const char *elf, struct sonde_mtb_bundle *b)
{
  struct sonde_sym *sym = NULL;
  struct sonde_diag d;
  if (sonde_sym_open(elf, &sym, &d) < 0)
    return cli_error("%s", d.msg);
  uint32_t at;
  size_t n = sonde_sym_build_id(sym, NULL, 0, &at);
  sonde_sym_free(sym);
  if (!n || !at || at % 4) {
    cli_warn("%s: no loaded build id (link with -Wl,--build-id): the bundle has none", elf);
    return CLI_OK;
  }
  if (n > SONDE_MTB_BUILD_ID_MAX)
    n = SONDE_MTB_BUILD_ID_MAX;
  uint32_t w[SONDE_MTB_BUILD_ID_MAX / 4];
  if (sonde_mon_read_words(l, at, w, (unsigned)((n + 3) / 4)) < 0)
    return cli_error("%s", sonde_mon_link_error(l));
  memcpy(b->build_id, w, n);
  b->build_id_len = (unsigned)n;
  return CLI_OK;
}

/* The live MTB: registers, buffer, PC, core registers and (ARMv8-M) fault
 * status. */
static int fetch_live(struct sonde_mon_link *l, uint32_t regs, unsigned arch, bool stop,
                      const char *elf, const char *out)
{
  uint32_t r[4];
  if (sonde_mon_read_words(l, regs, r, 4) < 0)
    return cli_error("%s", sonde_mon_link_error(l));
  /* Freeze the buffer before reading it: EN cleared, and TSTARTEN too, so
   * that a TSTART source (a DWT or MTBDWT comparator) cannot restart tracing
   * once the target runs again. */
  const uint32_t run_bits = (1u << 31) | (1u << 5);
  if (stop && (r[1] & run_bits)) {
    if (sonde_mon_write32(l, regs + 4, r[1] & ~run_bits) < 0)
      return cli_error("%s", sonde_mon_link_error(l));
    r[1] &= ~run_bits;
  }
  uint32_t size = 16u << (r[1] & 0x1F);
  if (!r[3] || size > (1u << 24))
    return cli_error("MTB at 0x%08x: BASE 0x%08x, MASTER 0x%08x: no MTB there? (--regs)", regs,
                     r[3], r[1]);
  uint32_t *buf = malloc(size);
  if (!buf)
    return cli_error("out of memory");
  struct sonde_mtb_bundle b;
  memset(&b, 0, sizeof b);
  b.version = SONDE_MTB_BUNDLE_VERSION;
  b.arch = arch;
  b.raw = (struct sonde_mtb_raw){buf, size, r[3], r[0], r[1], true};
  b.flow = r[2];
  int rc = CLI_FAIL;
  uint32_t fs[6];
  if (sonde_mon_read_words(l, r[3], buf, size / 4) < 0 ||
      sonde_mon_read_pc(l, &b.frame[6]) < 0 ||
      (arch == 8 && sonde_mon_read_words(l, 0xE000ED24u, fs, 6) < 0)) {
    cli_error("%s", sonde_mon_link_error(l));
    goto done;
  }
  if (arch == 8) {
    b.shcsr = fs[0];
    b.cfsr = fs[1];
    b.hfsr = fs[2];
    b.mmfar = fs[4];
    b.bfar = fs[5];
  }
  read_core(l, arch, &b);
  if (elf && read_build_id(l, elf, &b) != CLI_OK)
    goto done;
  long n = sonde_mtb_bundle_write(&b, NULL, 0);
  void *o = n > 0 ? malloc((size_t)n) : NULL;
  if (!o) {
    cli_error("out of memory");
    goto done;
  }
  sonde_mtb_bundle_write(&b, o, (size_t)n);
  rc = write_file(out, o, (size_t)n);
  free(o);
done:
  free(buf);
  return rc;
}

int cmd_mtb_fetch(int argc, char **argv)
{
  static const struct cli_command_help help = {
      "sonde mtb fetch --link gdb:HOST:PORT|openocd:HOST:PORT | --gdb HOST:PORT [--core m33|m0plus] "
      "[--regs <hex>] [-e <elf>] "
      "[--no-stop] [--run-ms <ms>] -o <bundle>\n"
      "sonde mtb fetch --link ... --stored <hex>|<symbol> [-e <elf>] -o <bundle>",
      "Read the Micro Trace Buffer of a live target through a debug link and write a\n"
      "post-mortem bundle (docs/formats.md) for 'sonde mtb decode -e ELF BUNDLE': the MTB\n"
      "registers, the whole buffer, the core registers (r0-r12, lr, pc, xPSR, MSP, PSP,\n"
      "CONTROL; S0-S31 and FPSCR when the FPU is on; IPSR 0: decoded as halted) and on the\n"
      "M33 the fault status registers; with -e, the build id the running firmware carries\n"
      "(read from the target where the ELF loads its .note.gnu.build-id). The MTB is stopped first\n"
      "(MASTER.EN and TSTARTEN cleared) unless --no-stop. --run-ms lets the target run that long\n"
      "before the capture (a GDB server halts it on attach). With --stored, copy the bundle\n"
      "the firmware's fault handler stored at that address (or ELF symbol) instead."};
  const char *link = NULL, *gdb = NULL, *core = "m33", *regs_s = NULL, *stored = NULL, *elf = NULL,
             *output = NULL;
  bool no_stop = false;
  uint64_t run_ms = 0, timeout = 5000;
  const struct cli_opt options[] = {
      OPT_STRING(0, "link", "<spec>", &link, "gdb:HOST:PORT or openocd:HOST:PORT"),
      OPT_STRING(0, "gdb", "<host:port>", &gdb, "the same as --link gdb:HOST:PORT"),
      OPT_STRING(0, "core", "<core>", &core, "m33 (default; MTB registers at 0xE0043000) or m0plus"),
      OPT_STRING(0, "regs", "<hex>", &regs_s,
                 "the MTB register block (M0+: chip-specific, default 0xF0000000)"),
      OPT_FLAG(0, "no-stop", &no_stop, "leave MASTER.EN and TSTARTEN as they are"),
      OPT_U64(0, "run-ms", "<ms>", &run_ms, "let the target run this long first (default 0)"),
      OPT_U64(0, "timeout-ms", "<ms>", &timeout, "link connect/operation timeout (default 5000)"),
      OPT_STRING(0, "stored", "<addr>", &stored,
                 "copy the bundle stored at this hex address or ELF symbol (needs -e)"),
      OPT_ELF(&elf),
      OPT_OUTPUT(&output),
      OPT_END(),
  };
  int nargs;
  int rc = cli_parse(argc, argv, options, &help, &nargs);
  if (rc < 0)
    return CLI_OK;
  if (rc)
    return rc;
  if (nargs)
    return cli_usage_error(&help, "unexpected argument '%s'", argv[0]);
  char gdb_link[300];
  if (gdb && link)
    return cli_usage_error(&help, "--gdb and --link: give one");
  if (gdb) {
    snprintf(gdb_link, sizeof gdb_link, "gdb:%s", gdb);
    link = gdb_link;
  }
  if (!link)
    return cli_usage_error(&help, "missing --link (or --gdb HOST:PORT)");
  if (!output)
    return cli_usage_error(&help, "missing -o <bundle>");
  if (strncmp(link, "gdb:", 4) && strncmp(link, "openocd:", 8))
    return cli_usage_error(&help, "--link '%s': gdb:HOST:PORT or openocd:HOST:PORT", link);
  unsigned arch;
  uint32_t regs;
  if (!strcmp(core, "m33")) {
    arch = 8;
    regs = 0xE0043000u;
  } else if (!strcmp(core, "m0plus")) {
    arch = 6;
    regs = 0xF0000000u;
  } else {
    return cli_usage_error(&help, "unknown --core '%s' (m33 or m0plus)", core);
  }
  if (regs_s && mtb_parse_hex(regs_s, &regs))
    return cli_usage_error(&help, "--regs '%s' is not a hexadecimal address", regs_s);
  uint32_t stored_at = 0;
  if (stored) {
    if (mtb_parse_hex(stored, &stored_at)) {
      if (!elf)
        return cli_usage_error(&help, "--stored '%s' is a symbol: give -e <elf>", stored);
      struct sonde_sym *sym = NULL;
      struct sonde_diag d;
      if (sonde_sym_open(elf, &sym, &d) < 0)
        return cli_error("%s", d.msg);
      int found = sonde_sym_address(sym, stored, &stored_at, NULL);
      sonde_sym_free(sym);
      if (found < 0)
        return cli_error("%s: no symbol '%s'", elf, stored);
    }
  }
  struct sonde_mon_link *l = NULL;
  struct sonde_diag d;
  if (sonde_mon_link_open(link, NULL, (unsigned)timeout, &l, &d) < 0)
    return cli_error("%s", d.msg);
  rc = CLI_OK;
  if (run_ms) {
    if (sonde_mon_resume(l) < 0 || sonde_mon_wait(l, 0, (unsigned)run_ms) < 0) {
      rc = cli_error("%s", sonde_mon_link_error(l));
    } else if (sonde_mon_halt(l) < 0) {
      rc = cli_error("%s", sonde_mon_link_error(l));
    }
  }
  if (rc == CLI_OK)
    rc = stored ? fetch_stored(l, stored_at, output)
                : fetch_live(l, regs, arch, !no_stop, elf, output);
  sonde_mon_link_free(l);
  return rc;
}
