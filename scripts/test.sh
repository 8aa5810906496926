#!/usr/bin/env bash
# test.sh: install what is missing, build, and run every test: the release
# build's ctest suite, then the whole suite again under ASan+UBSan.
# Set LOGSINK_SKIP_ASAN=1 to run only the release build (not for CI).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
jobs=$(nproc)

echo "== release build (preset: default)"
cmake --preset default >/dev/null
cmake --build --preset default -j "$jobs"
ctest --preset default -j "$jobs"

if [ "${LOGSINK_SKIP_ASAN:-0}" != 1 ]; then
  echo "== ASan+UBSan build (preset: asan)"
  cmake --preset asan >/dev/null
  cmake --build --preset asan -j "$jobs"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --preset asan -j "$jobs"
fi
