/* Metadata micro-benchmark for tests/bench/fuse: creates, stats or unlinks
 * N files named f0000000.. and prints "PHASE N SECONDS OPS_PER_S". Only the
 * system calls are timed: names are built (and, with several processes,
 * the processes forked and their folders made) before the clock starts.
 * Cache dropping between phases is the caller's job. Plain C so the
 * benchmark can compile it with `cc` alone.
 *
 *   fuse_mdops create|stat|unlink DIR N [PROCS]
 *
 * create = openat(O_CREAT|O_EXCL|O_WRONLY) + close (an empty file, as mdtest
 * does); stat = fstatat; unlink = unlinkat. With PROCS (default 1) above 1,
 * PROCS processes share the N files, each in its own folder DIR/p0, DIR/p1..
 * (the create phase makes them, the unlink phase removes them), as mdtest
 * -u does: in one shared folder the kernel would serialise the creates and
 * unlinks on the folder's lock before the file system saw them. The clock
 * runs from releasing all processes at once until the last one is done.
 * Exits 1 on the first failure. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum op { kCreate, kStat, kUnlink };

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Runs OP on the n names in `names` (16 bytes each) inside the folder open
 * as `dir`. Returns 0, or 1 after printing the first failure. */
static int run(enum op op, const char* phase, const char* path, int dir, const char* names, long n) {
  struct stat st;
  for (long i = 0; i < n; ++i) {
    const char* name = names + i * 16;
    int rc = 0;
    switch (op) {
      case kCreate: {
        int fd = openat(dir, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
        rc = fd < 0 ? -1 : close(fd);
        break;
      }
      case kStat:
        rc = fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW);
        break;
      case kUnlink:
        rc = unlinkat(dir, name, 0);
        break;
    }
    if (rc != 0) {
      fprintf(stderr, "fuse_mdops: %s %s/%s: %s\n", phase, path, name, strerror(errno));
      return 1;
    }
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    fprintf(stderr, "usage: %s create|stat|unlink DIR N [PROCS]\n", argv[0]);
    return 2;
  }
  const char* phase = argv[1];
  const char* top = argv[2];
  const long n = strtol(argv[3], NULL, 10);
  const long procs = argc == 5 ? strtol(argv[4], NULL, 10) : 1;
  if (n <= 0 || n > 10000000) {
    fprintf(stderr, "fuse_mdops: bad count '%s'\n", argv[3]);
    return 2;
  }
  if (procs <= 0 || procs > 256 || procs > n) {
    fprintf(stderr, "fuse_mdops: bad process count '%s' (1 to 256, at most N)\n", argv[4]);
    return 2;
  }
  enum op op;
  if (strcmp(phase, "create") == 0) op = kCreate;
  else if (strcmp(phase, "stat") == 0) op = kStat;
  else if (strcmp(phase, "unlink") == 0) op = kUnlink;
  else {
    fprintf(stderr, "fuse_mdops: unknown phase '%s'\n", phase);
    return 2;
  }
  char* names = malloc((size_t)n * 16);
  if (names == NULL) {
    fprintf(stderr, "fuse_mdops: out of memory\n");
    return 1;
  }
  for (long i = 0; i < n; ++i) snprintf(names + i * 16, 16, "f%07ld", i);

  if (procs == 1) {
    int dir = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) {
      fprintf(stderr, "fuse_mdops: open %s: %s\n", top, strerror(errno));
      return 1;
    }
    const double start = now_s();
    if (run(op, phase, top, dir, names, n) != 0) return 1;
    const double seconds = now_s() - start;
    printf("%s %ld %.6f %.1f\n", phase, n, seconds, seconds > 0 ? (double)n / seconds : 0.0);
    free(names);
    close(dir);
    return 0;
  }

  /* Each child opens its folder, then blocks reading `go` until the parent
   * closes the write end: that releases all of them at the same moment. */
  int go[2], ready[2];
  if (pipe2(go, O_CLOEXEC) != 0 || pipe2(ready, O_CLOEXEC) != 0) {
    fprintf(stderr, "fuse_mdops: pipe: %s\n", strerror(errno));
    return 1;
  }
  pid_t* kids = calloc((size_t)procs, sizeof(pid_t));
  for (long p = 0; p < procs; ++p) {
    char path[4096];
    snprintf(path, sizeof path, "%s/p%ld", top, p);
    if (op == kCreate && mkdir(path, 0755) != 0 && errno != EEXIST) {
      fprintf(stderr, "fuse_mdops: mkdir %s: %s\n", path, strerror(errno));
      return 1;
    }
    const long first = n * p / procs, count = n * (p + 1) / procs - first;
    kids[p] = fork();
    if (kids[p] < 0) {
      fprintf(stderr, "fuse_mdops: fork: %s\n", strerror(errno));
      return 1;
    }
    if (kids[p] == 0) {
      close(go[1]);
      close(ready[0]);
      int dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (dir < 0) {
        fprintf(stderr, "fuse_mdops: open %s: %s\n", path, strerror(errno));
        _exit(1);
      }
      char byte = 0;
      if (write(ready[1], &byte, 1) != 1) _exit(1);
      close(ready[1]);
      if (read(go[0], &byte, 1) != 0) _exit(1);
      _exit(run(op, phase, path, dir, names + first * 16, count));
    }
  }
  close(go[0]);
  close(ready[1]);
  char byte;
  long arrived = 0;
  while (arrived < procs && read(ready[0], &byte, 1) == 1) ++arrived;
  const double start = now_s();
  close(go[1]);
  int failed = arrived < procs;
  for (long p = 0; p < procs; ++p) {
    int status = 0;
    if (waitpid(kids[p], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) failed = 1;
  }
  const double seconds = now_s() - start;
  if (failed) return 1;
  if (op == kUnlink) {
    for (long p = 0; p < procs; ++p) {
      char path[4096];
      snprintf(path, sizeof path, "%s/p%ld", top, p);
      if (rmdir(path) != 0) {
        fprintf(stderr, "fuse_mdops: rmdir %s: %s\n", path, strerror(errno));
        return 1;
      }
    }
  }
  printf("%s %ld %.6f %.1f\n", phase, n, seconds, seconds > 0 ? (double)n / seconds : 0.0);
  free(kids);
  free(names);
  return 0;
}
