#!/usr/bin/env bash
# test.sh: install what is missing, check the tree's format, build, and run
# every test:
#   0. scripts/check_format.sh (every C/C++ file as clang-format writes it)
#      and scripts/check_layout.sh (CONTRIBUTING.md names every source file),
#   1. the release build's ctest suite (-Wall -Wextra -Werror),
#   2. the whole suite again under ASan+UBSan,
#      both without systemd_deb, which stage 6 runs (see below),
#   3. the client library's threading tests and the daemon's syslog receive
#      thread (ctest label threads) under TSan,
#   4. each libFuzzer target for LOGSINK_FUZZ_SECONDS (default 60) seconds,
#   5. the benchmarks' smoke runs (tiny sizes, so they cannot rot),
#   6. a user's and a packager's build: a clone of HEAD in a private (0700)
#      directory whose path has a space, the plain Release build, the tests
#      such a build can break (labels unit|client|daemon|systemd|packaging),
#      `cpack -G DEB` and lintian (failing on errors): scripts/check_checkout.sh.
# LOGSINK_QUICK=1 runs stages 0 and 1 only (a local check of the whole release
# suite; CI runs all). The fast subset is `ctest --preset default -L unit`
# (CONTRIBUTING.md).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
jobs=$(nproc)
start=$SECONDS
stage() { echo; echo "== $* ($((SECONDS - start)) s so far)"; }

stage "0/6 format and layout (scripts/check_format.sh, scripts/check_layout.sh)"
bash scripts/check_format.sh
bash scripts/check_layout.sh

# systemd_deb makes the .deb packages from a /usr tree: in a preset's tree
# (another prefix) it configures and builds the whole product once more
# (3-5 minutes, alone), and a sanitizer finds nothing in a package's files.
# Stage 6 runs it on its own /usr build, so stages 1 and 2 leave it out
# (a quick run, which stops after stage 1, keeps it).
skip_deb=(-E '^systemd_deb$')
[ "${LOGSINK_QUICK:-0}" = 1 ] && skip_deb=()

stage "1/6 release build + ctest (preset default)"
cmake --preset default >/dev/null
cmake --build --preset default -j "$jobs"
ctest --preset default -j "$jobs" "${skip_deb[@]}"
[ "${LOGSINK_QUICK:-0}" = 1 ] && exit 0

stage "2/6 ASan+UBSan build + ctest (preset asan)"
cmake --preset asan >/dev/null
cmake --build --preset asan -j "$jobs"
ctest --preset asan -j "$jobs" -E '^systemd_deb$'  # sanitizer options: CMakePresets.json

stage "3/6 TSan: client threading tests, the daemon's syslog receive thread, the ring's writer thread (preset tsan)"
# The preset leaves out the install test (builds with the system compiler) and
# the fork test: TSan does not support a threaded process that forks and
# starts threads in the child ("starting new threads after multi-threaded
# fork is not supported"); the fork test runs in the release and ASan builds.
cmake --preset tsan >/dev/null
cmake --build --preset tsan -j "$jobs"
ctest --preset tsan -j "$jobs"

stage "4/6 fuzzing (libFuzzer, ${LOGSINK_FUZZ_SECONDS:-60} s per target)"
# Every input ever found is replayed by ctest in stages 1 and 2 (fuzz_*_replay):
# those gate. A new finding of this time-boxed campaign is printed with its
# reproducer but does not fail the run unless LOGSINK_FUZZ_STRICT=1: a random
# search must not decide by chance whether a change lands; what it finds is
# fixed and added to tests/fuzz/corpus/ (see tests/fuzz/run_fuzz.sh).
if ! bash tests/fuzz/run_fuzz.sh "${LOGSINK_FUZZ_SECONDS:-60}"; then
  echo "FUZZ FINDING: see the reproducer above; add it to tests/fuzz/corpus/<target>/ with the fix"
  [ "${LOGSINK_FUZZ_STRICT:-0}" = 1 ] && exit 1
fi

stage "5/6 benchmark smoke runs"
# One Release build serves them all (bench/run.sh configures it without tests).
BUILD_DIR=build/bench-release bash bench/run.sh --smoke
BUILD_DIR=build/bench-release bash bench/compare/run.sh --smoke
BUILD_DIR=build/bench-release bash bench/forward/run.sh --smoke
BUILD_DIR=build/bench-release bash bench/fleet/run.sh --smoke
BUILD_DIR=build/bench-release bash bench/python/run.sh --smoke
BUILD_DIR=build/bench-release bash bench/text/run.sh --smoke
BUILD_DIR=build/bench-release bash bench/visibility/run.sh --smoke
BUILD_DIR=build/bench-release bash bench/writer_thread/run.sh --smoke
BUILD_DIR=build/bench-release bash bench/levels/run.sh --smoke
BUILD_DIR=build/bench-release bash bench/fields/run.sh --smoke
BUILD_DIR=build/bench-release bash bench/storm/run.sh --smoke  # as root (CI is)

stage "6/6 private checkout: plain Release build, ctest, .deb packages, lintian"
JOBS=$jobs bash scripts/check_checkout.sh

stage "all stages passed"
