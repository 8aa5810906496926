"""client: logsink.Client, one connection to logsinkd with liblogsink's
default policy (client/include/logsink/logsink.h):

- A call encodes its record into the client's buffer and returns; a
  background thread sends the buffer every flush_interval (100 ms) or once
  batch_bytes (32 KiB) wait. A record at flush_level (LS_WARNING) or more
  severe is written to the socket before the call returns, waiting at most
  block_timeout (1 s), not without a connection nor while stalled.
- Buffer full (buffer_bytes, 256 KiB): the call waits while the daemon
  drains, at most block_timeout; if no space comes, the client is stalled
  and drops (and counts) at once until the sender moves data again.
- No connection: the record is dropped and counted at once, and the first
  such drop of a spell without a daemon writes one line on stderr; connecting is
  retried after reconnect_min (10 ms), doubled per failure up to
  reconnect_max (1 s). A daemon that reads nothing for send_timeout (1 s)
  loses the connection, which is re-made. Drops are reported to the daemon
  in a DROPPED frame once a connection works.
- Restarts (PROTOCOL.md, "Restarts"): when the daemon closes a working
  connection (a write fails: EPIPE, ECONNRESET), the frames not written
  whole are kept and, for block_timeout, the daemon is taken to be
  restarting: records are staged instead of dropped, connects are retried
  every reconnect_min, and the next connection re-interns every site, then
  sends the kept frames, then what was staged since. Past the window what
  waited is dropped and counted. A daemon that refuses the connection
  (REFUSE) or accepts and closes again within the window gets no new one.
- Threads: one lock guards the state; the socket is written by one thread
  at a time, outside that lock. Fork: the child drops the parent's buffer
  and socket (never writes into the parent's connection), starts its
  counters at zero and connects on its own when it next logs.
"""

import atexit
import os
import socket as _socket
import sys
import threading
import time
import weakref
from collections.abc import Mapping

from . import _args, _conn, _fields, _levels, _paths, _printf, _render
from . import _wire as W
from ._fields import encode_field  # noqa: F401 - the trick's field, for callers of old

EMERG, ALERT, CRIT, ERR, WARNING, NOTICE, INFO, DEBUG = range(8)

_FRAME_MAX = (64 << 10) - 5  # RECORDS frames stay within 64 KiB (PROTOCOL.md)
_TEXT_FMT = b"%s"
_CAPS = W.CAP_LEVELS | W.CAP_FIELDS  # offered in HELLO; WELCOME says which are used

_clients = weakref.WeakSet()
_tls = threading.local()  # the thread's native id (a new one after fork)


def _parse(fmt):
    """(format bytes, conversions or None if the daemon refuses it, plan)."""
    try:
        fb = fmt.encode("utf-8")
    except UnicodeEncodeError:
        return None, None, None
    specs = _printf.parse(fb) if len(fb) <= W.FMT_MAX else None
    return fb, specs, (_args.plan(specs) if specs is not None else None)


