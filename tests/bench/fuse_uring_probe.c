// What FUSE over io_uring (Linux 6.14+, `fuse.enable_uring`) would save a
// FUSE daemon against reading and writing /dev/fuse, measured with a file
// system that does nothing: one directory with one 1 MiB file of zeros,
// no caching (every stat is a LOOKUP, every 4 KiB read a READ). Used by
// tests/bench/fuse_uring; docs/fast-path.md, "FUSE over io_uring".
//
//   fuse_uring_probe serve MOUNTPOINT MODE         mount, serve until unmounted
//   fuse_uring_probe stat FILE SECONDS THREADS     stat() in a loop; prints ops/s
//   fuse_uring_probe read FILE SECONDS THREADS     4 KiB pread() in a loop; prints ops/s
//
// MODE is dev (one thread reads /dev/fuse), dev-epoll (the same thread waits
// for /dev/fuse in epoll and reads it non-blocking, as pvfsmount's loop),
// uring or uring-percpu (below).
// `serve` answers INIT itself (libfuse 3.14 knows nothing of io_uring) and
// every request after it; libfuse only mounts. With `uring` it offers
// FUSE_OVER_IO_URING and, once the kernel has taken it, registers
// kEntries ring entries for every CPU's queue on one ring served by one
// thread, as pvfsmount's one io thread would; /dev/fuse stays read by a
// second thread for what the kernel still sends there (FORGET, INTERRUPT).
// The ABI is the kernel's (include/uapi/linux/fuse.h, 7.42), written out
// here since Debian 12's headers are older.
#define FUSE_USE_VERSION 312
#define _GNU_SOURCE
#include <fuse_lowlevel.h>
#include <linux/fuse.h>
#include <liburing.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define OVER_IO_URING_FLAGS2 (1u << 9)  // FUSE_OVER_IO_URING is bit 41 of the flags
#define URING_CMD_REGISTER 1
#define URING_CMD_COMMIT_AND_FETCH 2

struct uring_ent_in_out {
  uint64_t flags;
  uint64_t commit_id;
  uint32_t payload_sz;
  uint32_t padding;
  uint64_t reserved;
};
struct uring_req_header {
  char in_out[128];  // fuse_in_header in, fuse_out_header out
  char op_in[128];   // the opcode's fixed argument
  struct uring_ent_in_out ent;
};
struct uring_cmd_req {
  uint64_t flags;
  uint64_t commit_id;
  uint16_t qid;
  uint8_t padding[6];
};

enum { kEntries = 8, kPayload = 1 << 20, kFileBytes = 1 << 20 };
static const char kZeros[128 << 10];
static const int kNoReply = -1000;  // answer(): FORGET and INTERRUPT take no reply

static void die(const char* what) {
  perror(what);
  exit(1);
}

static void fill_attr(struct fuse_attr* a, uint64_t ino) {
  memset(a, 0, sizeof *a);
  a->ino = ino;
  a->nlink = ino == 1 ? 2 : 1;
  a->mode = ino == 1 ? (S_IFDIR | 0755) : (S_IFREG | 0644);
  a->size = ino == 1 ? 0 : kFileBytes;
  a->blksize = 4096;
}

// One request: its header, its fixed argument and what follows it (a name,
// write data). Writes the reply's data into `out` and returns its length,
// or a negative errno; kNoReply when the request takes no reply.
static int answer(const struct fuse_in_header* in, const void* arg, const char* rest, char* out) {
  switch (in->opcode) {
    case FUSE_LOOKUP: {
      if (in->nodeid != 1 || strcmp(rest, "f") != 0) return -ENOENT;
      struct fuse_entry_out* e = (struct fuse_entry_out*)out;
      memset(e, 0, sizeof *e);
      e->nodeid = 2;
      fill_attr(&e->attr, 2);
      return sizeof *e;
    }
    case FUSE_GETATTR: {
      struct fuse_attr_out* a = (struct fuse_attr_out*)out;
      memset(a, 0, sizeof *a);
      fill_attr(&a->attr, in->nodeid);
      return sizeof *a;
    }
    case FUSE_OPEN: {
      struct fuse_open_out* o = (struct fuse_open_out*)out;
      memset(o, 0, sizeof *o);
      o->open_flags = FOPEN_DIRECT_IO;
      return sizeof *o;
    }
    case FUSE_READ: {
      const struct fuse_read_in* r = arg;
      uint64_t n = r->offset >= kFileBytes ? 0 : kFileBytes - r->offset;
      if (n > r->size) n = r->size;
      if (n > sizeof kZeros) n = sizeof kZeros;
      memcpy(out, kZeros, n);
      return (int)n;
    }
    case FUSE_FLUSH:
    case FUSE_RELEASE:
      return 0;
    case FUSE_FORGET:
    case FUSE_BATCH_FORGET:
    case FUSE_INTERRUPT:
      return kNoReply;
    default:
      return -ENOSYS;
  }
}

