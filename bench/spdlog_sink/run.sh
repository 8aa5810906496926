#!/usr/bin/env bash
# run.sh: an spdlog program's logging call through logsink's spdlog sink
# (client/include/logsink/spdlog_sink.h) beside spdlog's own async file
# sink, in the same run on this machine:
#   logsink       spdlog::logger + logsink::spdlog_sink_mt -> liblogsink -> logsinkd
#   spdlog_async  spdlog::async_logger (queue 8192, block, one worker) ->
#                 basic_file_sink_mt
# the same SPDLOG_LOGGER_INFO(lg, "user {} logged in from port {}", i, port)
# each way: ns per call (spdlog_sink_bench), the two alternating, CALLS paced
# calls each per repetition (1 call/us in bursts of 256, batches of 64
# timed), the median of the batch means per repetition, medians over REPS
# and their ratio (spdlog_async / logsink).
#
# usage: bench/spdlog_sink/run.sh [--smoke]
#   full: CALLS = 200,000, REPS = 9; writes bench/results/spdlog-sink.txt.
#   --smoke: CALLS = 20,000, REPS = 3, writes
#   bench/results/spdlog-sink-smoke.txt. Environment: BUILD_DIR (default
#   build/compare), CALLS, REPS.
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/lib/daemon.sh
bench_setup spdlog-sink "$@"
if [ $mode = smoke ]; then calls=${CALLS:-20000}; reps=${REPS:-3}; out=bench/results/spdlog-sink-smoke.txt
else calls=${CALLS:-200000}; reps=${REPS:-9}; out=bench/results/spdlog-sink.txt; fi

bench_build "$build" logsinkd daemon_launch spdlog_sink_bench

median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

{
  echo "# bench/spdlog_sink/run.sh ($mode): $calls calls x $reps repetition(s) each way, $(nproc) CPUs, $(date -u +%FT%TZ)"
  echo "# commit: $(git rev-parse --short HEAD 2>/dev/null || echo none) (+ uncommitted); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo '# call: SPDLOG_LOGGER_INFO(lg, "user {} logged in from port {}", i, port)'
  echo '# logsink: spdlog::logger + logsink::spdlog_sink_mt; spdlog_async: async_logger + basic_file_sink_mt'
} >"$out"

d=$tmp/run; mkdir -p "$d"
logsinkd_start "$d/logsinkd.err" --socket "$d/ls.sock" --file "$d/ls.ring" --size 256MiB --log-level warn
"$bin/spdlog_sink_bench" "$d/ls.sock" "$d" "$calls" "$reps" >"$d/time.out"
stop_all
cat "$d/time.out" >>"$out"
tl=$(awk '$3 == "logsink" {print $4}' "$d/time.out" | median)
ta=$(awk '$3 == "spdlog_async" {print $4}' "$d/time.out" | median)

awk -v tl="$tl" -v ta="$ta" -v reps="$reps" 'BEGIN {
  printf "%-26s %12s %14s %8s\n", "", "logsink sink", "spdlog async", "ratio"
  printf "%-26s %12.1f %14.1f %7.2fx\n", "ns/call (median of " reps ")", tl, ta, ta / tl }' | tee -a "$out"
