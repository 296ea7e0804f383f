/* The socket links of src/monitor: the OpenOCD Tcl RPC client against a fake
 * server replaying OpenOCD 0.12's answers (tests/monitor/openocd_transcript.txt,
 * mdw answers generated in its format), the GDB remote client against the
 * VM's own GDB server (`sonde run --gdb`'s library), and bad links: a refused
 * connection, garbage answers and a server that drops mid-run (a clear error,
 * and what was recorded is kept). */
#include "check.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sonde/gdb.h"
#include "sonde/monitor.h"
#include "sonde/vm.h"

#define FW(n) SONDE_BINARY_DIR "/firmware/" n ".elf"

static uint32_t g_pcs[8];
enum fake_mode { FAKE_OK, FAKE_GARBAGE, FAKE_DROP };
struct fake {
  int lfd;
  unsigned port;
  enum fake_mode mode;
  unsigned commands;
  pthread_t th;
  char tr[32][2][128];
  unsigned ntr;
};

static void load_transcript(struct fake *f)
{
  FILE *fp = fopen(SONDE_SOURCE_DIR "/tests/monitor/openocd_transcript.txt", "r");
  char line[512];
  while (fp && fgets(line, sizeof line, fp) && f->ntr < 32) {
    if (line[0] == '#')
      continue;
    line[strcspn(line, "\n")] = 0;
    char *tab = strchr(line, '\t');
    if (!tab)
      continue;
    *tab = 0;
    snprintf(f->tr[f->ntr][0], 128, "%.100s", line);
    char *ans = f->tr[f->ntr][1];
    snprintf(ans, 128, "%.100s", tab + 1);
    char *nl = strstr(ans, "\\n");
    if (nl) { /* the transcript writes a newline as \n */
      nl[0] = '\n';
      memmove(nl + 1, nl + 2, strlen(nl + 2) + 1);
    }
    f->ntr++;
  }
  if (fp)
    fclose(fp);
}

static void *fake_main(void *arg)
{
  struct fake *f = arg;
  int fd = accept(f->lfd, NULL, NULL);
  char cmd[512];
  size_t n = 0;
  uint32_t cyc = 1000;
  const uint32_t *pcs = g_pcs;
  while (fd >= 0) {
    char ch;
    if (recv(fd, &ch, 1, 0) != 1)
      break;
    if (ch != 0x1a) {
      if (n < sizeof cmd - 1)
        cmd[n++] = ch;
      continue;
    }
    cmd[n] = 0;
    n = 0;
    f->commands++;
    if (f->mode == FAKE_DROP && f->commands > 16)
      break;
    char ans[512] = "";
    unsigned a, cnt;
    if (sscanf(cmd, "mdw 0x%x %u", &a, &cnt) == 2) {
      if (f->mode == FAKE_GARBAGE && f->commands > 10) {
        snprintf(ans, sizeof ans, "Target not examined yet");
      } else if (a == 0xe0001004u && cnt == 7) {
        cyc += 37;
        snprintf(ans, sizeof ans, "0xe0001004: %08x 00000000 00000000 00000000 00000000 00000000 "
                                  "%08x \n",
                 cyc, pcs[(cyc / 37) % 8]);
      } else {
        int k = snprintf(ans, sizeof ans, "0x%08x:", a);
        for (unsigned i = 0; i < cnt && k < 480; i++)
          k += snprintf(ans + k, sizeof ans - (size_t)k, " %08x", a == 0xe000edfcu ? 0 : i);
        snprintf(ans + k, sizeof ans - (size_t)k, " \n");
      }
    } else {
      snprintf(ans, sizeof ans, "invalid command name \"%.100s\"", cmd);
      for (unsigned i = 0; i < f->ntr; i++)
        if (!strcmp(f->tr[i][0], cmd))
          snprintf(ans, sizeof ans, "%.120s", f->tr[i][1]);
    }
    size_t len = strlen(ans);
    ans[len] = 0x1a;
    send(fd, ans, len + 1, MSG_NOSIGNAL);
  }
  if (fd >= 0)
    close(fd);
  return NULL;
}

