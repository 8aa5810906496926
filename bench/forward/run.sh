#!/usr/bin/env bash
# run.sh: logsink-forward's rates, end to end from LS_LOG to acknowledged by
# the destination, beside rsyslog relaying the same records itself, in the
# same run on this machine:
#   logsink -> NATS   LS_LOG (liblogsink, 1 sender process) -> logsinkd ->
#                     ring -> logsink-forward -> nats-server -js (1 node);
#                     done when the forwarder's cursor file says N
#   logsink -> RELP   same, logsink-forward -> rsyslogd imrelp -> a file
#   rsyslog relay     syslog(3)-style datagrams -> rsyslogd A (imuxsock) ->
#                     omrelp -> rsyslogd B (imrelp) -> a file; done when the
#                     file has N lines
# The message is bench/compare's ("user %d logged in from port %d request %d")
# sent by bench/compare's compare_run.
#
# usage: bench/forward/run.sh [--smoke]
#   full: N = 1,000,000 (FORWARD_N), 3 repetitions, medians; writes
#     bench/results/forward.txt. --smoke: N = 20,000, 1 repetition, writes
#     bench/results/forward-smoke.txt (CI).
#   Environment: BUILD_DIR (default build/compare), FORWARD_N, REPS.
# Needs nats-server, rsyslog and rsyslog-relp (scripts/deps.sh installs them).
# Every server runs in a private temp dir on loopback ports and is stopped by PID.
set -euo pipefail
cd "$(dirname "$0")/../.."
mode=full
[ "${1:-}" = --smoke ] && mode=smoke
build=${BUILD_DIR:-build/compare}
if [ $mode = smoke ]; then n=${FORWARD_N:-20000}; reps=${REPS:-1}; out=bench/results/forward-smoke.txt
else n=${FORWARD_N:-1000000}; reps=${REPS:-3}; out=bench/results/forward.txt; fi
mkdir -p bench/results

tmp=$(mktemp -d /tmp/logsink-fwdbench.XXXXXX)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
log() { echo "forward-bench: $*" >&2; }

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOGSINK_WERROR=ON \
  -DLOGSINK_BUILD_TESTS=OFF >/dev/null
ninja -C "$build" -j "${JOBS:-2}" logsinkd logsink-forward compare_run >"$tmp/build.log" 2>&1 ||
  { cat "$tmp/build.log" >&2; exit 1; }
bin=$build/bin

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
now_ns() { date +%s%N; }
# until "$@" succeeds, every 10 ms, at most $limit seconds
wait_for() {
  local limit=$1; shift
  local end=$(( $(date +%s) + limit ))
  until "$@"; do
    [ "$(date +%s)" -lt $end ] || return 1
    sleep 0.01
  done
}
cursor_at() { [ -f "$1" ] && [ "$(awk '{print $4}' "$1")" = "$2" ]; }
lines_at() { [ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ]; }
tcp_up() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

start_logsinkd() {  # dir
  "$bin/logsinkd" --socket "$1/ls.sock" --file "$1/ls.ring" --size 256MiB --log-level warn \
    2>"$1/logsinkd.err" &
  pids+=($!)
  wait_for 10 test -S "$1/ls.sock"
}
start_rsyslog() {  # dir conf-text
  mkdir -p "$1/work"
  printf '%s\n' "global(workDirectory=\"$1/work\")" "$2" >"$1/rsyslog.conf"
  rsyslogd -n -f "$1/rsyslog.conf" -i "$1/rsyslog.pid" 2>"$1/rsyslogd.err" &
  pids+=($!)
}
stop_all() {
  local p
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  pids=()
}

# One logsink run: destination args, the servers already up. Prints records/s.
run_logsink() {  # dir forward-args...
  local d=$1; shift
  start_logsinkd "$d"
  "$bin/logsink-forward" --file "$d/ls.ring" --cursor-file "$d/cursor" --log-level warn "$@" \
    2>"$d/forward.err" &
  pids+=($!)
  wait_for 10 test -f "$d/cursor.status"
  local t0 t1
  t0=$(now_ns)
  "$bin/compare_run" --system logsink --n "$n" --clients 1 --socket "$d/ls.sock" \
    --ring "$d/ls.ring" >"$d/compare.out"
  wait_for 600 cursor_at "$d/cursor" "$n" || { log "forwarder did not reach $n: $(cat "$d/cursor")"; return 1; }
  t1=$(now_ns)
  grep -q ' lost=0 ' "$d/compare.out" || { log "records lost: $(cat "$d/compare.out")"; return 1; }
  echo $(( n * 1000000000 / (t1 - t0) ))
}

