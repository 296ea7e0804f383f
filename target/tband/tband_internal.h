/* tband_internal.h: what the tracer's own .c files share (not for users). */
#ifndef TBAND_INTERNAL_H
#define TBAND_INTERNAL_H

#include "tband.h"

#if tband_configENABLE
#include "tband_encode.h"

/* Emit one event: critical section, timestamp taken inside it (so the order
 * in a core's buffer is timestamp order), encode on the stack, submit.
 *   TBAND_EMIT_TS(isr_enter, id);    TBAND_EMIT_META(isr_name, id, name); */
#define TBAND_EMIT_TS(name, ...)                                                     \
  do {                                                                               \
    tband_portENTER_CRITICAL_FROM_ANY();                                             \
    {                                                                                \
      uint8_t tband_b_[TBAND_EVT_##name##_MAXLEN];                                   \
      size_t tband_n_ = tband_encode_##name(tband_b_, tband_portTIMESTAMP(), __VA_ARGS__); \
      tband_submit_to_backend(tband_b_, tband_n_, false);                            \
    }                                                                                \
    tband_portEXIT_CRITICAL_FROM_ANY();                                              \
  } while (0)
#define TBAND_EMIT_META(name, ...)                                                   \
  do {                                                                               \
    tband_portENTER_CRITICAL_FROM_ANY();                                             \
    {                                                                                \
      uint8_t tband_b_[TBAND_EVT_##name##_MAXLEN];                                   \
      size_t tband_n_ = tband_encode_##name(tband_b_, __VA_ARGS__);                  \
      tband_submit_to_backend(tband_b_, tband_n_, true);                             \
    }                                                                                \
    tband_portEXIT_CRITICAL_FROM_ANY();                                              \
  } while (0)

/* Backend interface (one of tband_backend_*.c is compiled in). */
enum tband_backend_result {
  TBAND_STORED,  /* accepted */
  TBAND_DROPPED, /* lost: counted and reported as dropped_evt_cnt */
  TBAND_IGNORED, /* backend not recording (snapshot not triggered/finished) */
};
enum tband_backend_result tband_backend_submit(uint32_t core, const uint8_t *buf, size_t len,
                                               bool is_metadata);
void tband_backend_init(void);

/* Loads/stores of flags shared between cores. */
#if tband_portNUMBER_OF_CORES > 1
#define TBAND_LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define TBAND_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#else
#define TBAND_LOAD(p) (*(p))
#define TBAND_STORE(p, v) (*(p) = (v))
#endif

/* Byte copy without libc. */
static inline void tband_copy(uint8_t *dst, const uint8_t *src, size_t n)
{
  for (size_t i = 0; i < n; i++)
    dst[i] = src[i];
}

#endif
#endif
