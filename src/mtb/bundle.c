/* The post-mortem bundle written by target/cortexm/mtb.c's fault helper
 * (docs/formats.md "MTB post-mortem bundle"): header, trace buffer, stack
 * slice, CRC-32. */
#include <stdio.h>
#include <string.h>

#include "sonde/mtb.h"

static uint32_t le32(const uint8_t *p)
{
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint32_t sonde_mtb_crc32(uint32_t crc, const void *data, size_t n)
{
  const uint8_t *p = data;
  crc = ~crc;
  while (n--) {
    crc ^= *p++;
    for (int k = 0; k < 8; k++)
      crc = (crc & 1) ? 0xEDB88320u ^ (crc >> 1) : crc >> 1;
  }
  return ~crc;
}

int sonde_mtb_bundle_parse(const void *data, size_t len, struct sonde_mtb_bundle *out,
                           struct sonde_diag *d)
{
  struct sonde_diag tmp;
  if (!d)
    d = &tmp;
  if (!out || (!data && len))
    return sonde_diag_set(d, SONDE_E_ARG, "no bundle");
  memset(out, 0, sizeof *out);
  const uint8_t *b = data;
  if (len < 4 || memcmp(b, "SMTB", 4))
    return sonde_diag_set(d, SONDE_E_FORMAT, "offset 0: not an MTB bundle (no \"SMTB\" magic)");
  if (len < 8)
    return sonde_diag_set(d, SONDE_E_TRUNCATED, "truncated: %zu bytes, a bundle has at least %u",
                          len, SONDE_MTB_BUNDLE_HEADER_V1 + 4);
  unsigned version = b[4] | b[5] << 8, hdr = b[6] | b[7] << 8;
  if (version != 1 && version != 2)
    return sonde_diag_set(d, SONDE_E_UNSUPPORTED,
                          "offset 4: bundle version %u (this sonde reads versions 1 and 2)",
                          version);
  unsigned want_hdr = version == 1 ? SONDE_MTB_BUNDLE_HEADER_V1 : SONDE_MTB_BUNDLE_HEADER;
  if (hdr != want_hdr)
    return sonde_diag_set(d, SONDE_E_FORMAT, "offset 6: header size %u, version %u has %u", hdr,
                          version, want_hdr);
  if (len < hdr + 4)
    return sonde_diag_set(d, SONDE_E_TRUNCATED,
                          "truncated: %zu bytes, a version-%u bundle has at least %u", len,
                          version, hdr + 4);
  uint32_t total = le32(b + 8), nbuf = le32(b + 32), nstack = le32(b + 36);
  uint64_t want = (uint64_t)hdr + nbuf + nstack + 4;
  if (total != want)
    return sonde_diag_set(d, SONDE_E_FORMAT,
                          "offset 8: total size %u does not match the header (%llu: %u + buffer "
                          "%u + stack %u + 4)",
                          total, (unsigned long long)want, hdr, nbuf, nstack);
  if (len < total)
    return sonde_diag_set(d, SONDE_E_TRUNCATED, "truncated: %zu bytes of a %u-byte bundle", len,
                          total);
  uint32_t crc = le32(b + total - 4), got = sonde_mtb_crc32(0, b, total - 4);
  if (crc != got)
    return sonde_diag_set(d, SONDE_E_FORMAT,
                          "offset %u: CRC-32 0x%08x does not match the contents (0x%08x): corrupt",
                          total - 4, crc, got);
  unsigned arch = le32(b + 12);
  if (arch != 6 && arch != 8)
    return sonde_diag_set(d, SONDE_E_FORMAT, "offset 12: architecture %u (6 or 8)", arch);
  out->version = version;
  out->arch = arch;
  out->raw = (struct sonde_mtb_raw){b + hdr, nbuf, le32(b + 28), le32(b + 16), le32(b + 20), true};
  out->exc_return = le32(b + 44);
  for (int i = 0; i < 8; i++)
    out->frame[i] = le32(b + 48 + 4 * i);
  out->cfsr = le32(b + 80);
  out->hfsr = le32(b + 84);
  out->mmfar = le32(b + 88);
  out->bfar = le32(b + 92);
  out->shcsr = le32(b + 96);
  out->ipsr = le32(b + 100);
  memcpy(out->build_id, b + 104, SONDE_MTB_BUILD_ID_MAX);
  out->stack_addr = le32(b + 40);
  out->stack = b + hdr + nbuf;
  out->stack_len = nstack;
  out->flow = le32(b + 24);
  if (version == 1) { /* 20 bytes, all zero when none was recorded */
    for (int i = 0; i < SONDE_MTB_BUILD_ID_MAX; i++)
      if (out->build_id[i])
        out->build_id_len = SONDE_MTB_BUILD_ID_MAX;
    return 0;
  }
  uint32_t flags = le32(b + 124);
  out->flags = flags & 7u;
  out->build_id_len = (flags >> 8) & 0xFFu;
  if (out->build_id_len > SONDE_MTB_BUILD_ID_MAX)
    return sonde_diag_set(d, SONDE_E_FORMAT, "offset 125: build id of %u bytes (at most %u)",
                          out->build_id_len, SONDE_MTB_BUILD_ID_MAX);
  for (int i = 0; i < 8; i++)
    out->r4_r11[i] = le32(b + 128 + 4 * i);
  out->msp = le32(b + 160);
  out->psp = le32(b + 164);
  out->control = le32(b + 168);
  out->msplim = le32(b + 172);
  out->psplim = le32(b + 176);
  out->fpscr = le32(b + 180);
  for (int i = 0; i < 32; i++)
    out->s[i] = le32(b + 184 + 4 * i);
  return 0;
}

const char *sonde_mtb_fault_words(uint32_t cfsr, uint32_t hfsr, char *buf, size_t cap)
{
  static const struct {
    uint32_t bit;
    const char *name;
  } cf[] = {{1u << 0, "IACCVIOL"},    {1u << 1, "DACCVIOL"},     {1u << 3, "MUNSTKERR"},
            {1u << 4, "MSTKERR"},     {1u << 5, "MLSPERR"},      {1u << 7, "MMARVALID"},
            {1u << 8, "IBUSERR"},     {1u << 9, "PRECISERR"},    {1u << 10, "IMPRECISERR"},
            {1u << 11, "UNSTKERR"},   {1u << 12, "STKERR"},      {1u << 13, "LSPERR"},
            {1u << 15, "BFARVALID"},  {1u << 16, "UNDEFINSTR"},  {1u << 17, "INVSTATE"},
            {1u << 18, "INVPC"},      {1u << 19, "NOCP"},        {1u << 20, "STKOF"},
            {1u << 24, "UNALIGNED"},  {1u << 25, "DIVBYZERO"}},
    hf[] = {{1u << 1, "VECTTBL"}, {1u << 30, "FORCED"}, {1u << 31, "DEBUGEVT"}};
  size_t n = 0;
  if (!cap)
    return buf;
  buf[0] = 0;
  for (size_t i = 0; i < sizeof cf / sizeof cf[0]; i++)
    if (cfsr & cf[i].bit && n < cap)
      n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? " " : "", cf[i].name);
  for (size_t i = 0; i < sizeof hf / sizeof hf[0]; i++)
    if (hfsr & hf[i].bit && n < cap)
      n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? " " : "", hf[i].name);
  return buf;
}

