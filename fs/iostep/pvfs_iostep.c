#include "pvfs_iostep.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/xattr.h>
#include <time.h>

#define PVFS_IOSTEP_XATTR "user.pvfs.iostep"

/* Whether `text` can go into the attribute's value as one word. */
static int word_ok(const char *text, size_t max) {
  size_t n = strlen(text);
  if (n == 0 || n > max) return 0;
  for (size_t i = 0; i < n; ++i)
    if (text[i] == ' ' || text[i] == '\n' || text[i] == '=') return 0;
  return 1;
}

static int set(const char *path, const char *value) {
  return setxattr(path, PVFS_IOSTEP_XATTR, value, strlen(value), 0) == 0 ? 0 : -1;
}

int pvfs_iostep_begin(const char *path, const char *job, uint64_t bytes, const char *servers) {
  char value[512];
  int n = snprintf(value, sizeof value, "begin");
  if (job) {
    if (!word_ok(job, 64)) return errno = EINVAL, -1;
    n += snprintf(value + n, sizeof value - (size_t)n, " job=%s", job);
  }
  if (bytes) n += snprintf(value + n, sizeof value - (size_t)n, " bytes=%" PRIu64, bytes);
  if (servers) {
    if (!word_ok(servers, 300)) return errno = EINVAL, -1;
    n += snprintf(value + n, sizeof value - (size_t)n, " servers=%s", servers);
  }
  if (n < 0 || (size_t)n >= sizeof value) return errno = EINVAL, -1;
  return set(path, value);
}

int pvfs_iostep_end(const char *path, const char *job) {
  char value[128];
  if (job && !word_ok(job, 64)) return errno = EINVAL, -1;
  snprintf(value, sizeof value, job ? "end job=%s" : "end", job);
  return set(path, value);
}

int pvfs_iostep_state(const char *path, const char *job) {
  char name[128], value[32];
  if (job && !word_ok(job, 64)) return errno = EINVAL, -1;
  snprintf(name, sizeof name, job ? PVFS_IOSTEP_XATTR ".%s" : PVFS_IOSTEP_XATTR, job);
  ssize_t n = getxattr(path, name, value, sizeof value - 1);
  if (n < 0) return -1;
  value[n] = '\0';
  if (strcmp(value, "granted") == 0) return PVFS_IOSTEP_GRANTED;
  if (strcmp(value, "pending") == 0) return PVFS_IOSTEP_PENDING;
  return PVFS_IOSTEP_NONE;
}

int pvfs_iostep_wait(const char *path, const char *job, int timeout_ms) {
  const struct timespec tick = {0, 10 * 1000 * 1000};
  for (long waited = 0;; waited += 10) {
    int state = pvfs_iostep_state(path, job);
    if (state < 0) return -1;
    if (state == PVFS_IOSTEP_GRANTED) return 0;
    if (state == PVFS_IOSTEP_NONE) return errno = ENOENT, -1;
    if (timeout_ms >= 0 && waited >= timeout_ms) return errno = ETIMEDOUT, -1;
    nanosleep(&tick, NULL);
  }
}
