"""test_paths: the Python client resolves the socket exactly as logctl (and
liblogsink, through the same paths.h) does, as root and as an ordinary user
(nobody via setpriv when run as root, else the user running it):
$LOGSINK_SOCKET, $XDG_RUNTIME_DIR absolute or not, a per-user directory that
exists with a socket, one that is refused (group-writable), and the system
socket's fallback. logctl names the path it
tried in "daemon not running (socket PATH)"."""

import os
import re
import shutil
import socket
import subprocess
import tempfile
import unittest

from harness import LOGCTL
from logsink import _paths

ROOT = os.geteuid() == 0
NOBODY = 65534 if ROOT else os.geteuid()  # the ordinary user: nobody, or who runs the test
PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else None
PKG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def run_as(uid, argv, env):
    pre = [] if uid == os.geteuid() else ["setpriv", "--reuid=%d" % uid, "--regid=%d" % uid,
                               "--clear-groups"]
    return subprocess.run(pre + argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=30, check=False)


class PathsTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="logsink-paths-")
        os.chmod(self.dir, 0o755)
        self.addCleanup(shutil.rmtree, self.dir, True)
        # copies nobody can read: the checkout may be in a 0700 directory
        self.pkg = os.path.join(self.dir, "pkg")
        shutil.copytree(os.path.join(PKG, "logsink"), os.path.join(self.pkg, "logsink"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        self.logctl = shutil.copy(LOGCTL if os.sep in LOGCTL else shutil.which(LOGCTL),
                                  os.path.join(self.dir, "logctl"))

    def resolve(self, uid, env):
        """(python's path, logctl's path) for uid in env."""
        py = run_as(uid, [PY, "-c", "import sys; sys.path.insert(0, %r); from logsink import "
                          "_paths as P; p, d = P.client_socket(); print(p); "
                          "print(d is None or P.user_dir_ok(d))" % self.pkg], env)
        self.assertEqual(py.returncode, 0, py.stderr)
        mine, usable = py.stdout.decode().split()
        if os.path.exists(_paths.SYSTEM_SOCKET) and mine == _paths.SYSTEM_SOCKET:
            return mine, mine  # a live system daemon: do not send it a test record
        lc = run_as(uid, [self.logctl, "send", "--level", "debug", "paths test"], env)
        err = lc.stderr.decode()
        m = re.search(r"\(socket (.*)\)", err)
        if m:
            return mine, m.group(1)
        # a refused per-user directory: logctl names it; Python holds the path
        # and refuses it at every connect (user_dir_ok)
        m = re.search(r"socket: (.*) is .*: refusing it", err)
        self.assertIsNotNone(m, err)
        self.assertEqual(usable, "False")
        return mine, m.group(1) + "/logsink.sock"

    def user_dir(self, uid, mode, with_socket):
        d = os.path.join(self.dir, "xdg%d%o" % (uid, mode))
        os.makedirs(os.path.join(d, "logsink"))
        if with_socket:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(os.path.join(d, "logsink", "logsink.sock"))  # bound, not listening
            s.close()
        if ROOT:
            for p in (d, os.path.join(d, "logsink")):
                os.chown(p, uid, uid)
        os.chmod(os.path.join(d, "logsink"), mode)
        return d

    def test_same_as_logctl(self):
        base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        cases = [(0, {}), (0, {"LOGSINK_SOCKET": os.path.join(self.dir, "explicit.sock")})] \
            if ROOT else []
        cases += [
            (NOBODY, {}),
            (NOBODY, {"XDG_RUNTIME_DIR": "relative/dir"}),
            (NOBODY, {"XDG_RUNTIME_DIR": os.path.join(self.dir, "missing")}),
            (NOBODY, {"XDG_RUNTIME_DIR": self.user_dir(NOBODY, 0o700, True)}),
            (NOBODY, {"XDG_RUNTIME_DIR": self.user_dir(NOBODY, 0o770, True)}),
            (NOBODY, {"LOGSINK_SOCKET": os.path.join(self.dir, "explicit.sock")}),
        ]
        for uid, env in cases:
            mine, theirs = self.resolve(uid, dict(base, **env))
            self.assertEqual(mine, theirs, (uid, env))
        # and the cases mean what they say
        xdg = cases[-3][1]["XDG_RUNTIME_DIR"]
        mine, _ = self.resolve(NOBODY, dict(base, XDG_RUNTIME_DIR=xdg))
        self.assertEqual(mine, xdg + "/logsink/logsink.sock")

    def test_explicit_path_wins(self):
        self.assertEqual(_paths.client_socket("/x/y.sock"), ("/x/y.sock", None))


if __name__ == "__main__":
    unittest.main()