static void fake_start(struct fake *f, enum fake_mode mode)
{
  memset(f, 0, sizeof *f);
  load_transcript(f);
  f->mode = mode;
  f->lfd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  bind(f->lfd, (struct sockaddr *)&sa, sizeof sa);
  socklen_t sl = sizeof sa;
  getsockname(f->lfd, (struct sockaddr *)&sa, &sl);
  f->port = ntohs(sa.sin_port);
  listen(f->lfd, 1);
  pthread_create(&f->th, NULL, fake_main, f);
}

static void fake_stop(struct fake *f)
{
  pthread_join(f->th, NULL);
  close(f->lfd);
}

static struct sonde_sym *sym;
static struct sonde_mon_ftab *ft;

static void test_openocd_poll(void)
{
  struct fake f;
  fake_start(&f, FAKE_OK);
  struct sonde_mon_link *l = NULL;
  struct sonde_diag d;
  CHECK(sonde_mon_link_openocd("127.0.0.1", f.port, 2000, &l, &d) == 0);
  CHECK(!strncmp(sonde_mon_link_name(l), "openocd:127.0.0.1:", 18));
  uint32_t pc = 0;
  CHECK(sonde_mon_read_pc(l, &pc) == 0);
  CHECK_EQ_U(pc, 0x3be); /* the recorded answer */
  CHECK_EQ_I(sonde_mon_wait(l, 0, 0), SONDE_MON_RUNNING);
  struct sonde_mon_pc_opts o = {.max_polls = 16, .max_ms = 2000};
  struct sonde_mon_pc_result r;
  CHECK(sonde_mon_pc_poll(l, ft, &o, &r) == 0);
  CHECK_EQ_U(r.polls, 16);
  CHECK_EQ_U(r.unsampled, 2); /* one PCSR value in 8 is 0xFFFFFFFF */
  CHECK_EQ_U(r.mean_poll_cycles, 37);
  CHECK_EQ_U(r.nchanges, 6);
  long g = sonde_mon_ftab_find(ft, "to_global"), m = sonde_mon_ftab_find(ft, "mul32");
  CHECK_EQ_I(r.changes[0].func, sonde_mon_ftab_lookup(ft, r.changes[0].pc));
  bool seen_g = false, seen_m = false;
  for (size_t i = 0; i < r.nchanges; i++) {
    seen_g |= r.changes[i].func == g;
    seen_m |= r.changes[i].func == m;
  }
  CHECK(seen_g && seen_m);
  struct sonde_mon_link_stats st;
  sonde_mon_link_stats(l, &st);
  CHECK(st.ops >= 16 && st.bytes_in > 0);
  printf("openocd (fake): %llu polls at %.0f polls/s, %zu changes\n", (unsigned long long)r.polls,
         r.polls_per_host_s, r.nchanges);
  sonde_mon_pc_result_free(&r);
  sonde_mon_link_free(l);
  fake_stop(&f);
}

static void test_bad_links(void)
{
  struct sonde_mon_link *l = NULL;
  struct sonde_diag d;
  /* refused: nobody listens (a port just released) */
  struct fake f;
  fake_start(&f, FAKE_OK);
  unsigned port = f.port;
  shutdown(f.lfd, SHUT_RDWR);
  close(f.lfd);
  pthread_cancel(f.th);
  pthread_join(f.th, NULL);
  CHECK_EQ_I(sonde_mon_link_openocd("127.0.0.1", port, 500, &l, &d), SONDE_E_IO);
  CHECK(strstr(d.msg, "connect") != NULL);
  printf("refused: %s\n", d.msg);
  /* garbage answers: a clear error, the polls so far kept */
  fake_start(&f, FAKE_GARBAGE);
  CHECK(sonde_mon_link_openocd("127.0.0.1", f.port, 2000, &l, &d) == 0);
  struct sonde_mon_pc_opts o = {.max_polls = 100, .max_ms = 2000};
  struct sonde_mon_pc_result r;
  CHECK_EQ_I(sonde_mon_pc_poll(l, ft, &o, &r), SONDE_E_FORMAT);
  CHECK(strstr(sonde_mon_link_error(l), "unexpected answer 'Target not examined yet'") != NULL);
  CHECK(r.polls > 0 && r.nchanges > 0);
  printf("garbage: %s (kept %llu polls)\n", sonde_mon_link_error(l), (unsigned long long)r.polls);
  sonde_mon_pc_result_free(&r);
  sonde_mon_link_free(l);
  fake_stop(&f);
  /* dropped mid-run */
  fake_start(&f, FAKE_DROP);
  CHECK(sonde_mon_link_openocd("127.0.0.1", f.port, 2000, &l, &d) == 0);
  CHECK_EQ_I(sonde_mon_pc_poll(l, ft, &o, &r), SONDE_E_IO);
  CHECK(strstr(sonde_mon_link_error(l), "closed") != NULL);
  CHECK(r.polls > 0 && r.error == SONDE_E_IO);
  printf("dropped: %s (kept %llu polls)\n", sonde_mon_link_error(l), (unsigned long long)r.polls);
  sonde_mon_pc_result_free(&r);
  sonde_mon_link_free(l);
  fake_stop(&f);
  /* a bad link spec */
  CHECK_EQ_I(sonde_mon_link_open("jtag:1", NULL, 0, &l, &d), SONDE_E_ARG);
  CHECK_EQ_I(sonde_mon_link_open("openocd:host:99999", NULL, 0, &l, &d), SONDE_E_ARG);
}

