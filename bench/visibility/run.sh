#!/usr/bin/env bash
# run.sh: how soon `logctl tail -f` shows a record, and what that costs, as
# logsink is now beside the previous behaviour, in the same run:
#   new       liblogsink's default send_delay_ms (2 ms: the first record after
#             a quiet spell wakes the sender, a steady flow is sent every
#             2 ms) and logsinkd's default flush_min_interval (1 ms: a
#             partial-block write waits 49 times what the last one cost, at
#             least 1 ms, at most flush_interval);
#   previous  send_delay_ms 0 (records wait up to flush_interval_ms, 100 ms,
#             in the client) and flush_min_interval = flush_interval = 100ms
#             (one partial-block write per 100 ms, at once only after a
#             quiet spell): the same binaries, configured as before.
#
# Visibility: bench/compare's compare_latency logs records through liblogsink
# at a steady rate, each carrying its send time, while `logctl tail -f --json`
# follows the ring; the delay is taken when logctl prints the line. Rates: 100
# and 1,000 records/s.
# Cost: end-to-end rate of one sender thread logging N records with default
# options (compare_run, as in bench/compare), and the daemon's CPU per record,
# under both policies.
# The two policies alternate within each repetition; medians are printed with
# the ratio new/previous.
#
# usage: bench/visibility/run.sh [--smoke]
#   full: 5 repetitions, 1,000 records per latency run (300 at 100/s),
#   N = 3,000,000; writes bench/results/visibility.txt. --smoke: 1
#   repetition, 200 (60) records, N = 50,000; writes
#   bench/results/visibility-smoke.txt (CI). Environment: BUILD_DIR (default
#   build/compare), REPS, VIS_N.
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/lib/daemon.sh
bench_setup visibility-bench "$@"
if [ $mode = smoke ]; then
  reps=${REPS:-1}; fast=200; slow=60; n=${VIS_N:-50000}; out=bench/results/visibility-smoke.txt
else
  reps=${REPS:-5}; fast=1000; slow=300; n=${VIS_N:-3000000}; out=bench/results/visibility.txt
fi

bench_build "$build" logsinkd daemon_launch logctl compare_run compare_latency

median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
declare -A delay=([new]=2 [old]=0)
printf '[writer]\nflush_min_interval = "1ms"\n' >"$tmp/new.toml"
printf '[writer]\nflush_min_interval = "100ms"\nflush_interval = "100ms"\n' >"$tmp/old.toml"
start_logsinkd() {  # dir policy
  logsinkd_start "$1/logsinkd.err" --config "$tmp/$2.toml" --socket "$1/ls.sock" \
    --file "$1/ls.ring" --log-level warn
}
# Prints "p50 p99" in ms.
latency_run() {  # policy rate count rep
  local d=$tmp/lat-$1-$2-$4; mkdir -p "$d"; start_logsinkd "$d" "$1"
  local line
  line=$("$bin/compare_latency" --socket "$d/ls.sock" --ring "$d/ls.ring" --logctl "$bin/logctl" \
    --count "$3" --rate "$2" --send-delay-ms "${delay[$1]}") || { log "latency run lost records: $line"; stop_all; return 1; }
  stop_all
  echo "$line" >>"$tmp/raw"
  echo "$(sed -n 's/.* p50_ms=\([0-9.]*\).*/\1/p' <<<"$line") $(sed -n 's/.* p99_ms=\([0-9.]*\).*/\1/p' <<<"$line")"
}
# Prints "records/s daemon_cpu_us_per_record".
e2e_run() {  # policy rep
  local d=$tmp/e2e-$1-$2; mkdir -p "$d"; start_logsinkd "$d" "$1"
  "$bin/compare_run" --system logsink --n "$n" --clients 1 --socket "$d/ls.sock" \
    --ring "$d/ls.ring" --daemon-pid "$LOGSINKD_PID" --send-delay-ms "${delay[$1]}" >"$d/compare.out"
  stop_all
  grep -q ' lost=0 ' "$d/compare.out" || { log "records lost: $(cat "$d/compare.out")"; return 1; }
  cat "$d/compare.out" >>"$tmp/raw"
  local rps cpu
  rps=$(sed -n 's/.* e2e_rps=\([0-9]*\).*/\1/p' "$d/compare.out")
  cpu=$(sed -n 's/.* daemon_cpu_s=\([0-9.]*\).*/\1/p' "$d/compare.out")
  echo "$rps $(awk -v c="$cpu" -v n="$n" 'BEGIN {printf "%.4f", c * 1e6 / n}')"
}

{
  echo "# bench/visibility/run.sh ($mode): $reps repetition(s), $(nproc) CPUs, $(date -u +%FT%TZ)"
  echo "# commit: $(git rev-parse --short HEAD 2>/dev/null || echo none); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# new: send_delay_ms 2, flush_min_interval 1ms; previous: send_delay_ms 0, flush_min_interval = flush_interval = 100ms"
} >"$out"
declare -A res
for r in $(seq "$reps"); do
  for p in new old; do
    res[$p-fast]+="$(latency_run $p 1000 $fast "$r")"$'\n'
    res[$p-slow]+="$(latency_run $p 100 $slow "$r")"$'\n'
    res[$p-e2e]+="$(e2e_run $p "$r")"$'\n'
    log "rep $r $p: 1k/s $(tail -n 2 <<<"${res[$p-fast]}" | head -1), 100/s $(tail -n 2 <<<"${res[$p-slow]}" | head -1), e2e $(tail -n 2 <<<"${res[$p-e2e]}" | head -1)"
  done
done
cat "$tmp/raw" >>"$out"
col() { awk -v c="$2" 'NF {print $c}' <<<"${res[$1]}" | median; }
{
  for k in fast slow; do
    rate=1000; [ $k = slow ] && rate=100
    awk -v r=$rate -v a="$(col new-$k 1)" -v b="$(col new-$k 2)" -v c="$(col old-$k 1)" \
      -v d="$(col old-$k 2)" 'BEGIN {
      printf "visible in tail -f at %d records/s: p50 %.1f ms, p99 %.1f ms (previous: p50 %.1f ms, p99 %.1f ms; p99 %.0fx lower)\n", r, a, b, c, d, d / b }'
  done
  awk -v a="$(col new-e2e 1)" -v b="$(col new-e2e 2)" -v c="$(col old-e2e 1)" -v d="$(col old-e2e 2)" \
    -v n="$n" 'BEGIN {
    printf "end to end, 1 thread, %d records: %.2f M records/s, daemon %.3f us CPU/record (previous: %.2f M/s, %.3f us; rate %.2fx)\n", n, a / 1e6, b, c / 1e6, d, a / c }'
} | tee -a "$out"
