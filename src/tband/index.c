/* The Tonbandgerät event index as data, built from the shared table
 * target/tband/tband_events.def (docs/tband-events.md is generated from it). */
#include "sonde/tband.h"

#include <string.h>

#define F_NONE(n) {NULL, SONDE_TBAND_U8}
#define F_U8(n) {#n, SONDE_TBAND_U8}
#define F_QKIND(n) {#n, SONDE_TBAND_QKIND}
#define F_SBKIND(n) {#n, SONDE_TBAND_SBKIND}
#define F_U32(n) {#n, SONDE_TBAND_U32}
#define F_U64(n) {#n, SONDE_TBAND_U64}
#define F_S64(n) {#n, SONDE_TBAND_S64}
#define F_STR(n) {#n, SONDE_TBAND_STR}
#define GROUP_BASE "base"
#define GROUP_FREERTOS "freertos"
#define META_TS false
#define META_META true
#define EXT_TBAND false
#define EXT_SONDE true

static const struct sonde_tband_evt_desc index_list[] = {
#define TBAND_EVENT(id, group, name, kind, origin, nf, t1, n1, t2, n2, t3, n3)              \
  {id, #name, GROUP_##group, META_##kind, !META_##kind, EXT_##origin, nf,                   \
   {F_##t1(n1), F_##t2(n2), F_##t3(n3)}},
#include "tband_events.def"
#undef TBAND_EVENT
};

static const struct sonde_tband_evt_desc *by_id[256];
static int by_id_ready;

static void build(void)
{
  /* Idempotent and writes the same values every time, so a race between two
   * first callers is harmless. */
  for (size_t i = 0; i < sizeof index_list / sizeof index_list[0]; i++)
    by_id[index_list[i].id] = &index_list[i];
  by_id_ready = 1;
}

const struct sonde_tband_evt_desc *sonde_tband_evt_desc(uint8_t id)
{
  if (!by_id_ready)
    build();
  return by_id[id];
}

const struct sonde_tband_evt_desc *sonde_tband_evt_desc_by_name(const char *name)
{
  if (!name)
    return NULL;
  for (size_t i = 0; i < sizeof index_list / sizeof index_list[0]; i++)
    if (!strcmp(index_list[i].name, name))
      return &index_list[i];
  return NULL;
}

const char *sonde_tband_queue_kind_name(unsigned kind)
{
  static const char *const n[] = {"FRQK_QUEUE", "FRQK_COUNTING_SEMPHR", "FRQK_BINARY_SEMPHR",
                                  "FRQK_MUTEX", "FRQK_RECURSIVE_MUTEX", "FRQK_QUEUE_SET"};
  return kind < 6 ? n[kind] : NULL;
}

const char *sonde_tband_sb_kind_name(unsigned kind)
{
  static const char *const n[] = {"FRSBK_STREAM_BUFFER", "FRSBK_MESSAGE_BUFFER"};
  return kind < 2 ? n[kind] : NULL;
}

bool sonde_tband_evt_field(const struct sonde_tband_evt *e, const char *name, uint64_t *val)
{
  if (!e || !e->desc || !name)
    return false;
  if (e->has_ts && !strcmp(name, "ts")) {
    *val = e->ts;
    return true;
  }
  for (unsigned i = 0; i < e->nfields && i < 3; i++)
    if (e->desc->fields[i].name && !strcmp(e->desc->fields[i].name, name) &&
        e->desc->fields[i].type != SONDE_TBAND_STR) {
      *val = e->val[i];
      return true;
    }
  return false;
}
