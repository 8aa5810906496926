#!/usr/bin/env bash
# run.sh: does a read through the daemon slow its writers? The
# same N lines go through `logctl send` (done when the daemon acknowledged
# every line) into a fresh logsinkd, alone ("none", the baseline) and, in
# the same run, alternating, while other users read through the daemon
# ("readers": three loops of uid 65534 running `logctl cat` over the whole
# ring, which holds one record of theirs, a loop of `logctl tail -n 1`,
# whose reads of the last k records, k growing until their one record or
# the ring's start, walk back over the whole ring, and one connection that
# asks to follow and never reads). Prints the writer's records/s per repetition,
# the medians and their ratio, the daemon's read counters, and its longest
# loop turn after the first run alone and at the end.
#
# usage: bench/peruser/run.sh [--smoke]   (as root: the readers run as 65534)
#   full: N = 1,000,000 (PERUSER_N), 5 repetitions of each, medians;
#     writes bench/results/peruser.txt. --smoke: N = 20,000, 1 repetition,
#     bench/results/peruser-smoke.txt. Environment: BUILD_DIR (default
#     build/compare), PERUSER_N, REPS, READ_BLOCKS (the daemon's
#     read_blocks_per_turn; default: its default).
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "peruser-bench: run as root (readers run as uid 65534)" >&2; exit 2; }
cd "$(dirname "$0")/../.."
. bench/lib/daemon.sh
bench_setup peruser-bench "$@"
if [ $mode = smoke ]; then n=${PERUSER_N:-20000}; reps=${REPS:-1}; out=bench/results/peruser-smoke.txt
else n=${PERUSER_N:-1000000}; reps=${REPS:-5}; out=bench/results/peruser.txt; fi

chmod 711 "$tmp"
bench_on_exit() { rm -f "$tmp/go"; }  # ends the reader loops
bench_build "$build" logsinkd daemon_launch logctl
cp "$bin/logctl" "$tmp/logctl"  # uid 65534 may not reach the build tree
chmod 755 "$tmp/logctl"

now_ns() { date +%s%N; }
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
counter() { "$bin/logctl" stats --socket "$tmp/s" | awk -F= -v k="  $2" '$1 == k {print $2}'; }

python3 -c "
import random, sys
random.seed(28)
w = sys.stdout.write
for i in range($n): w('user %d logged in from port %d request %d\n' % (random.randrange(1000), random.randrange(65536), i))
" >"$tmp/lines.txt"
log "seed 28, $n lines, $reps repetitions of each"

cfg=()
if [ -n "${READ_BLOCKS:-}" ]; then
  printf '[limits]\nread_blocks_per_turn = %s\n' "$READ_BLOCKS" >"$tmp/logsinkd.toml"
  cfg=(--config "$tmp/logsinkd.toml")
fi
logsinkd_start "$tmp/daemon.log" --socket "$tmp/s" --file "$tmp/r" --size 64MiB "${cfg[@]}"
export LOGSINK_SOCKET=$tmp/s
echo "one record of uid 65534" | setpriv --reuid 65534 --regid 65534 --clear-groups "$tmp/logctl" send

send_rate() {  # records/s of one `logctl send` of the lines
  local s e
  s=$(now_ns)
  "$bin/logctl" send <"$tmp/lines.txt"
  e=$(now_ns)
  echo "$n $s $e" | awk '{printf "%.0f\n", $1 / (($3 - $2) / 1e9)}'
}

: >"$tmp/none"; : >"$tmp/readers"
for rep in $(seq "$reps"); do
  r=$(send_rate); echo "$r" >>"$tmp/none"; log "rep $rep none    $r records/s"
  # The longest loop turn is a maximum since start: taken before any read,
  # it is the writer's alone; at the end, with the reads.
  [ "$rep" = 1 ] && turn_none=$(counter "$tmp" loop_turn_max_us)
  touch "$tmp/go"
  rpids=()
  for _ in 1 2 3; do
    (while [ -e "$tmp/go" ]; do
       setpriv --reuid 65534 --regid 65534 --clear-groups "$tmp/logctl" cat >/dev/null 2>&1 || true
     done) &
    rpids+=($!)
  done
  (while [ -e "$tmp/go" ]; do
     setpriv --reuid 65534 --regid 65534 --clear-groups "$tmp/logctl" tail -n 1 >/dev/null 2>&1 || true
   done) &
  rpids+=($!)
  python3 -c "
import os, socket, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.connect('$tmp/s')
s.send(bytes([4, 0, 0, 0, 7, 0, 0, 1]))  # READ_REQ(OLDEST, 0, FOLLOW), never read
while os.path.exists('$tmp/go'): time.sleep(0.05)
" &
  rpids+=($!)
  r=$(send_rate); echo "$r" >>"$tmp/readers"; log "rep $rep readers $r records/s"
  rm -f "$tmp/go"
  for p in "${rpids[@]}"; do wait "$p" || true; done
done

mn=$(median <"$tmp/none"); mr=$(median <"$tmp/readers")
{
  echo "# bench/peruser/run.sh ($mode): logctl send of $n lines into logsinkd (64 MiB ring),"
  echo "# alone and while uid 65534 reads through the daemon (3 whole-ring cat loops, 1 tail -n 1 loop, 1 follower that never reads)"
  echo "# read_blocks_per_turn ${READ_BLOCKS:-default}; $(date -u +%Y-%m-%dT%H:%MZ) $(uname -r) $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "none    (records/s): $(tr '\n' ' ' <"$tmp/none")median $mn"
  echo "readers (records/s): $(tr '\n' ' ' <"$tmp/readers")median $mr"
  echo "ratio readers/none: $(awk -v a="$mr" -v b="$mn" 'BEGIN {printf "%.2f", a / b}')"
  for k in readers_total readers_refused read_records read_lost read_budget_yields read_blocks_skipped read_socket_waits; do
    echo "$k=$(counter "$tmp" $k)"
  done
  echo "loop_turn_max_us: $turn_none after the first run alone, $(counter "$tmp" loop_turn_max_us) at the end"
} | tee "$out"
