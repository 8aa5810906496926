"""logsink: a pure-Python client of logsinkd (proto/PROTOCOL.md).

    import logsink
    with logsink.Client(app="myapp") as c:
        c.log(logsink.WARNING, "disk %s at %d%%", "sda", 91)

    import logging
    logging.getLogger().addHandler(logsink.Handler(app="myapp"))

See python/README.md for the fallback to text, the level table and the
drop/wait policy (liblogsink's defaults)."""

from ._printf import signature
from .client import ALERT, CRIT, DEBUG, EMERG, ERR, INFO, NOTICE, WARNING, Client
from .handler import Handler, syslog_level

__all__ = ["Client", "Handler", "syslog_level", "signature", "EMERG", "ALERT", "CRIT", "ERR",
           "WARNING", "NOTICE", "INFO", "DEBUG"]
