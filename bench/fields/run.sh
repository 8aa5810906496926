#!/usr/bin/env bash
# run.sh: named fields (LS_FIELDS) beside the same values in the message,
# in the same run on this machine:
#   msg     LS_LOG(c, LS_INFO, "user login user=%s req=%d", user, req)
#   fields  LS_LOG(c, LS_INFO, "user login" LS_FIELDS("user=%s req=%d"), user, req)
# 1. ns per call (fields_bench time): one client into one logsinkd, the two
#    variants alternating, CALLS paced calls each per repetition (1 call/us in
#    bursts of 256 that fit the thread buffer, batches of 64 timed), median
#    of the batch means per repetition, medians over REPS and their ratio.
# 2. bytes per record in the ring (fields_bench write): K records of each
#    variant into a fresh logsinkd each, with compression = "none" and "zstd"
#    (the default); the daemon's counters: entry bytes = `bytes` / `records`;
#    stored bytes per record with zstd = entry bytes x
#    sealed_stored_bytes / sealed_raw_bytes (sealed blocks only).
#
# usage: bench/fields/run.sh [--smoke]
#   full: CALLS = 200,000, REPS = 9, K = 1,000,000; writes
#     bench/results/fields.txt. --smoke: CALLS = 20,000, REPS = 3,
#     K = 50,000, writes bench/results/fields-smoke.txt (CI). Environment:
#     BUILD_DIR (default build/compare), CALLS, REPS, K.
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/lib/daemon.sh
bench_setup fields-bench "$@"
if [ $mode = smoke ]; then calls=${CALLS:-20000}; reps=${REPS:-3}; k=${K:-50000}; out=bench/results/fields-smoke.txt
else calls=${CALLS:-200000}; reps=${REPS:-9}; k=${K:-1000000}; out=bench/results/fields.txt; fi

bench_build "$build" logsinkd daemon_launch logctl fields_bench

median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
start_logsinkd() {  # dir compression
  printf '[ring]\ncompression = "%s"\n' "$2" >"$1/c.toml"
  logsinkd_start "$1/logsinkd.err" --config "$1/c.toml" --socket "$1/ls.sock" --file "$1/ls.ring" \
    --size 256MiB --log-level warn
}
counters() {  # dir: "records bytes sealed_raw_bytes sealed_stored_bytes"
  "$bin/logctl" stats --file "$1/ls.ring" --socket "$1/ls.sock" --json | python3 -c '
import json, sys
c = json.load(sys.stdin)["daemon"]["counters"]
print(c["records"], c["bytes"], c["sealed_raw_bytes"], c["sealed_stored_bytes"])'
}

{
  echo "# bench/fields/run.sh ($mode): $calls calls x $reps repetition(s) timed, $k records per ring, $(nproc) CPUs, $(date -u +%FT%TZ)"
  echo "# commit: $(git rev-parse --short HEAD 2>/dev/null || echo none) (+ uncommitted); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo '# msg:    LS_LOG(c, LS_INFO, "user login user=%s req=%d", user, req)'
  echo '# fields: LS_LOG(c, LS_INFO, "user login" LS_FIELDS("user=%s req=%d"), user, req)'
} >"$out"

# 1. ns per call.
d=$tmp/time; mkdir -p "$d"; start_logsinkd "$d" zstd
"$bin/fields_bench" time "$d/ls.sock" "$calls" "$reps" >"$d/time.out"
stop_all
cat "$d/time.out" >>"$out"
tm=$(awk '$3 == "msg" {print $4}' "$d/time.out" | median)
tf=$(awk '$3 == "fields" {print $4}' "$d/time.out" | median)

# 2. bytes per record.
declare -A bytes
for comp in none zstd; do
  for v in msg fields; do
    d=$tmp/$comp-$v; mkdir -p "$d"; start_logsinkd "$d" "$comp"
    "$bin/fields_bench" write "$d/ls.sock" "$v" "$k"
    read -r recs b raw stored < <(counters "$d")
    stop_all
    [ "$recs" -ge "$((k / 64 * 64))" ] || { log "$comp $v: only $recs records landed"; exit 1; }
    echo "bytes $comp $v records=$recs bytes=$b sealed_raw_bytes=$raw sealed_stored_bytes=$stored" >>"$out"
    bytes[$comp-$v]=$(awk -v r="$recs" -v b="$b" -v raw="$raw" -v s="$stored" -v c="$comp" \
      'BEGIN {e = b / r; if (c == "zstd") e = raw > 0 ? e * s / raw : 0; printf "%.2f", e}')
  done
done

awk -v tm="$tm" -v tf="$tf" -v nm="${bytes[none-msg]}" -v nf="${bytes[none-fields]}" \
  -v zm="${bytes[zstd-msg]}" -v zf="${bytes[zstd-fields]}" 'BEGIN {
  printf "%-22s %10s %10s %8s\n", "", "msg", "fields", "ratio"
  printf "%-22s %10.1f %10.1f %7.2fx\n", "ns/call (median)", tm, tf, tf / tm
  printf "%-22s %10.1f %10.1f %7.2fx\n", "B/record, none", nm, nf, nf / nm
  printf "%-22s %10.1f %10.1f %7.2fx\n", "B/record, zstd", zm, zf, (zm > 0 ? zf / zm : 0) }' | tee -a "$out"
