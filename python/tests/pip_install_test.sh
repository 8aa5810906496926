#!/usr/bin/env bash
# pip_install_test.sh: `pip install` of python/ into a fresh venv works
# offline (Debian's setuptools through --system-site-packages, no build
# isolation, no index), installs the package there, and its version is the
# project's. usage: pip_install_test.sh PYTHON SOURCE_DIR PROJECT_VERSION
set -euo pipefail
py=$1 src=$2 want=$3
tmp=$(mktemp -d /tmp/logsink-pip.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# A copy: building writes build/ and *.egg-info next to pyproject.toml.
cp -r "$src" "$tmp/src"
rm -rf "$tmp/src/tests"
"$py" -m venv --system-site-packages "$tmp/venv"
"$tmp/venv/bin/pip" install --quiet --no-build-isolation --no-index "$tmp/src" >"$tmp/pip.log" 2>&1 ||
  { cat "$tmp/pip.log"; echo "FAIL: pip install"; exit 1; }
cd "$tmp"  # not next to a logsink/ folder: the import must come from the venv
got=$("$tmp/venv/bin/python" -c 'import logsink, sys; print(logsink.__version__); print(logsink.__file__)')
version=$(sed -n 1p <<<"$got") file=$(sed -n 2p <<<"$got")
[ "$version" = "$want" ] || { echo "FAIL: logsink.__version__ $version, project version $want"; exit 1; }
case $file in
  "$tmp/venv/lib/"*/site-packages/logsink/__init__.py) ;;
  *) echo "FAIL: imported from $file, not the venv"; exit 1 ;;
esac
show=$("$tmp/venv/bin/pip" show logsink)  # not piped into grep -q: pipefail and SIGPIPE
grep -qx "Version: $want" <<<"$show" || { echo "FAIL: pip show: $show"; exit 1; }
"$tmp/venv/bin/python" -c 'import logsink; logsink.Client(socket="/nonexistent/s.sock").close()'
echo "pip install ./python into a venv: logsink $version from the venv OK"