static void put32(uint8_t *p, uint32_t v)
{
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
  p[2] = (uint8_t)(v >> 16);
  p[3] = (uint8_t)(v >> 24);
}

long sonde_mtb_bundle_write(const struct sonde_mtb_bundle *b, void *out, size_t cap)
{
  if (!b || (b->raw.len && !b->raw.buf) || (b->stack_len && !b->stack) || b->stack_len % 4 ||
      b->raw.len % 8 || b->raw.len > (1u << 30) || b->stack_len > (1u << 30) ||
      b->build_id_len > SONDE_MTB_BUILD_ID_MAX)
    return SONDE_E_ARG;
  const size_t hdr = SONDE_MTB_BUNDLE_HEADER;
  size_t total = hdr + b->raw.len + b->stack_len + 4;
  if (!out)
    return (long)total;
  if (cap < total)
    return SONDE_E_RANGE;
  uint8_t *o = out;
  memset(o, 0, hdr);
  memcpy(o, "SMTB", 4);
  o[4] = SONDE_MTB_BUNDLE_VERSION;
  o[6] = hdr & 0xFF;
  o[7] = hdr >> 8;
  put32(o + 8, (uint32_t)total);
  put32(o + 12, b->arch);
  put32(o + 16, b->raw.position);
  put32(o + 20, b->raw.master);
  put32(o + 24, b->flow);
  put32(o + 28, b->raw.base);
  put32(o + 32, (uint32_t)b->raw.len);
  put32(o + 36, (uint32_t)b->stack_len);
  put32(o + 40, b->stack_addr);
  put32(o + 44, b->exc_return);
  for (int i = 0; i < 8; i++)
    put32(o + 48 + 4 * i, b->frame[i]);
  put32(o + 80, b->cfsr);
  put32(o + 84, b->hfsr);
  put32(o + 88, b->mmfar);
  put32(o + 92, b->bfar);
  put32(o + 96, b->shcsr);
  put32(o + 100, b->ipsr);
  memcpy(o + 104, b->build_id, b->build_id_len);
  put32(o + 124, (b->flags & 7u) | (uint32_t)b->build_id_len << 8);
  for (int i = 0; i < 8; i++)
    put32(o + 128 + 4 * i, b->r4_r11[i]);
  put32(o + 160, b->msp);
  put32(o + 164, b->psp);
  put32(o + 168, b->control);
  put32(o + 172, b->msplim);
  put32(o + 176, b->psplim);
  put32(o + 180, b->fpscr);
  for (int i = 0; i < 32; i++)
    put32(o + 184 + 4 * i, b->s[i]);
  if (b->raw.len)
    memcpy(o + hdr, b->raw.buf, b->raw.len);
  if (b->stack_len)
    memcpy(o + hdr + b->raw.len, b->stack, b->stack_len);
  put32(o + total - 4, sonde_mtb_crc32(0, o, total - 4));
  return (long)total;
}
