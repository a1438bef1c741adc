/* libpvfs-iostep: a job's I/O steps on a mounted pvfs, for an MPI program's
 * I/O coordinator rank (or any C caller), without linking anything else of
 * pvfs. The calls set and read the virtual extended attribute
 * user.pvfs.iostep of a path on the mount (pvfsmount(8), I/O STEPS), so the
 * mount's client holds the job's writes until the metadata delegate's
 * scheduler grants the job a token, and renews its lease. Every call is
 * thread-safe and blocks only as long as one getxattr/setxattr does
 * (pvfs_iostep_wait() polls). */
#ifndef PVFS_IOSTEP_H
#define PVFS_IOSTEP_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A step's state as pvfs_iostep_state() returns it. */
enum pvfs_iostep_state {
  PVFS_IOSTEP_NONE = 0,    /* the job has no step on this mount */
  PVFS_IOSTEP_PENDING = 1, /* waiting for the token: writes are held */
  PVFS_IOSTEP_GRANTED = 2, /* holding the token: writes go */
};

/* Opens (or joins) the I/O step of `job` (NULL: the caller's job id, as the
 * mount reads it from PVFS_JOBID, SLURM_JOB_ID, ...) on the client that
 * mounts `path`. `bytes` is the step's size for SJF (0: not declared);
 * `servers` the storage server ids it writes to, "1,3" (NULL: all).
 * Returns at once: 0, or -1 with errno (EINVAL for a malformed job or
 * servers list, ENOTSUP when `path` is not on pvfs, others from
 * setxattr(2)). */
int pvfs_iostep_begin(const char *path, const char *job, uint64_t bytes, const char *servers);

/* Ends this client's part in the job's step. 0, or -1 with errno (ENOENT:
 * the job has no step on this mount). */
int pvfs_iostep_end(const char *path, const char *job);

/* The job's step state on the mount of `path`, or -1 with errno. */
int pvfs_iostep_state(const char *path, const char *job);

/* Waits until the job's step holds the token, polling every 10 ms: 0 when
 * it does, -1 with errno ETIMEDOUT after `timeout_ms` (negative: no limit),
 * ENOENT when the job has no step on this mount. */
int pvfs_iostep_wait(const char *path, const char *job, int timeout_ms);

#ifdef __cplusplus
}
#endif

#endif
