#!/usr/bin/env bash
# run.sh: do the daemon's other jobs make applications wait? A paced
# liblogsink program (storm_logger: 2,000 records/s, every 100th a warning,
# which is in the socket when its call returns) and root's `logctl send` of
# one line every 100 ms (done when the daemon acknowledged it) run against
# a fresh logsinkd, quiet (the baseline) and, alternating in the same run,
# during a storm from uid 65534: a reader storm (three whole-ring
# `logctl cat` loops and a `logctl tail -n 1` loop through the daemon), a
# syslog flood (datagrams flat out into the syslog socket) and an error
# flood (`logctl send -p err` of distinct lines, in a loop). Prints per
# phase the logger's call times (p50, p99 and the longest, info and
# warning calls apart), root's send times (median, longest) and, without
# the process start, the daemon's part of such a send (storm_logger's
# root sender: connect to acknowledgment, every 100 ms), the
# medians over the repetitions and the storm/quiet ratios, and the
# daemon's longest loop turn (loop_turn_max_us) after the first quiet
# phase and at the end, and the most CPU the loop used in one turn
# (loop_turn_max_cpu_us: near the longest turn, the loop held itself; far
# below it, it waited for a core or the disk). Before the first phase root sends the flood's
# lines once (warm-up: the ring's first blocks, the dictionary).
#
# usage: bench/storm/run.sh [--smoke]   (as root: the storm runs as 65534)
#   full: 10 s phases, 3 repetitions of each; writes
#     bench/results/storm.txt. --smoke: 2 s phases, 1 repetition,
#     bench/results/storm-smoke.txt. Environment: BUILD_DIR (default
#     build/compare), SECONDS_PER_PHASE, REPS, STORM (the storm's parts:
#     default "readers syslog errors"; one part alone tells which job the
#     waits come from), STORM_CONFIG (a logsinkd.toml for the daemon: e.g.
#     [limits] read_slice = "1s" for the loop without per-connection
#     slices).
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "storm-bench: run as root (the storm runs as uid 65534)" >&2; exit 2; }
cd "$(dirname "$0")/../.."
. bench/lib/daemon.sh
bench_setup storm-bench "$@"
if [ $mode = smoke ]; then secs=${SECONDS_PER_PHASE:-2}; reps=${REPS:-1}; out=bench/results/storm-smoke.txt
else secs=${SECONDS_PER_PHASE:-10}; reps=${REPS:-3}; out=bench/results/storm.txt; fi

chmod 711 "$tmp"
bench_on_exit() { rm -f "$tmp/go"; }  # ends the storm's loops
bench_build "$build" logsinkd daemon_launch logctl storm_logger
cp "$bin/logctl" "$tmp/logctl"  # uid 65534 may not reach the build tree
chmod 755 "$tmp/logctl"
storm=${STORM:-readers syslog errors}
has() { [[ " $storm " == *" $1 "* ]]; }
as_nobody() { setpriv --reuid 65534 --regid 65534 --clear-groups "$@"; }
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
counter() { "$bin/logctl" stats --socket "$tmp/s" | awk -F= -v k="  $1" '$1 == k {print $2}'; }

python3 -c "
import random, sys
random.seed(42)
w = sys.stdout.write
for i in range(200000): w('disk %d failed at sector %d request %d\n' % (random.randrange(64), random.randrange(1 << 30), i))
" >"$tmp/errors.txt"
chmod 644 "$tmp/errors.txt"
log "seed 42, $secs s phases, $reps repetitions of each, storm: $storm"

logsinkd_start "$tmp/daemon.log" --socket "$tmp/s" --file "$tmp/r" --size 64MiB \
  --syslog-socket "$tmp/syslog" ${STORM_CONFIG:+--config "$STORM_CONFIG"}
export LOGSINK_SOCKET=$tmp/s
# Warm up: the ring's first blocks and its compression dictionary (trained
# off the loop, written into the file once) before anything is timed.
"$bin/logctl" send <"$tmp/errors.txt"
turn_warm=$(counter loop_turn_max_us)

