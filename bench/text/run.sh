#!/usr/bin/env bash
# run.sh: the text ways in (PROTOCOL.md, "Text streams"), beside the native
# path, in the same run on this machine. Each way stores the same N messages
# ("user I logged in from port P request R") into a fresh logsinkd:
#   native        liblogsink LS_LOG, 1 sender process (bench/compare's
#                 compare_run, default options), timed by compare_run from
#                 the first call until all N landed
#   logctl send   the N lines on standard input, done when the daemon
#                 acknowledged every line (it has written them)
#   logctl run    `logctl run -- python3 drain.py FILE`: the N lines as a
#                 program's standard output, relayed by logctl; done when
#                 logctl exits, after the daemon acknowledged (has written)
#                 every line
# and prints records/s and bytes per record in the ring (the daemon's
# `bytes` / `records` counters): free text is not indexed, each record
# carries its whole text, where a native record carries the site id and the
# three integers.
#
# usage: bench/text/run.sh [--smoke]
#   full: N = 1,000,000 (TEXT_N), 3 repetitions, medians; writes
#     bench/results/text.txt. --smoke: N = 20,000, 1 repetition, writes
#     bench/results/text-smoke.txt (CI). Environment: BUILD_DIR (default
#     build/compare), TEXT_N, REPS.
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/lib/daemon.sh
bench_setup text-bench "$@"
if [ $mode = smoke ]; then n=${TEXT_N:-20000}; reps=${REPS:-1}; out=bench/results/text-smoke.txt
else n=${TEXT_N:-1000000}; reps=${REPS:-3}; out=bench/results/text.txt; fi

bench_build "$build" logsinkd daemon_launch logctl compare_run

now_ns() { date +%s%N; }
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
counter() {  # dir name: the daemon's counter
  "$bin/logctl" stats --file "$1/ls.ring" --socket "$1/ls.sock" --json |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["daemon"]["counters"][sys.argv[1]])' "$2"
}
start_logsinkd() {  # dir
  logsinkd_start "$1/logsinkd.err" --socket "$1/ls.sock" --file "$1/ls.ring" --size 256MiB \
    --log-level warn
}
# Prints "records/s bytes/record" of the finished run in dir.
result() {  # dir t0 t1
  local recs bytes
  recs=$(counter "$1" records)
  bytes=$(counter "$1" bytes)
  [ "$recs" -ge "$n" ] || { log "only $recs of $n records landed"; return 1; }
  echo "$(( n * 1000000000 / ($3 - $2) )) $(awk -v b="$bytes" -v r="$recs" 'BEGIN {printf "%.1f", b / r}')"
}

awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++) printf "user %d logged in from port %d request %d\n", i % 1000, 1024 + i % 50000, i }' >"$tmp/lines"

# compare_run's own clock (first call until all landed): timing the whole
# process would add its fork, connect wait and final read-back of the ring.
native_run() {  # rep
  local d=$tmp/native$1; mkdir -p "$d"; start_logsinkd "$d"
  "$bin/compare_run" --system logsink --n "$n" --clients 1 --socket "$d/ls.sock" \
    --ring "$d/ls.ring" >"$d/compare.out"
  grep -q ' lost=0 ' "$d/compare.out" || { log "records lost: $(cat "$d/compare.out")"; return 1; }
  local rps recs bytes
  rps=$(sed -n 's/.* e2e_rps=\([0-9]*\).*/\1/p' "$d/compare.out")
  recs=$(counter "$d" records)
  bytes=$(counter "$d" bytes)
  echo "$rps $(awk -v b="$bytes" -v r="$recs" 'BEGIN {printf "%.1f", b / r}')"
  stop_all
}
send_run() {  # rep
  local d=$tmp/send$1; mkdir -p "$d"; start_logsinkd "$d"
  local t0 t1; t0=$(now_ns)
  "$bin/logctl" send --socket "$d/ls.sock" --app bench <"$tmp/lines"
  t1=$(now_ns)
  result "$d" "$t0" "$t1"; stop_all
}
# The program under `logctl run`: writes FILE to its standard output (a
# pipe that logctl relays as a text stream, PROTOCOL.md "Relayed streams")
# and exits; logctl exits once the daemon acknowledged every line.
cat >"$tmp/drain.py" <<'PY'
import sys
sys.stdout.buffer.write(open(sys.argv[1], "rb").read())
PY
run_run() {  # rep
  local d=$tmp/run$1; mkdir -p "$d"; start_logsinkd "$d"
  local t0 t1; t0=$(now_ns)
  "$bin/logctl" run --socket "$d/ls.sock" -- python3 "$tmp/drain.py" "$tmp/lines"
  t1=$(now_ns)
  result "$d" "$t0" "$t1"; stop_all
}

{
  echo "# bench/text/run.sh ($mode): N=$n records, $reps repetition(s), $(nproc) CPUs, $(date -u +%FT%TZ)"
  echo "# message: user I logged in from port P request R (native: LS_LOG with 3 ints)"
} >"$out"
nat=() snd=() run=()
for r in $(seq "$reps"); do
  nat+=("$(native_run "$r")"); log "rep $r: native ${nat[-1]}"
  snd+=("$(send_run "$r")"); log "rep $r: logctl send ${snd[-1]}"
  run+=("$(run_run "$r")"); log "rep $r: logctl run ${run[-1]}"
  echo "rep=$r native='${nat[-1]}' send='${snd[-1]}' run='${run[-1]}'" >>"$out"
done
col() { printf '%s\n' "$@" | awk -v c="$COL" '{print $c}' | median; }
COL=1; rn=$(col "${nat[@]}"); rs=$(col "${snd[@]}"); rr=$(col "${run[@]}")
COL=2; bn=$(col "${nat[@]}"); bs=$(col "${snd[@]}"); br=$(col "${run[@]}")
awk -v rn="$rn" -v rs="$rs" -v rr="$rr" -v bn="$bn" -v bs="$bs" -v br="$br" 'BEGIN {
  printf "median records/s: native LS_LOG %d, logctl send %d, logctl run (stdout) %d\n", rn, rs, rr
  printf "bytes/record in the ring: native %.1f, logctl send %.1f, logctl run %.1f\n", bn, bs, br
  printf "ratios to native: send %.2fx the rate, %.1fx the bytes; run %.2fx the rate, %.1fx the bytes\n", rs / rn, bs / bn, rr / rn, br / bn }' | tee -a "$out"
