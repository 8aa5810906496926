"""logsink: a pure-Python client of logsinkd (proto/PROTOCOL.md).

    import logsink
    with logsink.Client(app="myapp") as c:
        c.log(logsink.WARNING, "disk %s at %d%%", "sda", 91)

    import logging
    logging.getLogger().addHandler(logsink.Handler(app="myapp"))

Logging never raises into the application: Client.log raises ValueError
only for a level outside 0..7 or a closed client, and Handler.emit reports
failures through handleError(). Arguments that cannot be printed (a __str__
that raises) are logged as "<unprintable TYPE: EXCEPTION>" markers.

The Handler sends a record's logger name and extra= values as named fields,
typed (bool, int, float, str) when the daemon grants them (python/README.md,
"Fields"). See python/README.md for the fallback to text, the level table and the
drop/wait policy (liblogsink's defaults)."""

__version__ = "0.1.0"  # the project's version (CMakeLists.txt project(VERSION))

from ._printf import signature
from .client import ALERT, CRIT, DEBUG, EMERG, ERR, INFO, NOTICE, WARNING, Client
from .handler import Handler, syslog_level

__all__ = ["__version__", "Client", "Handler", "syslog_level", "signature", "EMERG", "ALERT", "CRIT", "ERR",
           "WARNING", "NOTICE", "INFO", "DEBUG"]