/* ---- GDB client against the VM's GDB server ------------------------------- */

struct gdb_srv {
  struct sonde_vm *vm;
  struct sonde_gdb *g;
  pthread_t th;
  struct sonde_vm_stop stop;
};

static void *gdb_main(void *arg)
{
  struct gdb_srv *s = arg;
  sonde_gdb_serve(s->g, UINT64_MAX, 2000, &s->stop);
  return NULL;
}

static int quiet(void *ctx, int stream, const void *data, size_t len)
{
  (void)ctx, (void)stream, (void)data, (void)len;
  return 0;
}

static int gdb_start(struct gdb_srv *s, struct sonde_machine *m)
{
  FILE *fp = fopen(FW("mon_bench"), "rb"); /* long: the server halts between 2 M-cycle slices */
  fseek(fp, 0, SEEK_END);
  long n = ftell(fp);
  fseek(fp, 0, SEEK_SET);
  void *img = malloc((size_t)n);
  size_t got = fread(img, 1, (size_t)n, fp);
  fclose(fp);
  memset(s, 0, sizeof *s);
  int rc = sonde_vm_new(m, &s->vm);
  if (!rc)
    rc = sonde_vm_load_elf(s->vm, img, got, "mon_demo");
  if (!rc)
    rc = sonde_vm_reset(s->vm);
  free(img);
  sonde_vm_set_output(s->vm, quiet, NULL);
  if (!rc)
    rc = sonde_gdb_new(s->vm, NULL, 0, &s->g);
  if (!rc)
    pthread_create(&s->th, NULL, gdb_main, s);
  return rc;
}

static void gdb_stop(struct gdb_srv *s)
{
  pthread_join(s->th, NULL);
  sonde_gdb_free(s->g);
  sonde_vm_free(s->vm);
}

