/* Target-side DWT/ITM/TPIU setup and ITM printf (cm_trace.h). */
#include "cm_trace.h"

void cm_tpiu_swo(uint32_t prescaler, int nrz)
{
  CM_DEMCR |= CM_DEMCR_TRCENA;
  CM_TPIU_CSPSR = 1;                /* port size 1 */
  CM_TPIU_SPPR = nrz ? 2u : 1u;     /* 2 = SWO NRZ, 1 = SWO Manchester */
  CM_TPIU_ACPR = prescaler;         /* baud = TRACECLKIN / (ACPR + 1) */
  CM_TPIU_FFCR = 0x100;             /* formatter off (bypass), TrigIn */
}

void cm_itm_setup(uint32_t ports, int ts, int sync, int hw)
{
  CM_DEMCR |= CM_DEMCR_TRCENA;
  CM_ITM_LAR = 0xC5ACCE55u;         /* unlock the ITM registers */
  CM_ITM_TCR = 0;
  CM_ITM_TPR = 0;
  CM_ITM_TER = ports;
  CM_ITM_TCR = (1u << 16) | CM_ITM_TCR_ITMENA | (ts ? CM_ITM_TCR_TSENA : 0) |
               (sync ? CM_ITM_TCR_SYNCENA : 0) | (hw ? CM_ITM_TCR_TXENA : 0);
}

void cm_itm_global_timestamps(unsigned gtsfreq)
{
  CM_ITM_TCR = (CM_ITM_TCR & ~(3u << 10)) | ((gtsfreq & 3u) << 10);
}

void cm_itm_putc(unsigned port, char c)
{
  if (!(CM_ITM_TCR & CM_ITM_TCR_ITMENA) || !(CM_ITM_TER & (1u << port)))
    return;
  while (!(CM_ITM_STIM(port) & 1)) /* FIFOREADY */
    ;
  CM_ITM_STIM8(port) = (uint8_t)c;
}

void cm_itm_puts(unsigned port, const char *s)
{
  while (*s)
    cm_itm_putc(port, *s++);
}

static int put_uint(unsigned port, uint32_t v, unsigned base, unsigned width, char pad)
{
  char buf[12];
  unsigned n = 0;
  do {
    unsigned d = v % base;
    buf[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
    v /= base;
  } while (v);
  int out = 0;
  for (; width > n; width--, out++)
    cm_itm_putc(port, pad);
  while (n) {
    cm_itm_putc(port, buf[--n]);
    out++;
  }
  return out;
}

int cm_itm_vprintf(unsigned port, const char *fmt, va_list ap)
{
  int out = 0;
  for (; *fmt; fmt++) {
    if (*fmt != '%') {
      cm_itm_putc(port, *fmt);
      out++;
      continue;
    }
    fmt++;
    char pad = ' ';
    unsigned width = 0;
    if (*fmt == '0')
      pad = '0';
    while (*fmt >= '0' && *fmt <= '9')
      width = width * 10 + (unsigned)(*fmt++ - '0');
    switch (*fmt) {
    case 'd': {
      int v = va_arg(ap, int);
      uint32_t u = (uint32_t)v;
      if (v < 0) {
        cm_itm_putc(port, '-');
        out++;
        u = 0u - u;
      }
      out += put_uint(port, u, 10, width, pad);
      break;
    }
    case 'u': out += put_uint(port, va_arg(ap, unsigned), 10, width, pad); break;
    case 'x': out += put_uint(port, va_arg(ap, unsigned), 16, width, pad); break;
    case 'c': cm_itm_putc(port, (char)va_arg(ap, int)); out++; break;
    case 's': {
      const char *s = va_arg(ap, const char *);
      while (*s) {
        cm_itm_putc(port, *s++);
        out++;
      }
      break;
    }
    case '%': cm_itm_putc(port, '%'); out++; break;
    case '\0': return out;
    default: break;
    }
  }
  return out;
}

int cm_itm_printf(unsigned port, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  int n = cm_itm_vprintf(port, fmt, ap);
  va_end(ap);
  return n;
}

void cm_dwt_pc_sampling(uint32_t ctrl13, uint32_t cyccnt0)
{
  CM_DEMCR |= CM_DEMCR_TRCENA;
  uint32_t keep = CM_DWT_CTRL & 0x007F0000u; /* exception trace, event counters */
  CM_DWT_CTRL = keep;                          /* stop: POSTINIT becomes writable */
  CM_DWT_CYCCNT = cyccnt0;
  CM_DWT_CTRL = keep | (ctrl13 & 0x1FFFu);
}

void cm_dwt_exception_trace(int on)
{
  CM_DEMCR |= CM_DEMCR_TRCENA;
  if (on)
    CM_DWT_CTRL |= CM_DWT_CTRL_EXCTRCENA;
  else
    CM_DWT_CTRL &= ~CM_DWT_CTRL_EXCTRCENA;
}

void cm_dwt_data_trace(unsigned n, const volatile void *addr, unsigned mask_bits, uint32_t fn)
{
  CM_DEMCR |= CM_DEMCR_TRCENA;
  CM_DWT_FUNCTION(n) = 0;
  CM_DWT_COMP(n) = (uint32_t)(uintptr_t)addr;
  CM_DWT_MASK(n) = mask_bits;
  CM_DWT_FUNCTION(n) = fn;
}

void cm_dwt_cycle_match(uint32_t cyccnt, uint32_t fn)
{
  CM_DEMCR |= CM_DEMCR_TRCENA;
  CM_DWT_FUNCTION(0) = 0; /* off while reprogramming */
  (void)CM_DWT_FUNCTION(0); /* and a stale MATCHED cleared */
  CM_DWT_COMP(0) = cyccnt;
  CM_DWT_MASK(0) = 0;
  CM_DWT_FUNCTION(0) = CM_DWT_FUNCTION_CYCMATCH | (fn & 0xFu);
}

int cm_dwt_matched(unsigned n)
{
  return (CM_DWT_FUNCTION(n) & CM_DWT_FUNCTION_MATCHED) != 0;
}

int cm_dwt_value_match(uint32_t value, unsigned size, unsigned link0, unsigned link1,
                       uint32_t fn)
{
  CM_DEMCR |= CM_DEMCR_TRCENA;
  if (((CM_DWT_CTRL >> 28) & 0xFu) < 2)
    return -1; /* NUMCOMP */
  uint32_t vsize = size == 4 ? 2u : size == 2 ? 1u : 0u;
  uint32_t rep = size == 4 ? value : size == 2 ? (value & 0xFFFFu) * 0x00010001u
                                               : (value & 0xFFu) * 0x01010101u;
  CM_DWT_FUNCTION(1) = 0;
  CM_DWT_COMP(1) = rep; /* replicated across the word (C1.8.4) */
  CM_DWT_MASK(1) = 0;
  CM_DWT_FUNCTION(1) = CM_DWT_FUNCTION_DATAVMATCH;
  uint32_t f = CM_DWT_FUNCTION(1);
  if (!(f & CM_DWT_FUNCTION_DATAVMATCH) || (link1 != 1 && !(f & CM_DWT_FUNCTION_LNK1ENA)))
    return -1;
  CM_DWT_FUNCTION(1) = CM_DWT_FUNCTION_DATAVMATCH | (vsize << 10) | ((link0 & 0xFu) << 12) |
                       ((link1 & 0xFu) << 16) | (fn & 0xFu);
  return 0;
}
