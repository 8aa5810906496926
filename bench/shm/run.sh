#!/usr/bin/env bash
# run.sh: what reading a gone client's shared buffers costs the daemon's
# loop. K processes (shm_clients) each fill every slot of the region
# logsinkd hands them (the default [limits] geometry: 4 slots of 256 KiB)
# and exit: with "drain" they send nothing, so logsinkd reads every record
# from the regions after the processes are gone; with "socket" (the
# baseline) they send the same records in RECORDS_AT frames first. A fresh
# logsinkd (64 MiB ring, zstd) per run, the two alternating in the same
# sitting. Prints per mode the medians of the time from the first fork to
# the last record stored, the records per second, and the longest turn of
# the loop (loop_turn_max_us), with the ratios to the baseline.
#
# usage: bench/shm/run.sh [--smoke]
#   full: 8 clients, 5 repetitions, bench/results/shm.txt;
#   --smoke: 2 clients, 1 repetition, shm-smoke.txt.
#   Environment: BUILD_DIR (default build/compare), CLIENTS, REPS.
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/lib/daemon.sh
bench_setup shm-bench "$@"
if [ $mode = smoke ]; then k=${CLIENTS:-2}; reps=${REPS:-1}; out=bench/results/shm-smoke.txt
else k=${CLIENTS:-8}; reps=${REPS:-5}; out=bench/results/shm.txt; fi
bench_build "$build" logsinkd daemon_launch shm_clients

median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
modes="socket drain"
# Prints "seconds records_per_s turn_max_us".
run() {  # mode rep
  local d=$tmp/$1-$2; mkdir -p "$d"
  logsinkd_start "$d/logsinkd.err" --socket "$d/ls.sock" --file "$d/ls.ring" --size 64MiB \
    --log-level warn
  "$bin/shm_clients" --socket "$d/ls.sock" --mode "$1" --clients "$k" >"$d/out"
  stop_all
  echo "$1 $(cat "$d/out")" >>"$tmp/raw"
  awk '{for (i = 1; i <= NF; i++) {split($i, kv, "="); v[kv[1]] = kv[2]}}
       END {printf "%.4f %d %d\n", v["stored_s"], v["records"] / v["stored_s"], v["turn_max_us"]}' "$d/out"
}

{
  echo "# bench/shm/run.sh ($mode): $k clients, $reps repetition(s), $(nproc) CPUs, $(date -u +%FT%TZ)"
  echo "# commit: $(git rev-parse --short HEAD 2>/dev/null || echo none); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$out"
declare -A res
for r in $(seq "$reps"); do
  for m in $modes; do
    res[$m]+="$(run "$m" "$r")"$'\n'
    log "rep $r $m: $(tail -n 2 <<<"${res[$m]}" | head -1)"
  done
done
cat "$tmp/raw" >>"$out"
col() { awk -v c="$2" 'NF {print $c}' <<<"${res[$1]}" | median; }
{
  printf "%-8s %16s %20s %18s\n" mode "stored in ms" "M records/s" "turn max ms"
  for m in $modes; do
    awk -v m="$m" -v a="$(col $m 1)" -v b="$(col $m 2)" -v c="$(col $m 3)" \
      -v a0="$(col socket 1)" -v b0="$(col socket 2)" -v c0="$(col socket 3)" 'BEGIN {
      printf "%-8s %9.1f (%.2fx) %12.2f (%.2fx) %10.2f (%.2fx)\n", m, a * 1000, a / a0, b / 1e6, b / b0, c / 1000, c / c0 }'
  done
} | tee -a "$out"