// The fixed argument's size, for splitting a request read from /dev/fuse.
static size_t arg_size(uint32_t opcode) {
  switch (opcode) {
    case FUSE_GETATTR: return sizeof(struct fuse_getattr_in);
    case FUSE_OPEN: return sizeof(struct fuse_open_in);
    case FUSE_READ: return sizeof(struct fuse_read_in);
    case FUSE_FLUSH: return sizeof(struct fuse_flush_in);
    case FUSE_RELEASE: return sizeof(struct fuse_release_in);
    default: return 0;
  }
}

static int fuse_fd;
static int use_uring;  // uring, uring-percpu: offer FUSE_OVER_IO_URING and serve ring entries
static int use_epoll;  // dev-epoll: wait for /dev/fuse in epoll, as pvfsmount's loop does
static atomic_int initialized;
static atomic_long dev_requests, ring_requests;

// At unmount: how many requests came each way, and the CPU this process used.
static void report_and_exit(void) {
  static atomic_flag reported = ATOMIC_FLAG_INIT;
  if (atomic_flag_test_and_set(&reported)) pause();  // another thread is ending the process
  struct timespec cpu;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
  fprintf(stderr, "requests: %ld through /dev/fuse, %ld through the ring; CPU %.3f s\n",
          atomic_load(&dev_requests), atomic_load(&ring_requests),
          (double)cpu.tv_sec + (double)cpu.tv_nsec / 1e9);
  exit(0);
}

static void reply_dev(uint64_t unique, int result, const char* data) {
  struct fuse_out_header h = {.unique = unique};
  struct iovec iov[2] = {{&h, sizeof h}, {(void*)data, result > 0 ? (size_t)result : 0}};
  h.error = result < 0 ? result : 0;
  h.len = (uint32_t)(sizeof h + iov[1].iov_len);
  if (writev(fuse_fd, iov, 2) < 0 && errno != ENOENT) perror("writev /dev/fuse");
}

static void answer_init(const struct fuse_in_header* in, const struct fuse_init_in* init) {
  struct fuse_init_out o;
  memset(&o, 0, sizeof o);
  o.major = FUSE_KERNEL_VERSION;
  o.minor = init->minor;
  o.max_readahead = init->max_readahead;
  o.flags = (init->flags & (FUSE_ASYNC_READ | FUSE_BIG_WRITES | FUSE_MAX_PAGES)) | FUSE_INIT_EXT;
  o.max_write = 128 << 10;
  o.max_pages = 32;
  o.max_background = 64;
  o.congestion_threshold = 48;
  o.time_gran = 1;
  if (use_uring) {
    if (!(init->flags & FUSE_INIT_EXT) || !(init->flags2 & OVER_IO_URING_FLAGS2)) {
      fprintf(stderr, "fuse_uring_probe: the kernel does not offer FUSE_OVER_IO_URING "
                      "(is /sys/module/fuse/parameters/enable_uring Y?)\n");
      exit(2);
    }
    o.flags2 = OVER_IO_URING_FLAGS2;
  }
  reply_dev(in->unique, sizeof o, (const char*)&o);
  atomic_store(&initialized, 1);
}

// Serves what comes through /dev/fuse: everything in `dev` mode, INIT and
// the requests the kernel keeps off the ring in `uring` mode.
static void* serve_dev(void* unused) {
  (void)unused;
  char* buf = malloc(kPayload + 4096);
  char* out = malloc(kPayload);
  int ep = -1;
  if (use_epoll) {
    ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN};
    if (ep < 0 || fcntl(fuse_fd, F_SETFL, fcntl(fuse_fd, F_GETFL) | O_NONBLOCK) < 0 ||
        epoll_ctl(ep, EPOLL_CTL_ADD, fuse_fd, &ev) < 0)
      die("epoll on /dev/fuse");
  }
  for (;;) {
    ssize_t n = read(fuse_fd, buf, kPayload + 4096);
    if (n < 0) {
      if (errno == EAGAIN && ep >= 0) {
        struct epoll_event ev;
        epoll_wait(ep, &ev, 1, -1);
        continue;
      }
      if (errno == EINTR || errno == ENOENT || errno == EAGAIN) continue;
      if (errno == ENODEV) report_and_exit();
      die("read /dev/fuse");
    }
    const struct fuse_in_header* in = (const struct fuse_in_header*)buf;
    if (in->opcode == FUSE_INIT) {
      answer_init(in, (const struct fuse_init_in*)(in + 1));
      continue;
    }
    if (in->opcode == FUSE_DESTROY) report_and_exit();
    atomic_fetch_add(&dev_requests, 1);
    const char* arg = (const char*)(in + 1);
    const int r = answer(in, arg, arg + arg_size(in->opcode), out);
    if (r != kNoReply) reply_dev(in->unique, r, out);
  }
  return NULL;
}

