#!/usr/bin/env bash
# run.sh: what the writer thread ([ring] write_queue) buys. One thread of
# compare_run logs N records flat out into a fresh logsinkd (64 MiB ring,
# zstd) with the loop writing (write_queue = "0", the baseline), with a
# 4 MiB queue and with a 64 MiB one (which holds the burst), alternating
# in the same run, and with compression = "none" beside them. Prints per
# setting the medians of the program's cost per logging call (ns, until
# its last call returned: what an application waits), the end-to-end rate
# (records on disk per second), the daemon's CPU per record, the longest
# turn of its loop (loop_turn_max_us) and the times the loop waited for a
# full queue, and each one's ratio to the baseline.
#
# usage: bench/writer_thread/run.sh [--smoke]
#   full: 1 M records, 5 repetitions, bench/results/writer-thread.txt;
#   --smoke: 100,000 records, 1 repetition, writer-thread-smoke.txt.
#   Environment: BUILD_DIR (default build/compare), N, REPS.
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/lib/daemon.sh
bench_setup writer-thread-bench "$@"
if [ $mode = smoke ]; then n=${N:-100000}; reps=${REPS:-1}; out=bench/results/writer-thread-smoke.txt
else n=${N:-1000000}; reps=${REPS:-5}; out=bench/results/writer-thread.txt; fi
bench_build "$build" logsinkd daemon_launch logctl compare_run

median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
settings="loop q4MiB q64MiB none"
declare -A cfg=(
  [loop]='compression = "zstd"\nwrite_queue = "0"'
  [q4MiB]='compression = "zstd"\nwrite_queue = "4MiB"'
  [q64MiB]='compression = "zstd"\nwrite_queue = "64MiB"'
  [none]='compression = "none"\nwrite_queue = "0"')
# Prints "ns_per_call records_per_s daemon_us_per_record turn_max_us queue_waits".
run() {  # setting rep
  local d=$tmp/$1-$2; mkdir -p "$d"
  printf "[ring]\n${cfg[$1]}\n" >"$d/c.toml"
  logsinkd_start "$d/logsinkd.err" --config "$d/c.toml" --socket "$d/ls.sock" --file "$d/ls.ring" \
    --size 64MiB --log-level warn
  "$bin/compare_run" --system logsink --n "$n" --clients 1 --socket "$d/ls.sock" \
    --ring "$d/ls.ring" --daemon-pid "$LOGSINKD_PID" >"$d/compare.out"
  LOGSINK_SOCKET=$d/ls.sock "$bin/logctl" stats >"$d/stats.out"
  stop_all
  grep -q ' lost=0 ' "$d/compare.out" || { log "records lost: $(cat "$d/compare.out")"; return 1; }
  echo "$1 $(cat "$d/compare.out")" >>"$tmp/raw"
  local acc rps cpu turn waits
  acc=$(sed -n 's/.* accepted_s=\([0-9.]*\).*/\1/p' "$d/compare.out")
  rps=$(sed -n 's/.* e2e_rps=\([0-9]*\).*/\1/p' "$d/compare.out")
  cpu=$(sed -n 's/.* daemon_cpu_s=\([0-9.]*\).*/\1/p' "$d/compare.out")
  turn=$(awk '$1 == "loop_turn_max_us=" || $1 ~ /^loop_turn_max_us=/ {sub(/.*=/, "", $1); print $1}' "$d/stats.out")
  waits=$(awk '$1 ~ /^write_queue_waits=/ {sub(/.*=/, "", $1); print $1}' "$d/stats.out")
  awk -v a="$acc" -v r="$rps" -v c="$cpu" -v n="$n" -v t="${turn:-0}" -v w="${waits:-0}" \
    'BEGIN {printf "%.1f %d %.4f %d %d\n", a * 1e9 / n, r, c * 1e6 / n, t, w}'
}

{
  echo "# bench/writer_thread/run.sh ($mode): $n records, $reps repetition(s), $(nproc) CPUs, $(date -u +%FT%TZ)"
  echo "# commit: $(git rev-parse --short HEAD 2>/dev/null || echo none); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$out"
declare -A res
for r in $(seq "$reps"); do
  for s in $settings; do
    res[$s]+="$(run "$s" "$r")"$'\n'
    log "rep $r $s: $(tail -n 2 <<<"${res[$s]}" | head -1)"
  done
done
cat "$tmp/raw" >>"$out"
col() { awk -v c="$2" 'NF {print $c}' <<<"${res[$1]}" | median; }
{
  printf "%-8s %12s %14s %16s %14s %12s\n" setting "ns/call" "M records/s" "daemon us/rec" "turn max ms" "queue waits"
  for s in $settings; do
    awk -v s="$s" -v a="$(col $s 1)" -v b="$(col $s 2)" -v c="$(col $s 3)" -v d="$(col $s 4)" \
      -v e="$(col $s 5)" -v a0="$(col loop 1)" -v b0="$(col loop 2)" 'BEGIN {
      printf "%-8s %7.1f (%.2fx) %8.2f (%.2fx) %16.3f %14.1f %12d\n", s, a, a / a0, b / 1e6, b / b0, c, d / 1000, e }'
  done
} | tee -a "$out"
