"""driver.py: the conformance driver of the Python package (logsink.Client,
and logsink.Handler for named fields). README.md lists what each command
must produce: the same records as the C and C++ drivers'."""

import argparse
import logging
import os
import sys

import logsink


def catalogue(c):
    c.log(logsink.INFO, "integers %d %u %llu %x %o %lld", -42, 42, 2**64 - 1, 255, 0o755, -2**63)
    c.log(logsink.NOTICE, "floats %.3f %g %.1f %g %e", 3.14159, 1e6, -0.5, 2.5e-7, 12345.678)
    c.log(logsink.WARNING, "strings [%s] [%8s] [%-8s] [%.3s]", "h\u00e9llo w\u00f6rld", "right",
          "left", "truncate")
    c.log(logsink.ERR, "char %c and percent %d%%", "x", 100)
    c.log(logsink.DEBUG, "empty [%s]", "")
    c.log(logsink.CRIT, "lines %s", "first\nsecond\ttab")
    c.log(logsink.INFO, "long %s", "x" * 1000)
    c.log(logsink.ALERT, "no arguments")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--socket", required=True)
    p.add_argument("--app", required=True)
    p.add_argument("--block-timeout-ms", type=int, default=None)
    a = p.parse_args()
    opts = {} if a.block_timeout_ms is None else {"block_timeout": a.block_timeout_ms / 1000.0}
    c = logsink.Client(a.socket, a.app, **opts)
    # Fields go through logging, the package's way to name them: the
    # logger's name is the field "logger", extra= the others.
    logger = logging.getLogger("conformance")
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    logger.addHandler(logsink.Handler(client=c))

    def answer(line):
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    for line in sys.stdin:
        w = line.split()
        if w == ["catalogue"]:
            catalogue(c)
            answer("ok")
        elif w == ["levels"]:
            for i in range(8):
                c.log(i, "level %d", i)
            answer("ok")
        elif len(w) == 2 and w[0] == "probe" and w[1] in ("0", "1", "2", "3", "4", "5", "6", "7"):
            before = c.stats()["logged"]
            c.log(int(w[1]), "probe")
            answer("ok 1" if c.stats()["logged"] != before else "ok 0")
        elif w == ["fields"]:
            logger.info("login %s", "alice",
                        extra={"user": "alice", "n": -7, "big": 2**64 - 1, "ok": True, "ratio": 0.5})
            answer("ok")
        elif len(w) == 3 and w[0] == "burst" and w[2].isdigit():
            for i in range(int(w[2])):
                c.log(logsink.INFO, "%s %d", w[1], i)
            answer("ok")
        elif w == ["flush"]:
            answer("ok" if c.flush() else "error flush failed")
        elif w == ["stats"]:
            s = c.stats()
            answer("ok %d %d %d" % (s["logged"], s["dropped"], s["disconnects"]))
        elif w == ["close"]:
            c.close()
            answer("ok")
            return 0
        else:
            answer("error unknown command: " + line.strip())
    c.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