struct entry {
  struct uring_req_header* header;
  char* payload;
  struct iovec iov[2];
  uint16_t qid;
};

static void prep(struct io_uring* ring, struct entry* e, uint32_t op, uint64_t commit_id) {
  struct io_uring_sqe* sqe = io_uring_get_sqe(ring);
  if (!sqe) {
    fprintf(stderr, "fuse_uring_probe: no free SQE\n");
    exit(1);
  }
  memset(sqe, 0, 128);
  sqe->opcode = IORING_OP_URING_CMD;
  sqe->fd = fuse_fd;
  sqe->cmd_op = op;
  io_uring_sqe_set_data(sqe, e);
  if (op == URING_CMD_REGISTER) {
    sqe->addr = (uint64_t)(uintptr_t)e->iov;
    sqe->len = 2;
  }
  struct uring_cmd_req* req = (struct uring_cmd_req*)sqe->cmd;
  req->qid = e->qid;
  req->commit_id = commit_id;
}

// Serves the queues [first, first + queues) on one ring, on this thread.
static void serve_uring(int first, int queues) {
  const int count = queues * kEntries;
  struct io_uring ring;
  struct io_uring_params params;
  memset(&params, 0, sizeof params);
  params.flags = IORING_SETUP_SQE128 | IORING_SETUP_CQSIZE;
  params.cq_entries = (unsigned)count * 2;
  int rc = io_uring_queue_init_params((unsigned)count, &ring, &params);
  if (rc < 0) {
    errno = -rc;
    die("io_uring_queue_init_params");
  }
  struct entry* ents = calloc((size_t)count, sizeof *ents);
  for (int i = 0; i < count; i++) {
    struct entry* e = &ents[i];
    if (posix_memalign((void**)&e->header, 4096, 4096) || posix_memalign((void**)&e->payload, 4096, kPayload))
      die("posix_memalign");
    e->iov[0] = (struct iovec){e->header, sizeof *e->header};
    e->iov[1] = (struct iovec){e->payload, kPayload};
    e->qid = (uint16_t)(first + i / kEntries);
    prep(&ring, e, URING_CMD_REGISTER, 0);
  }
  rc = io_uring_submit(&ring);
  if (rc != count) {
    errno = rc < 0 ? -rc : EIO;
    die("registering ring entries");
  }
  char* out = malloc(kPayload);
  for (;;) {
    struct io_uring_cqe* cqe;
    rc = io_uring_submit_and_wait(&ring, 1);
    if (rc < 0 && rc != -EINTR) {
      errno = -rc;
      die("io_uring_submit_and_wait");
    }
    unsigned head, seen = 0;
    io_uring_for_each_cqe(&ring, head, cqe) {
      seen++;
      struct entry* e = io_uring_cqe_get_data(cqe);
      if (cqe->res < 0) {
        if (cqe->res == -ENOTCONN || cqe->res == -ENODEV) report_and_exit();
        fprintf(stderr, "fuse_uring_probe: ring entry failed: %s\n", strerror(-cqe->res));
        exit(1);
      }
      atomic_fetch_add(&ring_requests, 1);
      const struct fuse_in_header* in = (const struct fuse_in_header*)e->header->in_out;
      const uint64_t commit = e->header->ent.commit_id;
      e->payload[e->header->ent.payload_sz < kPayload ? e->header->ent.payload_sz : kPayload - 1] = 0;
      int r = answer(in, e->header->op_in, e->payload, out);
      if (r == kNoReply) r = 0;  // nothing the kernel waits for comes here
      struct fuse_out_header* h = (struct fuse_out_header*)e->header->in_out;
      const uint64_t unique = in->unique;
      memset(h, 0, sizeof *h);
      h->unique = unique;
      h->error = r < 0 ? r : 0;
      if (r > 0) memcpy(e->payload, out, (size_t)r);
      e->header->ent.payload_sz = r > 0 ? (uint32_t)r : 0;
      prep(&ring, e, URING_CMD_COMMIT_AND_FETCH, commit);
    }
    io_uring_cq_advance(&ring, seen);
  }
}

