#!/usr/bin/env bash
# test.sh: install what is missing, check the tree's format, build, and run
# every test:
#   0. scripts/check_format.sh (every C/C++ file as clang-format writes it)
#      and scripts/check_layout.sh (CONTRIBUTING.md names every source file),
#   1. a user's and a packager's build, CI's one optimised build: a clone of
#      HEAD in a private (0700) directory whose path has a space, the plain
#      Release build for /usr (-Wall -Wextra -Werror), the whole ctest
#      suite, `cpack -G DEB`, lintian (failing on errors) and hardening-check:
#      scripts/check_checkout.sh,
#   2. the benchmarks' smoke runs (tiny sizes, so they cannot rot) on that
#      same tree,
#   3. the whole suite again under ASan+UBSan (but systemd_deb: a sanitizer
#      finds nothing in a package's files, and it would build the product
#      once more for /usr),
#   4. the tests labelled `threads` (the client library's threads, the
#      daemon's syslog receive thread, the ring's writer thread) under TSan:
#      the preset builds exactly those (target threads_tests),
#   5. each libFuzzer target for LOGSINK_FUZZ_SECONDS (default 30) seconds,
#      two at a time.
# Stage 1 builds and tests HEAD (a clone), the other stages the working
# tree: with uncommitted changes, stage 1 does not test them (a warning says
# so); CI's tree is always a clean clone.
# LOGSINK_QUICK=1 runs stage 0 and the preset default's build and suite in
# this tree instead (a local check of the whole release suite). The fast
# subset is `ctest --preset default -L unit` (CONTRIBUTING.md).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
jobs=$(nproc)
start=$SECONDS
stage() { echo; echo "== $* ($((SECONDS - start)) s so far)"; }

stage "0/5 format and layout (scripts/check_format.sh, scripts/check_layout.sh)"
bash scripts/check_format.sh
bash scripts/check_layout.sh

if [ "${LOGSINK_QUICK:-0}" = 1 ]; then
  stage "1 (quick) release build + ctest (preset default)"
  cmake --preset default >/dev/null
  cmake --build --preset default -j "$jobs"
  ctest --preset default -j "$jobs"
  exit 0
fi

if [ -n "$(git status --porcelain 2>/dev/null)" ]; then
  echo "test.sh: WARNING: uncommitted changes: stage 1 builds and tests HEAD without them" >&2
fi
# The checkout and its build tree live until this script ends: stage 2 uses it.
top=$(mktemp -d) # mode 0700
trap 'rm -rf "$top"' EXIT

stage "1/5 private checkout: plain Release build, ctest, .deb packages, lintian"
LOGSINK_CHECK_TOP=$top JOBS=$jobs bash scripts/check_checkout.sh

stage "2/5 benchmark smoke runs (stage 1's Release tree)"
export BUILD_DIR="$top/check dir/build" BENCH_REUSE_BUILD=1
bash bench/run.sh --smoke
bash bench/compare/run.sh --smoke
bash bench/forward/run.sh --smoke
bash bench/fleet/run.sh --smoke
bash bench/python/run.sh --smoke
bash bench/text/run.sh --smoke
bash bench/visibility/run.sh --smoke
bash bench/writer_thread/run.sh --smoke
bash bench/levels/run.sh --smoke
bash bench/fields/run.sh --smoke
bash bench/storm/run.sh --smoke  # as root (CI is)
unset BUILD_DIR BENCH_REUSE_BUILD

stage "3/5 ASan+UBSan build + ctest (preset asan)"
cmake --preset asan >/dev/null
cmake --build --preset asan -j "$jobs"
ctest --preset asan -j "$jobs" -E '^systemd_deb$'  # sanitizer options: CMakePresets.json

stage "4/5 TSan: the tests labelled threads (preset tsan)"
# The preset leaves out the fork test: TSan does not support a threaded
# process that forks and starts threads in the child ("starting new threads
# after multi-threaded fork is not supported"); the fork test runs in the
# release and ASan builds.
cmake --preset tsan >/dev/null
cmake --build --preset tsan -j "$jobs"
ctest --preset tsan -j "$jobs"

stage "5/5 fuzzing (libFuzzer, ${LOGSINK_FUZZ_SECONDS:-30} s per target, two at a time)"
# Every input ever found is replayed by ctest in stages 1 and 3 (fuzz_*_replay):
# those gate. A new finding of this time-boxed campaign is printed with its
# reproducer but does not fail the run unless LOGSINK_FUZZ_STRICT=1: a random
# search must not decide by chance whether a change lands; what it finds is
# fixed and added to tests/fuzz/corpus/ (see tests/fuzz/run_fuzz.sh).
if ! bash tests/fuzz/run_fuzz.sh "${LOGSINK_FUZZ_SECONDS:-30}"; then
  echo "FUZZ FINDING: see the reproducer above; add it to tests/fuzz/corpus/<target>/ with the fix"
  [ "${LOGSINK_FUZZ_STRICT:-0}" = 1 ] && exit 1
fi

stage "all stages passed"
