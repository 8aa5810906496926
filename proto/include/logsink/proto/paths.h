/* paths.h: where logsinkd, logctl and liblogsink look by default. One rule for
 * all three, so a client, the daemon and the reader agree without config:
 *   root:      socket /run/logsink/logsink.sock, ring /var/lib/logsink/logsink.ring
 *   otherwise: $XDG_RUNTIME_DIR/logsink/ if XDG_RUNTIME_DIR is set (absolute),
 *              else /tmp/logsink-<uid>/, for both files.
 * $LOGSINK_SOCKET overrides the socket path (clients and the daemon).
 * Clients of a non-root user fall back to the system socket when their
 * per-user one does not exist (ls_client_socket); logctl does the same for
 * the ring file.
 * Header-only C11, usable from C++. */
#ifndef LOGSINK_PROTO_PATHS_H
#define LOGSINK_PROTO_PATHS_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LS_SYSTEM_SOCKET "/run/logsink/logsink.sock"
#define LS_SYSTEM_RING "/var/lib/logsink/logsink.ring"
#define LS_SOCKET_NAME "logsink.sock"
#define LS_RING_NAME "logsink.ring"

/* Writes the per-user directory (no trailing slash) into buf. Returns the
 * length, or -ENAMETOOLONG. */
static inline int ls_user_dir(char *buf, size_t cap) {
  const char *xdg = getenv("XDG_RUNTIME_DIR");
  int n;
  if (xdg && xdg[0] == '/')
    n = snprintf(buf, cap, "%s/logsink", xdg);
  else
    n = snprintf(buf, cap, "/tmp/logsink-%u", (unsigned)getuid());
  return (n < 0 || (size_t)n >= cap) ? -ENAMETOOLONG : n;
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
  const char *env = getenv("LOGSINK_SOCKET");
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
 * except that a non-root user whose per-user socket does not exist while the
 * system socket does gets the system one, so applications of ordinary users
 * reach the system service without configuration. */
static inline int ls_client_socket(const char *explicit_path, char *buf, size_t cap) {
  int n = ls_resolve_socket(explicit_path, buf, cap);
  const char *env = getenv("LOGSINK_SOCKET");
  if (n < 0 || (explicit_path && explicit_path[0]) || (env && env[0]) || geteuid() == 0) return n;
  if (access(buf, F_OK) != 0 && access(LS_SYSTEM_SOCKET, F_OK) == 0) {
    n = snprintf(buf, cap, "%s", LS_SYSTEM_SOCKET);
    if (n < 0 || (size_t)n >= cap) return -ENAMETOOLONG;
  }
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
