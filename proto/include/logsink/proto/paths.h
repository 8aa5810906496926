/* paths.h: where logsinkd, logctl and liblogsink look by default, and the
 * one rule for trusting a per-user directory. One rule for all three, so a
 * client, the daemon and the reader agree without config:
 *   root:      socket /run/logsink/logsink.sock, ring /var/lib/logsink/logsink.ring
 *   otherwise: $XDG_RUNTIME_DIR/logsink/ if XDG_RUNTIME_DIR is set (absolute),
 *              else /tmp/logsink-<euid>/, for both files.
 * $LOGSINK_SOCKET overrides the socket path (clients and the daemon).
 * Clients of a non-root user fall back to the system socket when their
 * per-user one does not exist or its directory is refused (ls_client_socket);
 * logctl does the same for the ring file when the directory does not exist.
 *
 * The per-user directory is used only if it passes ls_user_dir_check(): a
 * real directory (not a symlink), owned by the effective uid, not writable by
 * group or others. Without it, another local user who creates
 * /tmp/logsink-<uid>/ first receives that uid's records, feeds it a crafted
 * ring or owns the directory its daemon binds in. Paths the user names
 * ($LOGSINK_SOCKET, --socket, --file) are the user's choice and are not
 * subject to the rule.
 *
 * Environment variables are read with secure_getenv(): in a setuid or setgid
 * program they are ignored, so whoever runs it cannot redirect its records.
 * Header-only C11, usable from C++; C includers define _GNU_SOURCE (for
 * secure_getenv). */
#ifndef LOGSINK_PROTO_PATHS_H
#define LOGSINK_PROTO_PATHS_H

#if !defined(__cplusplus) && !defined(_GNU_SOURCE)
#error "logsink/proto/paths.h needs _GNU_SOURCE (secure_getenv)"
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LS_SYSTEM_SOCKET "/run/logsink/logsink.sock"
#define LS_SYSTEM_RING "/var/lib/logsink/logsink.ring"
#define LS_SOCKET_NAME "logsink.sock"
#define LS_RING_NAME "logsink.ring"

/* ls_user_dir_check() flag: create the directory (0700) when it is missing. */
#define LS_USER_DIR_CREATE 1u

/* Writes the per-user directory (no trailing slash) into buf. Returns the
 * length, or -ENAMETOOLONG. The effective uid names it: the rule below
 * checks ownership against it, so a set-user-ID program uses its own. */
static inline int ls_user_dir(char *buf, size_t cap) {
  const char *xdg = secure_getenv("XDG_RUNTIME_DIR");
  int n;
  if (xdg && xdg[0] == '/')
    n = snprintf(buf, cap, "%s/logsink", xdg);
  else
    n = snprintf(buf, cap, "/tmp/logsink-%u", (unsigned)geteuid());
  return (n < 0 || (size_t)n >= cap) ? -ENAMETOOLONG : n;
}

/* If path lies in the per-user directory of a non-root user (a default path
 * there, which must pass ls_user_dir_check before use), writes that
 * directory into dir and returns its length; returns 0 for root's system
 * paths and any other path, or -ENAMETOOLONG. */
static inline int ls_user_dir_of(const char *path, char *dir, size_t cap) {
  if (geteuid() == 0) return 0;
  int n = ls_user_dir(dir, cap);
  if (n < 0) return n;
  return strncmp(path, dir, (size_t)n) == 0 && path[n] == '/' ? n : 0;
}

/* Fills why (may be NULL) with a reason and returns -err. */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static inline int
ls__dir_refuse(int err, char *why, size_t cap, const char *fmt, ...) {
  if (why && cap) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, cap, fmt, ap);
    va_end(ap);
  }
  return -err;
}

/* The safe-path rule for a per-user directory (ls_user_dir()): dir is used
 * only if it is a real directory, not a symlink, owned by the effective uid
 * and not writable by group or others. With LS_USER_DIR_CREATE a missing
 * directory is created 0700 first. The checks are on what open() returned
 * (O_NOFOLLOW), never on a stat() by path, so nothing can be swapped in
 * between check and use of the result; a directory that passes cannot be
 * replaced by another user afterwards (it is ours, and /tmp is sticky).
 * Returns 0 when dir may be used; otherwise a negative errno (-ENOENT when
 * missing and not created, -ELOOP symlink, -ENOTDIR, -EPERM wrong owner or
 * mode) and, if why is not NULL, a reason naming the path, e.g.
 * "/tmp/logsink-1234 is owned by uid 65534, not 1234: refusing it". */
