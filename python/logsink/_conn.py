"""_conn: the Unix socket to logsinkd: a non-blocking connect, version 2's
handshake (HELLO, then the daemon's WELCOME), and writes bounded by a
deadline (after the handshake the daemon sends only LEVELS, read by the
sender between sends)."""

import errno
import select
import socket
import struct
import time

from . import _wire as W

# One frame the daemon sends a client: the largest is LEVELS or WELCOME.
IN_LIMIT = 1 + 8 + 3 + W.LEVELS_TEXT_MAX


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


def handshake(sock, hello, deadline):
    """Says a version 2 HELLO and reads the daemon's answer before the
    monotonic deadline: ("welcome", caps, levels bytes, bytes read after
    it), ("v1",) when the daemon speaks version 1 only (its REFUSE; it
    closes), ("pending", bytes read) when no answer came by then (a daemon
    that is starting: the connection waits in its backlog), or None
    (refused otherwise, closed, malformed)."""
    st, _ = write(sock, hello, max(deadline, time.monotonic() + 0.001))
    if st != OK:
        return None
    buf = bytearray()
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    while True:
        got = W.next_frame(buf, IN_LIMIT)
        if got is None:
            return None
        if got:
            ftype, payload, size = got
            if ftype == W.F_REFUSE:
                if len(payload) >= 4 and struct.unpack_from("<I", payload)[0] < 2:
                    return ("v1",)
                return None
            if ftype == W.F_WELCOME:
                if len(payload) < 8:
                    return None
                caps = struct.unpack_from("<I", payload, 4)[0]
                text = W.get_str(payload, 8, W.LEVELS_TEXT_MAX)
                if text is None or text[1] != len(payload):
                    return None
                return ("welcome", caps, text[0], bytes(buf[size:]))
            del buf[:size]  # another frame: not for this version
            continue
        left = deadline - time.monotonic()
        if left <= 0:
            return ("pending", bytes(buf))
        try:
            poller.poll(max(1, int(left * 1000 + 0.999)))
            b = sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            continue
        except OSError:
            return None
        if not b:
            return None
        buf += b
