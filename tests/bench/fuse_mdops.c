/* Metadata micro-benchmark for tests/bench/fuse: creates, stats or unlinks
 * N files named f0000000.. in one directory from one process, and prints
 * "PHASE N SECONDS OPS_PER_S". Only the system calls are timed: names are
 * built before the clock starts. Cache dropping between phases is the
 * caller's job. Plain C so the benchmark can compile it with `cc` alone.
 *
 *   fuse_mdops create|stat|unlink DIR N
 *
 * create = openat(O_CREAT|O_EXCL|O_WRONLY) + close (an empty file, as mdtest
 * does); stat = fstatat; unlink = unlinkat. Exits 1 on the first failure. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s create|stat|unlink DIR N\n", argv[0]);
    return 2;
  }
  const char* phase = argv[1];
  const long n = strtol(argv[3], NULL, 10);
  if (n <= 0 || n > 10000000) {
    fprintf(stderr, "fuse_mdops: bad count '%s'\n", argv[3]);
    return 2;
  }
  enum { kCreate, kStat, kUnlink } op;
  if (strcmp(phase, "create") == 0) op = kCreate;
  else if (strcmp(phase, "stat") == 0) op = kStat;
  else if (strcmp(phase, "unlink") == 0) op = kUnlink;
  else {
    fprintf(stderr, "fuse_mdops: unknown phase '%s'\n", phase);
    return 2;
  }
  int dir = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) {
    fprintf(stderr, "fuse_mdops: open %s: %s\n", argv[2], strerror(errno));
    return 1;
  }
  char* names = malloc((size_t)n * 16);
  if (names == NULL) {
    fprintf(stderr, "fuse_mdops: out of memory\n");
    return 1;
  }
  for (long i = 0; i < n; ++i) snprintf(names + i * 16, 16, "f%07ld", i);

  struct stat st;
  const double start = now_s();
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
      fprintf(stderr, "fuse_mdops: %s %s/%s: %s\n", phase, argv[2], name, strerror(errno));
      return 1;
    }
  }
  const double seconds = now_s() - start;
  printf("%s %ld %.6f %.1f\n", phase, n, seconds, seconds > 0 ? (double)n / seconds : 0.0);
  free(names);
  close(dir);
  return 0;
}