static inline int ls_user_dir_check(const char *dir, unsigned flags, char *why, size_t why_cap) {
  unsigned me = (unsigned)geteuid();
  int created = 0;
  if (flags & LS_USER_DIR_CREATE) {
    if (mkdir(dir, 0700) == 0)
      created = 1;
    else if (errno != EEXIST)
      return ls__dir_refuse(errno, why, why_cap, "cannot create %s: %s", dir, strerror(errno));
  }
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    struct stat l;
    /* Linux says ENOTDIR or ELOOP for a symlink here; lstat only words the
     * reason, the refusal is already decided. */
    if (e == ELOOP || (e == ENOTDIR && lstat(dir, &l) == 0 && S_ISLNK(l.st_mode)))
      return ls__dir_refuse(ELOOP, why, why_cap, "%s is a symbolic link: refusing it", dir);
    if (e == ENOTDIR)
      return ls__dir_refuse(e, why, why_cap, "%s is not a directory: refusing it", dir);
    return ls__dir_refuse(e, why, why_cap, "%s: %s", dir, strerror(e));
  }
  struct stat st;
  int rc = 0;
  if (fstat(fd, &st) != 0)
    rc = ls__dir_refuse(errno, why, why_cap, "%s: %s", dir, strerror(errno));
  else if (!S_ISDIR(st.st_mode))
    rc = ls__dir_refuse(ENOTDIR, why, why_cap, "%s is not a directory: refusing it", dir);
  else if ((unsigned)st.st_uid != me)
    rc = ls__dir_refuse(EPERM, why, why_cap, "%s is owned by uid %u, not %u: refusing it", dir,
                        (unsigned)st.st_uid, me);
  else if (st.st_mode & (S_IWGRP | S_IWOTH))
    rc = ls__dir_refuse(EPERM, why, why_cap,
                        "%s is writable by group or others (mode %04o): refusing it", dir,
                        (unsigned)(st.st_mode & 07777));
  else if (created && (st.st_mode & 07777) != 0700 && fchmod(fd, 0700) != 0)
    /* mkdir's mode went through the umask, which may have taken the
     * owner's own bits too. */
    rc = ls__dir_refuse(errno, why, why_cap, "cannot set the mode of %s: %s", dir, strerror(errno));
  close(fd);
  return rc;
}

/* Default socket path, ignoring $LOGSINK_SOCKET. Returns length or -ENAMETOOLONG. */
static inline int ls_default_socket(char *buf, size_t cap) {
  char dir[256];
  int n;
  if (geteuid() == 0) {
    n = snprintf(buf, cap, "%s", LS_SYSTEM_SOCKET);
  } else {
    if (ls_user_dir(dir, sizeof dir) < 0) return -ENAMETOOLONG;
    n = snprintf(buf, cap, "%s/%s", dir, LS_SOCKET_NAME);
  }
  return (n < 0 || (size_t)n >= cap) ? -ENAMETOOLONG : n;
}

/* Socket path a client uses: explicit (non-NULL, non-empty) path, else
 * $LOGSINK_SOCKET, else ls_default_socket(). */
static inline int ls_resolve_socket(const char *explicit_path, char *buf, size_t cap) {
  const char *env = secure_getenv("LOGSINK_SOCKET");
  int n;
  if (explicit_path && explicit_path[0])
    n = snprintf(buf, cap, "%s", explicit_path);
  else if (env && env[0])
    n = snprintf(buf, cap, "%s", env);
  else
    return ls_default_socket(buf, cap);
  return (n < 0 || (size_t)n >= cap) ? -ENAMETOOLONG : n;
}

/* Socket path a client (liblogsink, logctl) uses: like ls_resolve_socket(),
 * except that a non-root user whose per-user socket does not exist, or whose
 * per-user directory fails ls_user_dir_check(), gets the system socket if
 * that exists, so applications of ordinary users reach the system service
 * without configuration. *in_user_dir is set to 1 when buf lies in the
 * per-user directory: the caller checks that directory again with
 * ls_user_dir_check() right before each connect, since one missing now can
 * be created by someone else later. Returns the length or -ENAMETOOLONG. */
static inline int ls_client_socket(const char *explicit_path, char *buf, size_t cap,
                                   int *in_user_dir) {
  int n = ls_resolve_socket(explicit_path, buf, cap);
  const char *env = secure_getenv("LOGSINK_SOCKET");
  char dir[256];
  *in_user_dir = 0;
  if (n < 0 || (explicit_path && explicit_path[0]) || (env && env[0]) || geteuid() == 0) return n;
  if (ls_user_dir(dir, sizeof dir) < 0) return -ENAMETOOLONG;
  /* access() by path is fine once the directory passed: only we can put
   * anything in it. */
  int usable = ls_user_dir_check(dir, 0, NULL, 0) == 0 && access(buf, F_OK) == 0;
  if (!usable && access(LS_SYSTEM_SOCKET, F_OK) == 0) {
    n = snprintf(buf, cap, "%s", LS_SYSTEM_SOCKET);
    return (n < 0 || (size_t)n >= cap) ? -ENAMETOOLONG : n;
  }
  *in_user_dir = 1;
  return n;
}

/* Default ring file path. Returns length or -ENAMETOOLONG. */
static inline int ls_default_ring(char *buf, size_t cap) {
  char dir[256];
  int n;
  if (geteuid() == 0) {
    n = snprintf(buf, cap, "%s", LS_SYSTEM_RING);
  } else {
    if (ls_user_dir(dir, sizeof dir) < 0) return -ENAMETOOLONG;
    n = snprintf(buf, cap, "%s/%s", dir, LS_RING_NAME);
  }
  return (n < 0 || (size_t)n >= cap) ? -ENAMETOOLONG : n;
}

#ifdef __cplusplus
}
#endif
#endif
