/* Internal structures of src/monitor (monitor.h): the function table and the
 * debug link with its backends (link_vm.c, link_openocd.c, link_gdb.c). */
#ifndef SONDE_MONITOR_INTERNAL_H
#define SONDE_MONITOR_INTERNAL_H

#include "sonde/monitor.h"

struct sonde_mon_ftab {
  struct sonde_mon_func *f;
  size_t n;
  uint64_t *edges; /* sorted caller << 32 | callee */
  size_t nedges, capedges;
  char *names;     /* storage of "sub_XXXXXXXX" names (from code) */
};

struct sonde_mon_link;
/* One backend. Every operation returns 0 (or a state >= 0 for wait) or a
 * negative SONDE_E_* after setting l->diag. */
struct mon_link_ops {
  int (*read)(struct sonde_mon_link *l, uint32_t addr, uint32_t *words, unsigned n);
  int (*write)(struct sonde_mon_link *l, uint32_t addr, uint32_t value);
  int (*halt)(struct sonde_mon_link *l);
  int (*resume)(struct sonde_mon_link *l);
  int (*step)(struct sonde_mon_link *l);
  int (*read_pc)(struct sonde_mon_link *l, uint32_t *pc);
  int (*wait)(struct sonde_mon_link *l, uint64_t cycles, unsigned timeout_ms);
  int (*cycles)(struct sonde_mon_link *l, uint64_t *cycles);
  void (*close)(struct sonde_mon_link *l);
};

#define MON_RX_MAX 65536

struct sonde_mon_link {
  enum sonde_mon_link_kind kind;
  char name[96];
  const struct mon_link_ops *ops;
  struct sonde_diag diag;
  struct sonde_mon_link_stats stats;
  bool reads_running;
  /* vm */
  struct sonde_vm *vm;
  bool exited;
  int exit_code;
  /* sockets (openocd, gdb) */
  int fd;
  unsigned timeout_ms;
  char *rx;          /* received bytes not yet consumed */
  size_t rxlen;
  bool running;      /* gdb: a continue is outstanding */
  bool noack;        /* gdb: QStartNoAckMode accepted */
  /* CYCCNT extension to 64 bits */
  bool cyc_have;
  uint32_t cyc_last;
  uint64_t cyc_hi;
};

uint64_t mon_now_ns(void);
/* Extend a 32-bit CYCCNT reading (monotonic between calls) to 64 bits. */
uint64_t mon_cyc_extend(struct sonde_mon_link *l, uint32_t cyccnt);

/* DEMCR.TRCENA and DWT_CTRL.CYCCNTENA on (read-modify-write; pcpoll.c). */
int mon_enable_cyccnt(struct sonde_mon_link *l);
/* A probe that reads while running: resume the core if it is halted. */
int mon_run_if_halted(struct sonde_mon_link *l);

/* Backends. */
int mon_link_vm_init(struct sonde_mon_link *l, struct sonde_vm *vm);
int mon_link_openocd_init(struct sonde_mon_link *l, const char *host, unsigned port);
int mon_link_gdb_init(struct sonde_mon_link *l, const char *host, unsigned port);
/* The handshake on a connected l->fd (what _init does after connecting). */
int mon_link_openocd_start(struct sonde_mon_link *l);
int mon_link_gdb_start(struct sonde_mon_link *l);
/* A socket link over an already connected fd (owned by the link from now on),
 * for tests and fuzzing: the peer is whatever holds the other end. */
int mon_link_from_fd(enum sonde_mon_link_kind kind, int fd, unsigned timeout_ms,
                     struct sonde_mon_link **out, struct sonde_diag *diag);

/* TCP (net.c): connect with a timeout; send all; receive what is there within
 * the link's timeout (appended to l->rx). Errors set l->diag. */
int mon_net_connect(struct sonde_mon_link *l, const char *host, unsigned port);
int mon_net_send(struct sonde_mon_link *l, const void *buf, size_t len);
int mon_net_recv(struct sonde_mon_link *l, unsigned timeout_ms);
void mon_net_consume(struct sonde_mon_link *l, size_t n);

/* A growable array append (events, changes): *cap doubles. */
int mon_grow(void **arr, size_t *cap, size_t n, size_t elem);

#endif