static void test_gdb(void)
{
  struct sonde_machine *m = NULL;
  sonde_machine_builtin("cm3", &m);
  struct gdb_srv s;
  CHECK(gdb_start(&s, m) == 0);
  struct sonde_mon_link *l = NULL;
  struct sonde_diag d;
  CHECK(sonde_mon_link_gdb("127.0.0.1", sonde_gdb_port(s.g), 2000, &l, &d) == 0);
  CHECK(!sonde_mon_link_reads_running(l));
  /* breakpoint mode first: the first three calls of to_global */
  uint32_t a;
  sonde_sym_address(sym, "to_global", &a, NULL);
  struct sonde_mon_bp_opts bo = {.max_events = 3, .max_ms = 2000};
  struct sonde_mon_bp_result br;
  CHECK(sonde_mon_break(l, &a, 1, &bo, &br) == 0);
  CHECK_EQ_U(br.nevents, 3);
  for (size_t i = 0; i < br.nevents; i++)
    CHECK_EQ_U(br.events[i].addr, a);
  CHECK(br.nevents == 3 && br.events[0].cycle < br.events[1].cycle);
  sonde_mon_bp_result_free(&br);
  uint32_t comp = 1;
  CHECK(sonde_mon_halt(l) == 0);
  CHECK(sonde_mon_read32(l, SONDE_MON_FP_COMP(0), &comp) == 0);
  CHECK_EQ_U(comp, 0); /* breakpoint mode cleared its comparator */
  /* halting PC polling */
  struct sonde_mon_pc_opts o = {.max_polls = 40, .max_ms = 5000};
  struct sonde_mon_pc_result r;
  CHECK(sonde_mon_pc_poll(l, ft, &o, &r) == 0);
  CHECK_EQ_U(r.polls, 40);
  CHECK(r.nchanges >= 2 && !r.exited && r.mean_poll_cycles > 1000);
  bool known = true;
  for (size_t i = 0; i < r.nchanges; i++)
    known &= r.changes[i].func >= 0;
  CHECK(known || r.exited);
  printf("gdb: %llu polls, %.0f polls/s of host time, %zu changes, mean %.0f cycles apart%s\n",
         (unsigned long long)r.polls, r.polls_per_host_s, r.nchanges, r.mean_poll_cycles,
         r.exited ? ", exited" : "");
  /* an error reply: memory nothing maps */
  CHECK(sonde_mon_halt(l) == 0);
  uint32_t v;
  CHECK_EQ_I(sonde_mon_read32(l, 0xF0000000u, &v), SONDE_E_IO);
  CHECK(strstr(sonde_mon_link_error(l), "the server refused") != NULL);
  printf("gdb error reply: %s\n", sonde_mon_link_error(l));
  sonde_mon_pc_result_free(&r);
  sonde_mon_link_free(l); /* detaches: the server runs the firmware to its end */
  gdb_stop(&s);
  CHECK_EQ_I(s.stop.reason, SONDE_VM_STOP_EXIT);
  sonde_machine_free(m);
}

/* A GDB server that answers with a bad checksum, then one that hangs up. */
struct badgdb {
  int lfd;
  unsigned port;
  int mode;
  pthread_t th;
};

static void *badgdb_main(void *arg)
{
  struct badgdb *b = arg;
  int fd = accept(b->lfd, NULL, NULL);
  char buf[256];
  ssize_t n = fd >= 0 ? recv(fd, buf, sizeof buf, 0) : -1;
  if (n > 0 && b->mode == 0)
    send(fd, "+$OK#00", 7, MSG_NOSIGNAL); /* OK's checksum is 9a */
  if (fd >= 0)
    close(fd);
  return NULL;
}

static void test_gdb_bad(void)
{
  for (int mode = 0; mode < 2; mode++) {
    struct badgdb b = {.mode = mode};
    b.lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    bind(b.lfd, (struct sockaddr *)&sa, sizeof sa);
    socklen_t sl = sizeof sa;
    getsockname(b.lfd, (struct sockaddr *)&sa, &sl);
    listen(b.lfd, 1);
    pthread_create(&b.th, NULL, badgdb_main, &b);
    struct sonde_mon_link *l = NULL;
    struct sonde_diag d;
    int rc = sonde_mon_link_gdb("127.0.0.1", ntohs(sa.sin_port), 1000, &l, &d);
    CHECK_EQ_I(rc, mode == 0 ? SONDE_E_FORMAT : SONDE_E_IO);
    CHECK(strstr(d.msg, mode == 0 ? "bad checksum" : "closed") != NULL);
    printf("gdb bad server %d: %s\n", mode, d.msg);
    pthread_join(b.th, NULL);
    close(b.lfd);
  }
}

int main(void)
{
  struct sonde_diag d;
  if (sonde_sym_open(FW("mon_demo"), &sym, &d) < 0 || sonde_mon_ftab_from_sym(sym, &ft) < 0) {
    fprintf(stderr, "%s\n", d.msg);
    return 1;
  }
  uint32_t g = 0, mu = 0, dv = 0;
  sonde_sym_address(sym, "to_global", &g, NULL);
  sonde_sym_address(sym, "mul32", &mu, NULL);
  sonde_sym_address(sym, "div32", &dv, NULL);
  const uint32_t p[8] = {g, g + 4, mu, mu + 2, dv, dv + 4, g + 8, 0xFFFFFFFFu /* halted */};
  memcpy(g_pcs, p, sizeof p);
  RUN(test_openocd_poll);
  RUN(test_bad_links);
  RUN(test_gdb);
  RUN(test_gdb_bad);
  sonde_mon_ftab_free(ft);
  sonde_sym_free(sym);
  return check_summary();
}