# One phase: the logger and root's sends for $secs seconds. Appends
# "info_p50 info_p99 info_max warn_p50 warn_p99 warn_max send_median send_max
# ack_median ack_max" (ns, ns, us, ns, ns, us, ms, ms, ms, ms) to $1: ack_* is
# storm_logger's root sender, timed from connect to acknowledgment.
phase() {
  local res=$1 lp
  "$bin/storm_logger" --socket "$tmp/s" --seconds "$secs" --send-every-ms 100 >"$tmp/logger.out" &
  lp=$!
  : >"$tmp/sends"
  while kill -0 "$lp" 2>/dev/null; do
    local s e
    s=$(date +%s%N)
    echo "root line at $s" | "$bin/logctl" send
    e=$(date +%s%N)
    echo $(((e - s) / 1000)) >>"$tmp/sends"
    sleep 0.1
  done
  wait "$lp"
  local l; l=$(cat "$tmp/logger.out")
  get() { echo "$l" | tr ' ' '\n' | awk -F= -v k="$1" '$1 == k {print $2}'; }
  echo "$(get info_p50_ns) $(get info_p99_ns) $(get info_max_us) $(get warn_p50_ns)" \
    "$(get warn_p99_ns) $(get warn_max_us)" \
    "$(awk '{printf "%.1f\n", $1 / 1000}' "$tmp/sends" | median)" \
    "$(sort -n "$tmp/sends" | tail -1 | awk '{printf "%.1f", $1 / 1000}')" \
    "$(awk -v v="$(get send_p50_us)" 'BEGIN {printf "%.2f", v / 1000}')" \
    "$(awk -v v="$(get send_max_us)" 'BEGIN {printf "%.2f", v / 1000}')" >>"$res"
  [ "$(get dropped)" = 0 ] || log "the logger dropped $(get dropped) records"
  [ "$(get send_failed)" = 0 ] || log "$(get send_failed) of root's timed sends failed (not timed)"
}

: >"$tmp/quiet"; : >"$tmp/storm"
for rep in $(seq "$reps"); do
  phase "$tmp/quiet"; log "rep $rep quiet $(tail -1 "$tmp/quiet")"
  [ "$rep" = 1 ] && turn_quiet=$(counter loop_turn_max_us)
  touch "$tmp/go"
  spids=()
  if has readers; then
    for _ in 1 2 3; do
      (while [ -e "$tmp/go" ]; do as_nobody "$tmp/logctl" cat >/dev/null 2>&1 || true; done) &
      spids+=($!)
    done
    (while [ -e "$tmp/go" ]; do as_nobody "$tmp/logctl" tail -n 1 >/dev/null 2>&1 || true; done) &
    spids+=($!)
  fi
  if has syslog; then
    as_nobody /usr/bin/python3 -c "
import os, socket
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.setblocking(False)
i = 0
while os.path.exists('$tmp/go'):
    i += 1
    try: s.sendto(b'<11>storm[1]: flood datagram %d' % i, '$tmp/syslog')
    except (BlockingIOError, ConnectionRefusedError, FileNotFoundError): pass
" &
    spids+=($!)
  fi
  if has errors; then
    (while [ -e "$tmp/go" ]; do as_nobody "$tmp/logctl" send -p err <"$tmp/errors.txt" 2>/dev/null || true; done) &
    spids+=($!)
  fi
  phase "$tmp/storm"; log "rep $rep storm $(tail -1 "$tmp/storm")"
  rm -f "$tmp/go"
  for p in "${spids[@]}"; do wait "$p" || true; done
done

col() { awk -v c="$2" '{print $c}' "$1" | median; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}'; }
{
  echo "# bench/storm/run.sh ($mode): a paced liblogsink logger (2,000 records/s, every 100th a warning) and root's"
  echo "# logctl send of one line every 100 ms, quiet and during a storm of uid 65534 (3 whole-ring cat loops and a"
  echo "# tail -n 1 loop through the daemon, a syslog datagram flood, logctl send -p err of 200,000 lines in a loop);"
  echo "# storm parts: $storm; config: ${STORM_CONFIG:-none}; $secs s phases, $reps each, 64 MiB ring; $(date -u +%Y-%m-%dT%H:%MZ) $(uname -r) $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# columns: info call p50 ns, p99 ns, max us; warning call p50 ns, p99 ns, max us; root send median ms, max ms;"
  echo "#   root's text stream, connect to acknowledgment (in-process, every 100 ms), median ms, max ms"
  echo "quiet: $(paste -sd'|' "$tmp/quiet")"
  echo "storm: $(paste -sd'|' "$tmp/storm")"
  for c in 2:info_p99_ns 3:info_max_us 5:warn_p99_ns 6:warn_max_us 7:send_median_ms 8:send_max_ms \
    9:ack_median_ms 10:ack_max_ms; do
    q=$(col "$tmp/quiet" "${c%%:*}"); s=$(col "$tmp/storm" "${c%%:*}")
    echo "${c#*:}: quiet $q, storm $s (median of repetitions), storm/quiet $(ratio "$s" "$q")"
  done
  for k in syslog_received readers_total read_budget_yields records evicted_err rescued; do
    echo "$k=$(counter $k)"
  done
  echo "loop_turn_max_us: $turn_warm after the warm-up, ${turn_quiet:-?} after the first quiet phase, $(counter loop_turn_max_us) at the end"
  echo "loop_turn_max_cpu_us: $(counter loop_turn_max_cpu_us) at the end (the loop's own CPU in one turn)"
} | tee "$out"
