#!/usr/bin/env bash
# run.sh: install what is missing, build, and run logsinkd in the foreground on
# its embedded defaults (no config file). Extra arguments go to logsinkd.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake --preset default >/dev/null
cmake --build --preset default --target logsinkd logctl
exec build/default/bin/logsinkd "$@"
