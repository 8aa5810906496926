"""handler: logsink.Handler, a logging.Handler that sends each LogRecord to
logsinkd as a record of its own call site: record.msg is the format
(interned once per connection), record.args its typed arguments,
record.pathname and record.lineno the site's file and line, record.created
its timestamp.

Levels (logging -> syslog): a level between two of logging's standard
levels maps like the standard level below it (the less severe one):
    levelno >= 50 (CRITICAL)  -> 2 crit
    40..49   (ERROR)          -> 3 err
    30..39   (WARNING)        -> 4 warning
    20..29   (INFO)           -> 6 info
    < 20     (DEBUG, NOTSET)  -> 7 debug

Text instead of a format (sent with the format "%s", counted in the
client's `fallback`): a record without args whose msg contains '%'
(logging prints such a msg as it is), a msg that is not a str, args that
are a mapping, and whatever Client.log falls back for.

emit() never raises (but RecursionError, as logging's handlers): a record
whose msg or arguments cannot be printed (a __str__ that raises, arguments
that do not match the format) is sent in the client's degraded form (the
argument replaced by "<unprintable TYPE: EXCEPTION>", or the format
followed by the arguments) and then reported through handleError(), as
logging's own handlers report a record whose getMessage() raises.

Fields: the logger's name (`logger`) and the record's `extra=` values (at
most 16) go as named fields (logsink/_fields.py). When the daemon granted
LS_CAP_FIELDS (proto/include/logsink/proto/fields.h) they are typed fields
of the site (bool, int, float and str keep their type; any other value is
its str()), with the name rule of _fields.name(); otherwise, with an older
daemon, each is a `%.0s` conversion whose string argument reads NAME=VALUE
(render/RENDERING.md, "Named fields").

exc_info / stack_info: the traceback (formatted by this handler's
formatter, or logging's default one) and the stack follow as a second
record, "%s" at the same level and site, staged together with the first so
no other record comes between them."""

import logging
from collections.abc import Mapping

from . import _fields as _F
from .client import CRIT, DEBUG, ERR, INFO, WARNING, Client


def syslog_level(levelno):
    """The syslog level (0..7) of a logging level number."""
    if levelno >= logging.CRITICAL:
        return CRIT
    if levelno >= logging.ERROR:
        return ERR
    if levelno >= logging.WARNING:
        return WARNING
    if levelno >= logging.INFO:
        return INFO
    return DEBUG


_default_formatter = logging.Formatter()
# A LogRecord's own attributes; any other is an `extra=` field.
_BASE = logging.LogRecord("", 0, "", 0, "", (), None).__dict__
_STANDARD = frozenset(_BASE) | {"message", "asctime", "taskName"}
_BASE_LEN = len(_BASE)  # a record with no more attributes has no extra
_MAX_EXTRA = 16  # extra fields carried per record
_logger_fields = {}  # logger name -> its fields (names are few)


def _fields(record):
    """The logger's name and the record's `extra=` values as field items
    (logsink/_fields.py): bool, int, float and str keep their type, any
    other value is its str() (a value that cannot be printed, its marker).
    The client sends them typed or as the %.0s trick, as its daemon takes
    them."""
    name = record.name
    try:
        items = _logger_fields.get(name)
    except TypeError:  # a name that cannot be hashed
        items = None
    if items is None:
        items = (_F.item("logger", name),)
        if len(_logger_fields) < 4096 and type(name) is str:
            _logger_fields[name] = items
    attrs = record.__dict__
    if len(attrs) <= _BASE_LEN:
        return items
    items = list(items)
    for k, v in attrs.items():
        if k in _STANDARD or k == "logger" or not isinstance(k, str):
            continue
        if len(items) > _MAX_EXTRA:
            break
        items.append(_F.item(k, v))
    return items


class Handler(logging.Handler):
    """A logging handler writing to logsinkd. app/socket: as for Client;
    client: an existing Client to share instead (then close() leaves it
    open). levels: the levels at the source of the Client it makes (rules
    per file and line, as $LOGSINK_LEVEL; the record's pathname and lineno
    are its site), which $LOGSINK_LEVEL replaces when set."""

    def __init__(self, app=None, socket=None, level=logging.NOTSET, client=None, levels=None):
        super().__init__(level)
        if client is not None and levels is not None:
            raise ValueError("levels are the Client's: give them to the Client you share")
        self._own = client is None
        self.client = (client if client is not None else
                       Client(socket=socket, app=app, levels=levels))

    def _trace(self, record):
        fmt = self.formatter or _default_formatter
        parts = []
        if record.exc_info:
            if not record.exc_text:
                record.exc_text = fmt.formatException(record.exc_info)
        if record.exc_text:
            parts.append(record.exc_text)
        if record.stack_info:
            parts.append(fmt.formatStack(record.stack_info))
        return "\n".join(parts) or None

    def emit(self, record):
        try:
            level = syslog_level(record.levelno)
            if not self.client._enabled(level, record.pathname, record.lineno):
                return  # below its site's level: nothing formatted, nothing sent
            msg, args = record.msg, record.args
            counts = None
            if not args:
                # logging prints msg as it is (str(msg)): text unless a plain format.
                if isinstance(msg, str) and "%" not in msg:
                    fmt, args = msg, ()
                else:
                    fmt, args = "%s", (msg,)
                    counts = None if isinstance(msg, str) else ["fallback"]
            else:
                # str(msg) % args, as getMessage() does, but rendered by the
                # client, which never raises for an argument it cannot print.
                fmt = msg
                if not isinstance(args, (tuple, Mapping)):
                    args = tuple(args)
            self.client._log(level, fmt, args, record.pathname, record.lineno,
                             int(record.created * 1e9), self._trace(record), strict=True,
                             counts=counts, fields=_fields(record))
        except RecursionError:
            raise
        except Exception:  # noqa: BLE001 - logging's contract: handleError
            self.handleError(record)

    def flush(self):
        self.client.flush()

    def close(self):
        try:
            if self._own:
                self.client.close()
            else:
                self.client.flush()
        finally:
            super().close()
