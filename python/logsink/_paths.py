"""_paths: the socket path a client uses, by the rules of
include/logsink/proto/paths.h (ls_client_socket), so Python and C clients of
one user reach the same daemon without configuration:
  explicit path, else $LOGSINK_SOCKET, else
  root: /run/logsink/logsink.sock;
  others: $XDG_RUNTIME_DIR/logsink/logsink.sock (XDG_RUNTIME_DIR absolute),
          else /tmp/logsink-<euid>/logsink.sock; when that socket does not
          exist or its directory fails user_dir_ok(), the system socket if
          that one exists."""

import os
import stat

SYSTEM_SOCKET = "/run/logsink/logsink.sock"
SOCKET_NAME = "logsink.sock"


def user_dir():
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and xdg.startswith("/"):
        return xdg + "/logsink"
    return "/tmp/logsink-%u" % os.geteuid()


def user_dir_ok(path):
    """A real directory (not a symlink), owned by the effective uid, not
    writable by group or others (ls_user_dir_check)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        st = os.fstat(fd)
    except OSError:
        return False
    finally:
        os.close(fd)
    return (stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid()
            and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH))


def client_socket(explicit=None):
    """(path, dir): dir is the per-user directory to check again before each
    connect, or None when the path is not the per-user default."""
    if explicit:
        return os.fspath(explicit), None
    env = os.environ.get("LOGSINK_SOCKET")
    if env:
        return env, None
    if os.geteuid() == 0:
        return SYSTEM_SOCKET, None
    d = user_dir()
    path = d + "/" + SOCKET_NAME
    usable = user_dir_ok(d) and os.path.exists(path)
    if not usable and os.path.exists(SYSTEM_SOCKET):
        return SYSTEM_SOCKET, None
    return path, d
