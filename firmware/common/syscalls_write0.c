/* Minimal newlib output for images that must behave identically on every
 * semihosting host: stdout/stderr through SYS_WRITE0 only. newlib's rdimon
 * probes the host at start-up (SYS_OPEN of ":semihosting-features" and
 * ":tt"), and QEMU and the VM answer differently, so their instruction
 * streams would differ; the QEMU comparison builds the firmware test
 * programs with this file and nosys.specs instead (firmware/fwtests.cmake).
 * Overrides libnosys's _write and _isatty (line-buffered stdout). */
#include <errno.h>

#include "sonde_fw.h"

int _write(int fd, const char *p, int n);
int _isatty(int fd);

int _write(int fd, const char *p, int n)
{
  if (fd != 1 && fd != 2) {
    errno = EBADF;
    return -1;
  }
  char chunk[65];
  for (int done = 0; done < n;) {
    int k = n - done < 64 ? n - done : 64;
    for (int i = 0; i < k; i++)
      chunk[i] = p[done + i];
    chunk[k] = 0;
    sh_write0(chunk);
    done += k;
  }
  return n;
}

int _isatty(int fd) { return fd <= 2; }
