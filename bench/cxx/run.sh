#!/usr/bin/env bash
# run.sh: the C++ API's call (LS_FMT) beside the C API's (LS_LOG) for the
# same record, in the same run on this machine, and the C++ call split into
# its parts (bench/cxx/cxx_bench.cc): one client into one logsinkd (zstd,
# the default), the variants rotating, CALLS paced calls each per
# repetition; medians over REPS and the ratio cxx / c.
#
# usage: bench/cxx/run.sh [--smoke]
#   full: CALLS = 200,000, REPS = 9; writes bench/results/cxx.txt.
#   --smoke: CALLS = 20,000, REPS = 3; writes bench/results/cxx-smoke.txt.
#   Environment: BUILD_DIR (default build/compare), CALLS, REPS.
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/lib/daemon.sh
bench_setup cxx-bench "$@"
if [ $mode = smoke ]; then calls=${CALLS:-20000}; reps=${REPS:-3}; out=bench/results/cxx-smoke.txt
else calls=${CALLS:-200000}; reps=${REPS:-9}; out=bench/results/cxx.txt; fi

bench_build "$build" logsinkd daemon_launch cxx_bench

median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
{
  echo "# bench/cxx/run.sh ($mode): $calls calls x $reps repetition(s), $(nproc) CPUs, $(date -u +%FT%TZ)"
  echo "# commit: $(git rev-parse --short HEAD 2>/dev/null || echo none) (+ uncommitted); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo '# c:     LS_LOG(c, LS_INFO, "user %s req %d took %.3f s", user, req, secs)'
  echo '# cxx:   LS_FMT(c, LS_INFO, "user {} req {} took {:.3f} s", user, req, secs)'
  echo '# text:  LS_FMT(c, LS_INFO, "user login")   clock: rdtsc (the stamp)'
} >"$out"

d=$tmp/time; mkdir -p "$d"
logsinkd_start "$d/logsinkd.err" --socket "$d/ls.sock" --file "$d/ls.ring" --size 256MiB --log-level warn
"$bin/cxx_bench" "$d/ls.sock" "$calls" "$reps" >"$d/time.out"
stop_all
cat "$d/time.out" >>"$out"
m() { awk -v v="$1" '$3 == v {print $4}' "$d/time.out" | median; }
tc=$(m c); tx=$(m cxx); tt=$(m text); tk=$(m clock)
awk -v tc="$tc" -v tx="$tx" -v tt="$tt" -v tk="$tk" 'BEGIN {
  printf "%-34s %8s\n", "ns per call (median)", "ns"
  printf "%-34s %8.1f\n", "C   LS_LOG, 3 arguments", tc
  printf "%-34s %8.1f   (%.2fx of C)\n", "C++ LS_FMT, the same 3 arguments", tx, tx / tc
  printf "%-34s %8.1f\n", "  clock (rdtsc: the stamp)", tk
  printf "%-34s %8.1f\n", "  publish (text - clock)", tt - tk
  printf "%-34s %8.1f\n", "  copy (cxx - text)", tx - tt }' | tee -a "$out"
