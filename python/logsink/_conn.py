"""_conn: the Unix socket to logsinkd: a non-blocking connect, and writes
bounded by a deadline (the daemon never answers unasked, so a client only
writes)."""

import errno
import select
import socket
import time


def connect(path):
    """A connected non-blocking socket, or None (no daemon, backlog full, no
    file descriptor left)."""
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # close-on-exec by default
    except OSError:
        return None  # EMFILE, ENFILE, ENOBUFS: no connection this time
    try:
        s.setblocking(False)
        s.connect(path)
    except OSError:
        s.close()
        return None
    return s


OK, TIMEOUT, ERROR = 0, 1, 2


def write(sock, data, deadline):
    """Writes data before the monotonic deadline. Returns (OK, TIMEOUT or
    ERROR, bytes written)."""
    view = memoryview(data)
    done = 0
    total = len(data)
    poller = None
    while done < total:
        try:
            done += sock.send(view[done:], socket.MSG_NOSIGNAL)
            continue
        except InterruptedError:
            continue
        except BlockingIOError:
            pass
        except OSError:
            return ERROR, done
        left = deadline - time.monotonic()
        if left <= 0:
            return TIMEOUT, done
        if poller is None:
            poller = select.poll()
            poller.register(sock, select.POLLOUT)
        try:
            poller.poll(max(1, int(left * 1000 + 0.999)))
        except OSError as e:
            if e.errno != errno.EINTR:
                return ERROR, done
    return OK, done


def refused(sock):
    """Whether the daemon answered with REFUSE (PROTOCOL.md, "Errors") before
    it closed: a refusal, not a restart. Reads only what is there now."""
    try:
        b = sock.recv(64, socket.MSG_DONTWAIT)
    except OSError:
        return False
    return len(b) >= 5 and b[4] == 0x81
