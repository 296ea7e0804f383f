/* Serial (tty) sources on Linux at any baud rate.
 *
 * glibc's <termios.h> only knows the Bnnn constants, so this file uses the
 * kernel's termios2 interface instead (TCGETS2/TCSETS2 with BOTHER and
 * c_ispeed/c_ospeed, from <asm/termbits.h>). The two headers define the same
 * struct and macro names, so this file must never include <termios.h> (nor
 * <sys/ioctl.h>, which pulls in conflicting definitions); ioctl() is declared
 * by hand below. Raw mode: no echo, no canonical processing, no
 * translations, 8 data bits, no parity, 1 stop bit, receiver on, modem
 * control lines ignored, reads return as soon as one byte is there. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "source_internal.h"

#if defined(__linux__)
#include <asm/ioctls.h>
#include <asm/termbits.h>
extern int ioctl(int fd, unsigned long request, ...);

int swo_serial_open(const char *dev, uint32_t baud, bool nonblocking, int *fd_out,
                    uint32_t *baud_out, struct sonde_diag *diag)
{
  int fd = open(dev, O_RDONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return sonde_diag_set(diag, SONDE_E_IO, "serial:%s: %s", dev, strerror(errno));
  struct termios2 t;
  if (ioctl(fd, TCGETS2, &t) != 0) {
    int e = errno;
    close(fd);
    return sonde_diag_set(diag, SONDE_E_IO, "serial:%s: not a terminal: %s", dev, strerror(e));
  }
  t.c_iflag &= ~(tcflag_t)(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL | IXON |
                           IXOFF | IXANY | INPCK | IUCLC | IMAXBEL);
  t.c_oflag &= ~(tcflag_t)OPOST;
  t.c_lflag &= ~(tcflag_t)(ECHO | ECHONL | ECHOE | ECHOK | ICANON | ISIG | IEXTEN);
  t.c_cflag &= ~(tcflag_t)(CSIZE | PARENB | CSTOPB | CRTSCTS);
  t.c_cflag |= CS8 | CREAD | CLOCAL;
  t.c_cc[VMIN] = 1;
  t.c_cc[VTIME] = 0;
  if (baud) {
    t.c_cflag &= ~(tcflag_t)(CBAUD | (CBAUD << IBSHIFT));
    t.c_cflag |= BOTHER | (BOTHER << IBSHIFT);
    t.c_ispeed = baud;
    t.c_ospeed = baud;
  }
  if (ioctl(fd, TCSETS2, &t) != 0) {
    int e = errno;
    close(fd);
    return sonde_diag_set(diag, e == EINVAL ? SONDE_E_UNSUPPORTED : SONDE_E_IO,
                          "serial:%s: cannot set %u baud raw 8N1: %s", dev, (unsigned)baud,
                          strerror(e));
  }
  struct termios2 back;
  if (ioctl(fd, TCGETS2, &back) != 0) {
    int e = errno;
    close(fd);
    return sonde_diag_set(diag, SONDE_E_IO, "serial:%s: %s", dev, strerror(e));
  }
  /* Drivers round to what their divider can make; refuse more than 3%
   * (the most an 8N1 receiver tolerates). */
  if (baud && (back.c_ispeed == 0 || (back.c_ispeed > baud ? back.c_ispeed - baud
                                                           : baud - back.c_ispeed) >
                                         baud / 33)) {
    close(fd);
    return sonde_diag_set(diag, SONDE_E_UNSUPPORTED,
                          "serial:%s: driver set %u baud instead of %u", dev,
                          (unsigned)back.c_ispeed, (unsigned)baud);
  }
  if (!nonblocking) {
    int fl = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  }
  /* Drop whatever the driver buffered before we configured it. */
  ioctl(fd, TCFLSH, TCIFLUSH);
  *fd_out = fd;
  *baud_out = back.c_ispeed;
  return 0;
}
#else
int swo_serial_open(const char *dev, uint32_t baud, bool nonblocking, int *fd_out,
                    uint32_t *baud_out, struct sonde_diag *diag)
{
  (void)baud;
  (void)nonblocking;
  (void)fd_out;
  (void)baud_out;
  return sonde_diag_set(diag, SONDE_E_UNSUPPORTED, "serial:%s: serial sources need Linux", dev);
}
#endif
