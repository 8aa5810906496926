#!/usr/bin/env bash
# run.sh: builds the benchmarks (Release, in build/bench-release) and runs all
# of them (ring_bench, client_bench, logctl_bench, codec_bench,
# retention_bench, find_bench, render_bench), each with its
# baseline in the same run; the whole output goes to
# bench/results/latest.txt (and the terminal).
#
# usage: bench/run.sh [--smoke]
#   --smoke   tiny sizes and one repetition, for CI (< 60 s once built)
#   BUILD_DIR=dir overrides the build directory, BUILD_TYPE the CMake build type
#   (default Release), JOBS=n the build's -j (default 2), BENCH_REUSE_BUILD=1
#   a BUILD_DIR configured already (its configuration is kept).
set -euo pipefail
cd "$(dirname "$0")/.."
smoke=()
[ "${1:-}" = --smoke ] && smoke=(--smoke)
build=${BUILD_DIR:-build/bench-release}
build_type=${BUILD_TYPE:-Release}
out=bench/results/latest.txt
[ ${#smoke[@]} -gt 0 ] && out=bench/results/smoke.txt
mkdir -p bench/results

# BENCH_REUSE_BUILD=1: BUILD_DIR is configured already and is used as it is
# (CI: its checkout's Release tree, where the tests ran); its targets are built.
if [ "${BENCH_REUSE_BUILD:-0}" != 1 ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="$build_type" -DLOGSINK_WERROR=ON -DLOGSINK_BUILD_TESTS=OFF >/dev/null
fi
# ring_bench and codec_bench need only storage; client_bench needs the client
# library, the daemon and spdlog; logctl_bench needs logctl. A part that does
# not build is reported and skipped, the others still run.
build_ok() { ninja -C "$build" -j "${JOBS:-2}" "$@" >"$build/bench-build-$1.log" 2>&1; }
built_ring=0 built_client=0 built_logctl=0 built_codec=0
build_ok ring_bench ring_fill && built_ring=1
build_ok client_bench logsinkd && built_client=1
build_ok logctl ring_fill && built_logctl=1
build_ok codec_bench && built_codec=1
built_retention=0
build_ok retention_bench && built_retention=1
built_find=0
build_ok find_bench logctl && built_find=1
built_render=0
build_ok render_bench && built_render=1
# codec_bench exits non-zero when a record read back differs from what was
# written; the group below runs in a subshell, so it leaves this marker.
codec_failed=$build/codec_bench.failed
rm -f "$codec_failed"
for part in ring_bench client_bench logctl codec_bench retention_bench find_bench render_bench; do
  log=$build/bench-build-$part.log
  if grep -q "FAILED" "$log" 2>/dev/null; then
    echo "run.sh: building $part failed, see $log:" >&2
    grep -m5 -E "error|FAILED" "$log" >&2 || true
  fi
done

# part TITLE NAME LOG BUILT CHECKED CMD...: CMD under "## TITLE", or NOT RUN
# when it was not built (see bench-build-LOG.log); CHECKED=1: a failure is
# printed and leaves the marker, and the next part still runs.
part() {
  local title=$1 name=$2 log=$3 built=$4 checked=$5
  shift 5
  echo
  echo "## $title"
  if [ "$built" != 1 ]; then
    echo "$name: NOT RUN (build failed, see $build/bench-build-$log.log)"
  elif [ "$checked" = 1 ]; then
    "$@" || { echo "$name: FAILED (exit $?)"; touch "$codec_failed"; }
  else
    "$@"
  fi
}
{
  echo "# logsink benchmarks ($(date -u +%Y-%m-%dT%H:%M:%SZ), ${smoke[*]:-full})"
  echo "# host: $(uname -srm), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  echo "# build: $build_type in $build; load average now: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# commit: $(git rev-parse --short HEAD 2>/dev/null || echo none)$(git diff --quiet 2>/dev/null || echo ' (dirty)')"
  part "ring_bench (RingWriter vs Logger4)" ring_bench ring_bench $built_ring 0 \
    "$build/bin/ring_bench" "${smoke[@]}"
  part "client_bench (LS_LOG vs spdlog async)" client_bench client_bench $built_client 0 \
    "$build/bin/client_bench" --bin-dir "$build/bin" "${smoke[@]}"
  part "logctl_bench (logctl vs tail and cat)" logctl_bench logctl $built_logctl 0 \
    bash bench/logctl_bench.sh "$build/bin" "${smoke[@]}"
  part "codec_bench (compressed blocks)" codec_bench codec_bench $built_codec 1 \
    "$build/bin/codec_bench" "${smoke[@]}"
  part "retention_bench (history under a flood)" retention_bench retention_bench $built_retention 1 \
    "$build/bin/retention_bench" "${smoke[@]}"
  part "find_bench (finding records in a long history)" find_bench find_bench $built_find 1 \
    "$build/bin/find_bench" --bin-dir "$build/bin" "${smoke[@]}"
  part "render_bench (brace formats vs printf)" render_bench render_bench $built_render 1 \
    "$build/bin/render_bench" "${smoke[@]}"
} 2>&1 | tee "$out"
echo "results written to $out"
# A part that could not be built fails the run (CI sees it), after the others ran.
if [ $built_ring = 0 ] || [ $built_client = 0 ] || [ $built_logctl = 0 ] || [ $built_codec = 0 ] ||
  [ $built_retention = 0 ] || [ $built_find = 0 ] || [ $built_render = 0 ]; then
  echo "run.sh: some benchmarks were not built (see above)" >&2
  exit 1
fi
if [ -e "$codec_failed" ]; then
  echo "run.sh: codec_bench, retention_bench, find_bench or render_bench failed (records read back differ, a" \
    "filtered read differs, or I/O; see above)" >&2
  exit 1
fi