// uring-percpu: a thread per CPU, bound to it, serving that CPU's queue,
// as libfuse 3.18 does.
static void* serve_one_queue(void* p) {
  const int qid = (int)(intptr_t)p;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(qid, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) die("sched_setaffinity");
  serve_uring(qid, 1);
  return NULL;
}

static int serve(const char* mountpoint, const char* mode) {
  const int per_cpu = strcmp(mode, "uring-percpu") == 0;
  use_uring = per_cpu || strcmp(mode, "uring") == 0;
  use_epoll = strcmp(mode, "dev-epoll") == 0;
  if (!use_uring && !use_epoll && strcmp(mode, "dev") != 0) {
    fprintf(stderr, "fuse_uring_probe: mode must be dev, dev-epoll, uring or uring-percpu\n");
    return 2;
  }
  char* argv[] = {"fuse_uring_probe", "-o", "allow_other", NULL};
  struct fuse_args args = FUSE_ARGS_INIT(3, argv);
  struct fuse_lowlevel_ops ops;
  memset(&ops, 0, sizeof ops);
  struct fuse_session* se = fuse_session_new(&args, &ops, sizeof ops, NULL);
  if (!se || fuse_session_mount(se, mountpoint) != 0) {
    fprintf(stderr, "fuse_uring_probe: cannot mount %s\n", mountpoint);
    return 1;
  }
  fuse_fd = fuse_session_fd(se);
  pthread_t dev;
  if (pthread_create(&dev, NULL, serve_dev, NULL) != 0) die("pthread_create");
  if (!use_uring) {
    pthread_join(dev, NULL);
    return 0;
  }
  while (!atomic_load(&initialized)) usleep(1000);
  if (per_cpu) {
    for (int q = 1; q < get_nprocs_conf(); q++) {
      pthread_t t;
      if (pthread_create(&t, NULL, serve_one_queue, (void*)(intptr_t)q) != 0) die("pthread_create");
    }
    serve_one_queue((void*)(intptr_t)0);
  }
  serve_uring(0, get_nprocs_conf());
  return 0;
}

struct loop_args {
  const char* file;
  double seconds;
  int read;
  long ops;
};

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void* loop(void* p) {
  struct loop_args* a = p;
  char buf[4096];
  int fd = a->read ? open(a->file, O_RDONLY) : -1;
  if (a->read && fd < 0) die(a->file);
  const double end = now() + a->seconds;
  struct stat st;
  for (long i = 0;; i++) {
    if ((i & 63) == 0 && now() >= end) break;
    if (a->read) {
      if (pread(fd, buf, sizeof buf, (off_t)((i * 4096) % kFileBytes)) != (ssize_t)sizeof buf) die("pread");
    } else if (stat(a->file, &st) != 0) {
      die("stat");
    }
    a->ops++;
  }
  if (fd >= 0) close(fd);
  return NULL;
}

static int drive(const char* file, double seconds, int threads, int read) {
  pthread_t t[64];
  struct loop_args a[64];
  if (threads < 1 || threads > 64) return 2;
  const double start = now();
  for (int i = 0; i < threads; i++) {
    a[i] = (struct loop_args){file, seconds, read, 0};
    if (pthread_create(&t[i], NULL, loop, &a[i]) != 0) die("pthread_create");
  }
  long ops = 0;
  for (int i = 0; i < threads; i++) {
    pthread_join(t[i], NULL);
    ops += a[i].ops;
  }
  printf("%.0f\n", (double)ops / (now() - start));
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 4 && strcmp(argv[1], "serve") == 0) return serve(argv[2], argv[3]);
  if (argc == 5 && (strcmp(argv[1], "stat") == 0 || strcmp(argv[1], "read") == 0))
    return drive(argv[2], atof(argv[3]), atoi(argv[4]), strcmp(argv[1], "read") == 0);
  fprintf(stderr, "usage: fuse_uring_probe serve MOUNTPOINT dev|dev-epoll|uring|uring-percpu\n"
                  "       fuse_uring_probe stat|read FILE SECONDS THREADS\n");
  return 2;
}