class Client:
    """A connection to logsinkd. socket: path (None: $LOGSINK_SOCKET, else
    the default of paths.h); app: the label sent in HELLO (None: the
    program's name). The keyword options are liblogsink's ls_options, in
    seconds and bytes; level and levels are the levels at the source
    (-1 off .. 7 debug, and rules per file as $LOGSINK_LEVEL, which
    replaces both when set; see logsink/_levels.py)."""

    def __init__(self, socket=None, app=None, *, flush_interval=0.1, flush_level=WARNING,
                 block_timeout=1.0, send_timeout=1.0, reconnect_min=0.01, reconnect_max=1.0,
                 close_timeout=2.0, max_record_bytes=8192, buffer_bytes=256 << 10,
                 batch_bytes=32 << 10, max_formats=4096, level=DEBUG, levels=None):
        if not 1024 <= max_record_bytes <= 65536:
            raise ValueError("max_record_bytes must be 1024..65536")
        if not 0 <= max_formats <= 65000:
            raise ValueError("max_formats must be 0..65000 (sites per connection)")
        self._path, self._user_dir = _paths.client_socket(socket)
        if app is None:
            app = os.path.basename(sys.argv[0] if sys.argv and sys.argv[0] else "python")
        app = app.encode("utf-8", "backslashreplace")
        self._app = app[:W.utf8_cut(app, W.APP_MAX)]  # whole characters
        self.flush_interval = flush_interval
        self.flush_level = flush_level
        self.block_timeout = block_timeout
        self.send_timeout = send_timeout
        self.reconnect_min = reconnect_min
        self.reconnect_max = reconnect_max
        self.close_timeout = close_timeout
        self.max_record_bytes = max_record_bytes
        self.buffer_bytes = buffer_bytes
        self.batch_bytes = batch_bytes
        self.max_formats = max_formats
        # Levels at the source (liblogsink's ls_options.level/.levels):
        # $LOGSINK_LEVEL replaces both; one that does not parse is ignored
        # and said in a warning record below.
        if not isinstance(level, int) or not -1 <= level <= 7:
            raise ValueError("level must be -1 (off) or 0..7 (syslog), not %r" % (level,))
        self._levels = _levels.Rules(levels, level)  # ValueError names the fault
        bad_env = None
        env = os.environ.get("LOGSINK_LEVEL")
        if env:  # empty: as if unset
            try:
                self._levels = _levels.Rules(env)
            except ValueError as e:
                bad_env = 'logsink: LOGSINK_LEVEL="%s" ignored: %s' % (env[:128], e)
        # Rules a daemon pushes go on top of these (PROTOCOL.md, "Levels at
        # run time"); they are sent, as text, in HELLO.
        self._own = self._levels
        self._own_text = self._own.text().encode("utf-8", "surrogateescape")
        self._specs = {}  # format (str) -> parsed conversions or None (refused)
        self._closed = False
        self._level_all = 7  # until the warning is staged
        self._reset()
        _clients.add(self)
        if bad_env:
            self._log(WARNING, "%s", (bad_env,), "", 0, time.time_ns())
        self._level_all = self._levels.least()

    # ---- state -----------------------------------------------------------

    def _reset(self):
        """Fresh state: at creation and in a fork child (nothing inherited)."""
        self._pid = os.getpid()
        self._lock = threading.RLock()
        self._space = threading.Condition(self._lock)
        self._work = threading.Condition(self._lock)
        self._send_lock = threading.Lock()
        self._sock = None
        self._gen = 0
        self._sites = {}  # (fmt bytes, level, file, line) -> site id, this connection
        self._keys = set()  # site keys this client has known (bounded by max_formats)
        self._out = bytearray()  # whole frames waiting to be sent
        self._marks = []  # (end offset in _out, records, dropped count reported)
        self._out_records = 0
        self._cur = None  # the open RECORDS frame
        self._cur_tid = self._cur_ts = self._cur_n = 0
        self._stalled = False
        self._ever = False
        self._warned_absent = False  # the no-daemon warning of this spell was written
        self._ext_fmts = {}  # (format, named fields) -> the site's format with them, or None
        self._next_connect = 0.0
        self._backoff = self.reconnect_min
        self._lost_at = 0.0  # when the restart window began (0: none)
        self._window_spent = False  # a window ended: none until a connection outlives one
        self._connected_at = 0.0
        self._unreported = 0
        self._since_ns = 0
        self._in_flight_report = 0
        self._thread = None
        self._caps = 0  # capabilities the daemon uses on this connection (its WELCOME)
        self._welcome_pending = False  # HELLO v2 unanswered yet: the answer is read later
        self._in = bytearray()  # what the daemon sent, not read whole yet
        self._stats = dict.fromkeys(
            ("logged", "sent", "dropped", "dropped_reported", "errors", "truncated",
             "bytes_sent", "frames_sent", "interned", "connects", "reconnects",
             "disconnects", "formatted", "fallback"), 0)

    def _after_fork(self):
        global _tls
        if self._pid != os.getpid():
            _tls = threading.local()  # thread ids of the parent are not ours
        sock = self._sock
        self._reset()
        if sock is not None:
            try:
                sock.close()  # the child's copy only: the parent's connection stays
            except OSError:
                pass

    # ---- public ----------------------------------------------------------

    def log(self, level, fmt, *args):
        """Logs a printf-style record at syslog level 0..7. Returns True when
        it was buffered (or is below its call site's level: nothing is
        produced), False when it was dropped (and counted). Raises
        ValueError for a level outside 0..7 or a closed client, and nothing
        else: arguments (or a format) that cannot be printed are logged in a
        degraded form, counted in stats()["errors"] (python/README.md)."""
        f = sys._getframe(1)
        if len(args) == 1 and isinstance(args[0], Mapping):
            try:
                if args[0]:
                    args = args[0]  # "%(name)s" style, as logging does
            except Exception:  # noqa: BLE001 - a broken __len__: rendered as one argument
                pass
        return self._log(level, fmt, args, f.f_code.co_filename, f.f_lineno, time.time_ns())

    def flush(self, timeout=None):
        """Sends everything logged before, waiting at most timeout (default
        close_timeout). True when it is in the socket; False without a
        connection (a connect is tried first) or when time ran out."""
        if self._pid != os.getpid():
            self._after_fork()
        t = self.close_timeout if timeout is None else timeout
        deadline = time.monotonic() + t
        with self._lock:
            if self._sock is None:
                self._maybe_connect(force=True)
            # The daemon is restarting: wait (at most the deadline) for the
            # next one rather than give up on what waits for it.
            while self._sock is None and self._restarting():
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._work.wait(min(left, self.reconnect_min))
                self._maybe_connect(force=True)
        return self._drain(deadline)

    def close(self):
        """Flushes (at most close_timeout), then closes the connection."""
        if self._closed:
            return
        self.flush()
        with self._lock:
            self._closed = True
            self._work.notify_all()
            self._disconnect(count=True, lost=False)

    def stats(self):
        """The client's counters since it was made (or since fork, in a child),
        named like liblogsink's ls_stats, plus `fallback` (records rendered in
        Python and sent as text) and `connected`."""
        with self._lock:
            s = dict(self._stats)
            s["connected"] = self._sock is not None
            s["buffered_bytes"] = len(self._out) + (len(self._cur) if self._cur else 0)
            return s

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ---- logging ---------------------------------------------------------

    def _enabled(self, level, file, line):
        """Whether a record at `level` from that call site is produced."""
        return level <= self._level_all or level <= self._levels.level_for(file, line)

    def _encode(self, level, fmt, args, file, line, counts):
        """(site key, argument bytes, truncated bytes, last resort) of one
        record; names of counters to add to are appended to counts."""
        budget = self.max_record_bytes
        if isinstance(fmt, str):
            enc = None
            try:
                parsed = self._specs.get(fmt)
                if parsed is None:
                    parsed = _parse(fmt)
                    if len(self._specs) < self.max_formats:
                        self._specs[fmt] = parsed
                fb, specs, ops = parsed
                if specs is not None and isinstance(args, tuple):
                    if ops is not None:
                        enc = _args.encode_plan(ops, specs, args, budget)
                    else:
                        enc = _args.encode(specs, args, budget)
            except Exception:  # noqa: BLE001 - an argument's __str__ (any user code) raised:
                enc = None     # _render prints what it can
            if enc is not None:
                key = (fb, level, file, line)
                if self._admit(key):
                    return key, enc[0], enc[1], False
                counts.append("formatted")
                return self._text(level, fmt, args, "", 0, counts)
        if "fallback" not in counts:  # the Handler may have counted it already
            counts.append("fallback")
        return self._text(level, fmt, args, file, line, counts)

    def _text(self, level, fmt, args, file, line, counts):
        """The record as text rendered by Python, under the format "%s"."""
        key = (_TEXT_FMT, level, file, line)
        if not self._admit(key):
            key = (_TEXT_FMT, level, "", 0)  # at most 8 of these, never refused
        text, ok = _render.render(fmt, args)
        if not ok:
            counts.append("errors")
        data, trunc = _args.text(text, self.max_record_bytes)
        return key, data, trunc, not ok

    def _admit(self, key):
        """Whether key may have a site of its own: the first max_formats keys
        do (like ls_vlog's table of run-time formats)."""
        if key in self._keys:
            return True
        if len(self._keys) < self.max_formats:
            self._keys.add(key)
            return True
        return False

    def _typed_fields(self):
        """Whether this connection takes typed fields (its WELCOME granted
        CAP_FIELDS); caller holds the lock, or reads a hint."""
        return bool(self._caps & W.CAP_FIELDS)

    def _with_fields(self, rec, items, typed):
        """rec with named fields, items as _fields.item() made them.
        typed (the daemon granted CAP_FIELDS): the site's format is the
        message, 0x1F and the field list, its level byte carries
        SITE_FIELDS, and each value is an argument of its type (proto/
        fields.h); a message holding 0x1F itself takes the trick. Otherwise
        the trick (render/RENDERING.md, "Named fields"): one %.0s per
        field, each a string argument NAME=VALUE. rec as it was when its
        site cannot have another format (the daemon would refuse it: over
        4096 bytes or 64 arguments; past max_formats; the arguments over
        max_record_bytes)."""
        key, data, trunc, last = rec
        typed = typed and _fields.SEP not in key[0]
        if typed:
            spec, encoded = _fields.typed(items)  # spec: bytes, the field list
            level = key[1] | W.SITE_FIELDS
        else:
            spec, encoded = _fields.trick(items)  # spec: int, the count
            level = key[1]
        if len(data) + len(encoded) > self.max_record_bytes:
            return rec  # the record's own arguments come first
        ck = (key[0], spec)
        fmt = self._ext_fmts.get(ck, False)  # one bytes object per format: its hash is kept
        if fmt is False:
            fmt = key[0] + (_fields.SEP + spec if typed else b"%.0s" * spec)
            if len(fmt) > W.FMT_MAX or _printf.parse(fmt) is None:
                fmt = None  # the daemon refuses it: the record goes without its fields
            if len(self._ext_fmts) < 4 * self.max_formats + 64:
                self._ext_fmts[ck] = fmt
        if fmt is None:
            return rec
        ext = (fmt, level) + key[2:]
        if not self._admit(ext):
            return rec
        return ext, data + encoded, trunc, last

    def _log(self, level, fmt, args, file, line, ts, extra=None, strict=False, counts=None,
             fields=None):
        """Stages one record (and `extra` text after it). fields: items
        (_fields.item()) carried as named fields, typed when the daemon
        takes them (decided again once _stage has a connection). strict: raise
        TypeError, after staging, when neither the daemon nor Python could
        render fmt with args (the record went in a degraded form: markers for
        unprintable arguments, or the last-resort form; _render)."""
        if not isinstance(level, int) or not 0 <= level <= 7:
            raise ValueError("level must be 0..7 (syslog), not %r" % (level,))
        if level > self._level_all and level > self._levels.level_for(file, line):
            if self._closed:
                raise ValueError("logsink: the client is closed")
            return True  # below its site's level: nothing produced, nothing counted
        counts = counts or []
        recs = [self._encode(level, fmt, args, file, line, counts)]
        bad = recs[0][3]
        redo = None
        if fields:
            typed = self._typed_fields()  # a hint: _stage checks it under the lock
            redo = (recs[0], fields, typed)
            recs[0] = self._with_fields(recs[0], fields, typed)
        if extra:
            recs.append(self._text(level, "%s", (extra,), file, line, counts))
        try:
            tid = _tls.tid
        except AttributeError:
            tid = _tls.tid = threading.get_native_id()
        start = time.monotonic()  # one block_timeout for the space and the flush
        ok = self._stage(recs, tid, ts, counts, redo)
        if ok and level <= self.flush_level and not self._stalled:
            self._drain(start + self.block_timeout)
        if bad and strict:
            raise TypeError("logsink: format %s cannot be rendered with its arguments (they do"
                            " not match it, or one cannot be printed); sent as text in a"
                            " degraded form" % _render.safe_repr(fmt))
        return ok

    def _stage(self, recs, tid, ts, counts, redo=None):
        with self._lock:
            if self._closed:
                raise ValueError("logsink client is closed")
            for name in counts:
                self._stats[name] += 1
            if self._sock is None:
                self._maybe_connect()
            if redo is not None and redo[2] != self._typed_fields():
                # The connection changed since the fields were encoded (made
                # just now, or lost): their form follows this one's WELCOME.
                recs[0] = self._with_fields(redo[0], redo[1], not redo[2])
            waiting = self._sock is None and self._restarting()  # staged for the next daemon
            need = sum(len(r[1]) for r in recs) + 64 * len(recs)
            full = len(self._out) + (len(self._cur) if self._cur else 0) + need > self.buffer_bytes
            if ((self._sock is None and not waiting) or self._stalled
                    or (full and not self._room(need))):
                if self._sock is None and not self._warned_absent:
                    self._warn_absent()
                self._drop(len(recs))
                return False
            for key, data, trunc, _ in recs:
                if key not in self._sites:
                    self._intern(key)
                self._append(self._sites[key], data, trunc, tid, ts)
            pending = len(self._out) + len(self._cur)
            if self._thread is None:
                self._start_sender()
            elif pending >= self.batch_bytes:
                self._work.notify()
            return True

    def _intern_frame(self, key, site):
        """The INTERN of a site for this connection. A site with typed
        fields, to a daemon that did not grant CAP_FIELDS (one that came
        back from a restart without it, or whose WELCOME is not read yet):
        the format with 0x1F made a space and no SITE_FIELDS, an ordinary
        format of the same signature, so the records encoded for it read
        the same, their fields as text of the message."""
        fmt, level = key[0], key[1]
        if level & W.SITE_FIELDS and not self._caps & W.CAP_FIELDS:
            fmt, level = fmt.replace(_fields.SEP, b" ", 1), level & W.LEVEL_MASK
        fname = str(key[2]).encode("utf-8", "backslashreplace")
        fname = fname[:W.utf8_cut(fname, W.FILE_MAX)]
        line = key[3] if 0 <= key[3] <= W.LINE_MAX else 0
        return W.intern(site, level, line, fmt, fname)

    def _intern(self, key):
        site = len(self._sites) + 1
        self._close_cur()
        self._out += self._intern_frame(key, site)
        self._marks.append((len(self._out), 0, 0))
        self._sites[key] = site
        self._stats["interned"] += 1

    def _append(self, site, data, trunc, tid, ts):
        cur = self._cur
        if cur is not None and (self._cur_tid != tid or len(cur) + len(data) + 32 > _FRAME_MAX):
            self._close_cur()
            cur = None
        if cur is None:
            cur = self._cur = W.records_header(tid)
            self._cur_tid, self._cur_n, self._cur_ts = tid, 0, 0
        cur += W.record(site, trunc, ts - self._cur_ts, data)
        self._cur_ts = ts
        self._cur_n += 1
        self._stats["logged"] += 1
        if trunc:
            self._stats["truncated"] += 1

    def _close_cur(self):
        if self._cur is not None:
            self._out += W.finish(self._cur)
            self._out_records += self._cur_n
            self._marks.append((len(self._out), self._cur_n, 0))
            self._cur = None
            self._cur_n = 0

    def _room(self, need):
        """Waits (at most block_timeout) while the daemon drains for need
        bytes of buffer; sets the stall when none comes."""
        def used():
            return len(self._out) + (len(self._cur) if self._cur else 0)
        deadline = time.monotonic() + self.block_timeout
        gen = self._gen
        while used() + need > self.buffer_bytes:
            self._work.notify()
            left = deadline - time.monotonic()
            if left <= 0 or self._gen != gen or self._stalled:
                self._stalled = self._gen == gen
                return False
            self._space.wait(left)
        return True

    def _warn_absent(self):
        """One line on stderr per spell without a daemon: records are dropped
        (counted, and reported once one listens), not silently lost."""
        self._warned_absent = True
        try:
            sys.stderr.write("logsink: no daemon listens on %s: records are dropped (and "
                             "counted) until one does\n" % self._path)
            sys.stderr.flush()
        except Exception:  # logging never raises into the application
            pass

    def _drop(self, n):
        self._stats["dropped"] += n
        if not self._unreported:
            self._since_ns = time.time_ns()
        self._unreported += n

    # ---- connection ------------------------------------------------------

    def _handshake(self, sock, now):
        """Version 2's HELLO on sock and its answer: (socket, version), the
        socket a new one of version 1 when the daemon speaks no other, or
        (None, 0) when there is no connection."""
        # The answer is waited for so that the daemon's levels apply from
        # the first record, but briefly: this runs in a logging thread, with
        # the lock held. Unanswered (a daemon starting, this connection in
        # its backlog), the connection is used and the answer read later.
        got = _conn.handshake(sock, W.hello2(self._app, _CAPS, self._own_text),
                              now + min(self.send_timeout, 0.1))
        self._welcome_pending = False
        if got is not None and got[0] == "welcome":
            _, caps, text, rest = got
            self._caps = caps & _CAPS
            self._in = bytearray(rest)
            self._apply_levels(text)
            return sock, 2
        if got is not None and got[0] == "pending":
            self._welcome_pending = True
            self._in = bytearray(got[1])
            return sock, 2
        sock.close()
        if got is None:
            return None, 0
        return _conn.connect(self._path), 1

    def _apply_levels(self, text):
        """The daemon's rules text on top of this client's own ($LOGSINK_LEVEL
        or the options); a text that does not parse changes nothing."""
        try:
            pushed = _levels.Rules(text.decode("utf-8", "surrogateescape"), _levels.UNSET)
        except ValueError:
            return
        levels = self._own.merged(pushed)
        self._levels = levels
        self._level_all = levels.least()

    def _read_pushed(self):
        """Reads what the daemon sent since (never waits): LEVELS frames
        (and a pending WELCOME) are applied; an end of file is the daemon
        closing (a restart), found even when nothing is sent. Caller holds
        the lock."""
        if self._sock is None or not (self._caps & W.CAP_LEVELS or self._welcome_pending):
            return
        while True:
            try:
                b = self._sock.recv(65536, _socket.MSG_DONTWAIT)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                return
            if not b:
                # Only when no send is under way (it would meet the close
                # itself and keep its frames for the next daemon).
                if not self._out and self._send_lock.acquire(blocking=False):
                    try:
                        if not self._keep_for_restart(b"", [], 0):
                            self._disconnect(count=True)
                    finally:
                        self._send_lock.release()
                return
            self._in += b
        while True:
            got = W.next_frame(self._in, _conn.IN_LIMIT)
            if not got:
                if got is None:
                    # What this client cannot read: nothing more is read.
                    self._caps &= ~W.CAP_LEVELS
                return
            ftype, payload, size = got
            del self._in[:size]
            if ftype == W.F_LEVELS:
                text = W.get_str(payload, 0, W.LEVELS_TEXT_MAX)
                if text is not None and text[1] == len(payload):
                    self._apply_levels(text[0])
            elif self._welcome_pending and ftype == W.F_WELCOME and len(payload) >= 8:
                self._welcome_pending = False
                self._caps = int.from_bytes(payload[4:8], "little") & _CAPS
                text = W.get_str(payload, 8, W.LEVELS_TEXT_MAX)
                self._apply_levels(text[0] if text is not None else b"")
            elif self._welcome_pending and ftype == W.F_REFUSE:
                # A daemon of version 1 that started late: what followed the
                # HELLO is lost to it; the next connect falls back to version 1.
                self._welcome_pending = False
                self._disconnect(count=True)
                return

    def _maybe_connect(self, force=False):
        now = time.monotonic()
        if not force and now < self._next_connect:
            return
        sock = None
        version = 0
        if self._user_dir is None or _paths.user_dir_ok(self._user_dir):
            sock = _conn.connect(self._path)
        self._caps = 0
        if sock is not None:
            sock, version = self._handshake(sock, now)
            if sock is not None and not self._caps & W.CAP_LEVELS and not self._welcome_pending:
                self._apply_levels(b"")  # no rules from this daemon: an earlier one's go
        if sock is None:
            if self._restarting():  # the next daemon is expected any moment
                self._next_connect = now + self.reconnect_min
                return
            self._next_connect = now + self._backoff
            self._backoff = min(self._backoff * 2, self.reconnect_max)
            return
        self._sock = sock
        self._gen += 1
        self._connected_at = now
        self._backoff = self.reconnect_min
        self._stats["connects"] += 1
        if self._ever:
            self._stats["reconnects"] += 1
        self._ever = True
        self._warned_absent = False
        self._stalled = False
        # HELLO first; after a restart, every site again under its id, then
        # the frames kept from the last connection and those staged since.
        self._close_cur()
        if version == 2:  # said and answered already
            head = bytearray()
            marks = []
            self._stats["frames_sent"] += 1
            if (self._caps & W.CAP_LEVELS or self._welcome_pending) and self._thread is None:
                self._start_sender()  # it reads what the daemon pushes
        else:
            head = bytearray(W.hello(self._app))
            marks = [(len(head), 0, 0)]
        for key, site in sorted(self._sites.items(), key=lambda kv: kv[1]):
            head += self._intern_frame(key, site)
            marks.append((len(head), 0, 0))
            self._stats["interned"] += 1
        shift = len(head)
        self._out[:0] = head
        self._marks = marks + [(e + shift, n, r) for e, n, r in self._marks]
        self._queue_report()  # the drops come before the records logged since

    def _restarting(self):
        """Whether the daemon is taken to be restarting (a window since a
        working connection was closed); ends a window that has passed:
        what waited for the next daemon is dropped and counted."""
        if not self._lost_at:
            return False
        if time.monotonic() - self._lost_at < self.block_timeout:
            return True
        self._lost_at = 0.0
        self._window_spent = True
        if self._sock is None:
            self._disconnect(count=True, lost=False)  # drops what waited
        return False

    def _keep_for_restart(self, data, marks, k):
        """The daemon closed a working connection (a write failed): keeps
        the INTERN and RECORDS frames not written whole (a half-written
        frame is discarded by the daemon) before what was staged since, and
        starts (or goes on with) the restart window. False when no window
        applies (one ended and no connection outlived a window since)."""
        now = time.monotonic()
        window = self.block_timeout
        lasted = self._connected_at and now - self._connected_at >= window
        if lasted:
            self._window_spent = False
        if (window <= 0 or self._window_spent
                or not (not self._lost_at or lasted or now - self._lost_at < window)):
            self._window_spent = self._window_spent or bool(self._lost_at)
            return False
        if not self._lost_at or lasted:
            self._lost_at = now
        kept = bytearray()
        kmarks = []
        nrec = 0
        prev = marks[k - 1][0] if k else 0
        for end, n, _ in marks[k:]:
            # Not INTERN: the next connection interns every site again, as
            # that daemon's capabilities allow (_maybe_connect, _intern_frame).
            if data[prev + 4] == W.F_RECORDS:
                kept += data[prev:end]
                kmarks.append((len(kept), n, 0))
                nrec += n
            prev = end
        self._close_cur()
        self._out[:0] = kept
        self._marks = kmarks + [(e + len(kept), n, r) for e, n, r in self._marks]
        self._out_records += nrec
        self._close_sock()
        self._stats["disconnects"] += 1
        self._next_connect = now  # at once: a restarted daemon listens within milliseconds
        self._stalled = False
        self._space.notify_all()
        self._work.notify()
        return True

    def _close_sock(self):
        """Closes the socket (an error closing it changes nothing) and ends
        its connection's generation."""
        try:
            self._sock.close()
        except OSError:
            pass
        self._sock = None
        self._caps = 0  # the next connection's WELCOME says its own
        self._gen += 1

    def _queue_report(self):
        """Appends a DROPPED frame for the drops not reported yet (one in flight
        at a time; its count is settled when the frame reaches the socket)."""
        if self._unreported and not self._in_flight_report:
            report = min(self._unreported, W.DROPPED_MAX)
            self._close_cur()
            self._out += W.dropped(report, self._since_ns, time.time_ns())
            self._marks.append((len(self._out), 0, report))
            self._in_flight_report = report

    def _disconnect(self, count, lost=True):
        """Drops the connection and what was encoded for it (its site ids)."""
        self._close_cur()
        if count:
            self._drop(self._out_records)
        self._out = bytearray()
        self._marks = []
        self._out_records = 0
        self._sites = {}
        if self._sock is not None:
            self._close_sock()
            if lost:
                self._stats["disconnects"] += 1
                self._next_connect = time.monotonic() + self._backoff
        self._stalled = False
        self._space.notify_all()

    # ---- sending ---------------------------------------------------------

    def _start_sender(self):
        t = threading.Thread(target=_sender, args=(weakref.ref(self), self._pid),
                             name="logsink-sender", daemon=True)
        try:
            t.start()
        except RuntimeError:
            return  # no thread now (none left, or interpreter shutdown): the next call retries
        self._thread = t

    def _drain(self, deadline):
        """Writes every whole frame staged so far. True when all of it is in
        the socket; waits for another writer at most until the deadline."""
        if self._pid != os.getpid():
            # A fork that bypassed os.register_at_fork (a C extension's raw
            # fork()): once per send, never write into the parent's socket.
            self._after_fork()
        left = deadline - time.monotonic()
        if not self._send_lock.acquire(timeout=max(left, 0)):
            return False
        try:
            with self._lock:
                if self._sock is None:
                    return False
                self._close_cur()
                self._queue_report()
                data, marks, nrec = self._out, self._marks, self._out_records
                self._out, self._marks, self._out_records = bytearray(), [], 0
                sock, gen = self._sock, self._gen
                self._space.notify_all()
            if not data:
                return True
            start = time.monotonic()
            st, done = _conn.write(sock, data, min(deadline, start + self.send_timeout))
            refused = st == _conn.ERROR and _conn.refused(sock)
            with self._lock:
                delivered = frames = reported = 0
                k = 0
                for end, n, rep in marks:
                    if end > done:
                        break
                    delivered += n
                    frames += 1
                    reported += rep
                    k += 1
                s = self._stats
                s["sent"] += delivered
                s["bytes_sent"] += done
                s["frames_sent"] += frames
                if reported:
                    s["dropped_reported"] += reported
                    self._unreported -= reported
                # A timeout of the caller's deadline, not the daemon's stall:
                # the rest (a frame may be half written) stays queued.
                kept = (st == _conn.TIMEOUT and gen == self._gen
                        and time.monotonic() - start < self.send_timeout)
                if reported or not kept:
                    self._in_flight_report = 0
                if done and self._stalled and gen == self._gen:
                    self._stalled = False
                if kept:
                    self._out[:0] = data[done:]
                    self._marks[:0] = [(e - done, n, r) for e, n, r in marks[k:]]
                    shift = len(data) - done
                    self._marks[len(marks) - k:] = [
                        (e + shift, n, r) for e, n, r in self._marks[len(marks) - k:]]
                    self._out_records += nrec - delivered
                elif st != _conn.OK:
                    if not (st == _conn.ERROR and gen == self._gen and not refused
                            and self._keep_for_restart(data, marks, k)):
                        self._drop(nrec - delivered)
                        if gen == self._gen:
                            self._disconnect(count=True)
                self._space.notify_all()
                return st == _conn.OK
        finally:
            self._send_lock.release()


def _sender(ref, pid):
    """The background sender: sends every flush_interval, or at once when a
    caller wakes it (batch_bytes waiting, a caller waiting for space)."""
    while True:
        c = ref()
        if c is None or c._closed or c._pid != pid:
            return
        with c._lock:
            restarting = c._sock is None and c._lost_at
            wait = c.reconnect_min if restarting else c.flush_interval
            if c._caps & W.CAP_LEVELS or c._welcome_pending:
                wait = min(wait, 0.05)  # pushed levels apply within 50 ms
            c._work.wait(wait)
            if c._closed or c._pid != pid:
                return
            c._read_pushed()
            if c._sock is None and (c._unreported or c._restarting()):
                c._maybe_connect()  # report drops, or send what waits, without waiting for a call
            timeout = c.send_timeout
        c._drain(time.monotonic() + timeout)
        del c


def _after_fork_in_child():
    global _tls
    _tls = threading.local()
    for c in list(_clients):
        c._after_fork()


def _at_exit():
    for c in list(_clients):
        if not c._closed and c._pid == os.getpid():
            try:
                c.flush()
            except Exception:  # noqa: BLE001 - exit must go on
                pass


os.register_at_fork(after_in_child=_after_fork_in_child)
atexit.register(_at_exit)
