#!/usr/bin/env bash
# deb_python_check.sh: python3-logsink holds the package's sources only (no
# bytecode) under /usr/lib/python3/dist-packages, is Architecture all,
# depends on python3 and imports from where it unpacks. Called by
# deb_test.sh; runs alone too.
# Usage: deb_python_check.sh <python3-logsink .deb>
set -euo pipefail
deb=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
dpkg-deb -x "$deb" "$tmp/p"
site=usr/lib/python3/dist-packages
for f in __init__.py client.py handler.py _printf.py _wire.py; do
  [ "$(stat -c %a "$tmp/p/$site/logsink/$f" 2>/dev/null)" = 644 ] || bad "no /$site/logsink/$f (0644)"
done
for f in copyright changelog.Debian.gz; do
  [ -f "$tmp/p/usr/share/doc/python3-logsink/$f" ] || bad "no /usr/share/doc/python3-logsink/$f"
done
byte=$(cd "$tmp/p" && find . \( -name '*.pyc' -o -name __pycache__ \) -print)
[ -z "$byte" ] || bad "bytecode in python3-logsink: $byte"
stray=$(cd "$tmp/p" && find . -type f | grep -Ev "^\./($site/logsink/[a-z_]+\.py|usr/share/(doc|lintian)/)" || true)
[ -z "$stray" ] || bad "unexpected files in python3-logsink: $stray"
[ "$(dpkg-deb -f "$deb" Architecture)" = all ] || bad "Architecture: $(dpkg-deb -f "$deb" Architecture)"
[ "$(dpkg-deb -f "$deb" Depends)" = python3 ] || bad "Depends: $(dpkg-deb -f "$deb" Depends)"
PYTHONPATH=$tmp/p/$site PYTHONDONTWRITEBYTECODE=1 python3 -c \
  'import logsink; assert logsink.signature("disk %s at %d%%") == "si"' || bad "logsink does not import"
[ $fail = 0 ] && echo "python3-logsink: files, control data and import OK"
exit $fail