nats_run() {  # rep
  local d=$tmp/nats$1; mkdir -p "$d"
  local port; port=$(free_port)
  nats-server -js -a 127.0.0.1 -p "$port" -sd "$d/js" 2>"$d/nats.err" &
  pids+=($!)
  wait_for 10 tcp_up "$port"
  run_logsink "$d" --to "nats://127.0.0.1:$port" --subject logs.bench --create-stream BENCH
  stop_all
}
relp_run() {
  local d=$tmp/relp$1; mkdir -p "$d"
  local port; port=$(free_port)
  start_rsyslog "$d" "module(load=\"imrelp\")
input(type=\"imrelp\" port=\"$port\" address=\"127.0.0.1\")
template(name=\"raw\" type=\"string\" string=\"%rawmsg%\\n\")
action(type=\"omfile\" file=\"$d/relp-out.log\" template=\"raw\")"
  wait_for 10 tcp_up "$port"
  run_logsink "$d" --to "relp://127.0.0.1:$port"
  stop_all
}
relay_run() {
  local d=$tmp/relay$1; mkdir -p "$d/a" "$d/b"
  local port; port=$(free_port)
  start_rsyslog "$d/b" "module(load=\"imrelp\")
input(type=\"imrelp\" port=\"$port\" address=\"127.0.0.1\")
template(name=\"raw\" type=\"string\" string=\"%rawmsg%\\n\")
action(type=\"omfile\" file=\"$d/b/out.log\" template=\"raw\")"
  wait_for 10 tcp_up "$port"
  start_rsyslog "$d/a" "module(load=\"imuxsock\" SysSock.Use=\"off\")
input(type=\"imuxsock\" Socket=\"$d/a/sys.sock\" RateLimit.Interval=\"0\")
module(load=\"omrelp\")
*.* action(type=\"omrelp\" target=\"127.0.0.1\" port=\"$port\" windowSize=\"1024\" queue.type=\"LinkedList\" queue.size=\"2000000\" queue.dequeueBatchSize=\"1024\")"
  wait_for 10 test -S "$d/a/sys.sock"
  local t0 t1
  t0=$(now_ns)
  "$bin/compare_run" --system syslog --n "$n" --clients 1 --socket "$d/a/sys.sock" \
    --out "$d/b/out.log" --stable 5 >"$d/compare.out" || true
  t1=$(now_ns)
  local landed; landed=$(wc -l <"$d/b/out.log")
  [ "$landed" -ge "$n" ] || log "rsyslog relay: $landed of $n arrived"
  echo $(( landed * 1000000000 / (t1 - t0) ))
  stop_all
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

{
  echo "# logsink-forward vs rsyslog relay ($(date -u +%Y-%m-%dT%H:%M:%SZ), $mode, N=$n, $reps reps)"
  echo "# machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs; load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# peers: nats-server $(nats-server --version 2>&1 | awk '{print $NF}'), rsyslogd $(rsyslogd -v | awk 'NR==1{print $2}')"
} >"$out"
nats=() relp=() relay=()
for r in $(seq "$reps"); do
  nats+=("$(nats_run "$r")"); log "rep $r: nats ${nats[-1]}/s"
  relp+=("$(relp_run "$r")"); log "rep $r: relp ${relp[-1]}/s"
  relay+=("$(relay_run "$r")"); log "rep $r: rsyslog relay ${relay[-1]}/s"
  echo "rep=$r nats_rps=${nats[-1]} relp_rps=${relp[-1]} rsyslog_relay_rps=${relay[-1]}" >>"$out"
done
mn=$(printf '%s\n' "${nats[@]}" | median)
mr=$(printf '%s\n' "${relp[@]}" | median)
mx=$(printf '%s\n' "${relay[@]}" | median)
awk -v a="$mn" -v b="$mr" -v c="$mx" 'BEGIN {
  printf "median records/s end to end: logsink->NATS JetStream %d, logsink->RELP %d, rsyslog relay (imuxsock->omrelp->imrelp) %d\n", a, b, c
  printf "ratios: NATS/rsyslog-relay %.1fx, RELP/rsyslog-relay %.1fx\n", a / c, b / c }' | tee -a "$out"
