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
# sent by bench/compare's compare_run. The logsink paths run three ways into
# NATS (one record per message, --batch 1000, and --batch 1000 --compress
# zstd) and two over RELP (the default --window 1024, and --window 8192).
# Besides, the forwarder alone from a full ring (bench/ring_fill: a ring of
# FULL_SIZE bytes written to its end, ~2.3 M records at 2 MiB) into NATS,
# one record per message, --batch 1000, and --batch 1000 with --compress
# zstd and lz4: from the forwarder's start to its cursor passing the last
# record.
# Each run also prints the forwarder's CPU (user + system, all its threads)
# per record, and for NATS the stream's bytes per record on disk (the JSON
# line, headers and JetStream's per-message overhead).
#
# usage: bench/forward/run.sh [--smoke]
#   full: N = 1,000,000 (FORWARD_N), 3 repetitions, medians; writes
#     bench/results/forward.txt. --smoke: N = 20,000, 1 repetition, writes
#     bench/results/forward-smoke.txt (CI).
#   Environment: BUILD_DIR (default build/compare), FORWARD_N, REPS,
#   FULL_SIZE (default 2097152; smoke 65536).
# Needs nats-server, rsyslog and rsyslog-relp (scripts/deps.sh installs them).
# Every server runs in a private temp dir on loopback ports and is stopped by PID.
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/lib/daemon.sh
bench_setup forward-bench "$@"
if [ $mode = smoke ]; then n=${FORWARD_N:-20000}; reps=${REPS:-1}; full=${FULL_SIZE:-65536}; out=bench/results/forward-smoke.txt
else n=${FORWARD_N:-1000000}; reps=${REPS:-3}; full=${FULL_SIZE:-2097152}; out=bench/results/forward.txt; fi
tck=$(getconf CLK_TCK)

bench_build "$build" logsinkd daemon_launch logsink-forward compare_run ring_fill

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
now_ns() { date +%s%N; }
cursor_at() { [ -f "$1" ] && [ "$(awk '{print $4}' "$1")" = "$2" ]; }
lines_at() { [ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ]; }
tcp_up() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

start_logsinkd() {  # dir
  logsinkd_start "$1/logsinkd.err" --socket "$1/ls.sock" --file "$1/ls.ring" --size 256MiB \
    --log-level warn
}
start_rsyslog() {  # dir conf-text
  mkdir -p "$1/work"
  printf '%s\n' "global(workDirectory=\"$1/work\")" "$2" >"$1/rsyslog.conf"
  rsyslogd -n -f "$1/rsyslog.conf" -i "$1/rsyslog.pid" 2>"$1/rsyslogd.err" &
  pids+=($!)
}

# The forwarder's CPU (user + system, all threads) in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# One logsink run: destination args, the servers already up. Prints
# "records/s cpu-us-per-record".
run_logsink() {  # dir forward-args...
  local d=$1; shift
  start_logsinkd "$d"
  "$bin/logsink-forward" --file "$d/ls.ring" --cursor-file "$d/cursor" --log-level warn "$@" \
    2>"$d/forward.err" &
  local fp=$!
  pids+=($fp)
  wait_for 10 test -f "$d/cursor.status"
  local t0 t1 c0
  c0=$(cpu_ticks $fp)
  t0=$(now_ns)
  "$bin/compare_run" --system logsink --n "$n" --clients 1 --socket "$d/ls.sock" \
    --ring "$d/ls.ring" >"$d/compare.out"
  wait_for 600 cursor_at "$d/cursor" "$n" || { log "forwarder did not reach $n: $(cat "$d/cursor")"; return 1; }
  t1=$(now_ns)
  local c1; c1=$(cpu_ticks $fp)
  grep -q ' lost=0 ' "$d/compare.out" || { log "records lost: $(cat "$d/compare.out")"; return 1; }
  awk -v n="$n" -v t=$((t1 - t0)) -v c=$((c1 - c0)) -v k="$tck" \
    'BEGIN { printf "%d %.2f\n", n * 1e9 / t, c * 1e6 / k / n }'
}

# The forwarder alone, from a full ring. Prints "records/s cpu-us-per-record".
full_ring_run() {  # dir forward-args...
  local d=$1; shift
  local end; end=$("$bin/ring_fill" --ring "$d/full.ring" --size "$full" | awk '/^records/ {print $2}')
  local t0 t1 c1 fp start
  t0=$(now_ns)
  "$bin/logsink-forward" --file "$d/full.ring" --cursor-file "$d/fcursor" --log-level info "$@" \
    2>"$d/full-forward.err" &
  fp=$!
  pids+=($fp)
  wait_for 600 cursor_at "$d/fcursor" "$end" || { log "forwarder did not reach $end: $(cat "$d/fcursor")"; return 1; }
  t1=$(now_ns)
  c1=$(cpu_ticks $fp)
  # where it began: the oldest record the ring still holds
  start=$(sed -n 's/.*no cursor yet: starting .* at record \([0-9]*\) .*/\1/p' "$d/full-forward.err")
  awk -v n=$((end - start)) -v t=$((t1 - t0)) -v c="$c1" -v k="$tck" \
    'BEGIN { printf "%d %.2f\n", n * 1e9 / t, c * 1e6 / k / n }'
}

start_nats() {  # dir; sets port
  port=$(free_port)
  nats-server -js -a 127.0.0.1 -p "$port" -sd "$1/js" 2>"$1/nats.err" &
  pids+=($!)
  wait_for 10 tcp_up "$port"
}
# The stream's bytes on disk per record (JSON or its compressed batch,
# headers, JetStream's framing).
stream_bytes() {  # dir records
  awk -v b="$(du -sb "$1/js" | cut -f1)" -v n="$2" 'BEGIN { printf "%.0f\n", b / n }'
}

nats_run() {  # rep batch [compress]; prints "records/s cpu-us bytes-per-record"
  local d=$tmp/nats$1-$2-${3:-none}; mkdir -p "$d"
  local port
  start_nats "$d"
  # (not $(run_logsink ...): the daemons it starts would hold that pipe open)
  run_logsink "$d" --to "nats://127.0.0.1:$port" --subject logs.bench --create-stream BENCH \
    --batch "$2" ${3:+--compress "$3"} >"$d/result"
  stop_all
  echo "$(cat "$d/result") $(stream_bytes "$d" "$n")"
}
full_run() {  # rep batch [compress]; prints "records/s cpu-us"
  local d=$tmp/full$1-$2-${3:-none}; mkdir -p "$d"
  local port
  start_nats "$d"
  full_ring_run "$d" --to "nats://127.0.0.1:$port" --subject logs.bench --create-stream BENCH \
    --batch "$2" ${3:+--compress "$3"}
  stop_all
}
relp_run() {  # rep window; prints "records/s cpu-us"
  local d=$tmp/relp$1-$2; mkdir -p "$d"
  local port; port=$(free_port)
  start_rsyslog "$d" "module(load=\"imrelp\")
input(type=\"imrelp\" port=\"$port\" address=\"127.0.0.1\")
template(name=\"raw\" type=\"string\" string=\"%rawmsg%\\n\")
action(type=\"omfile\" file=\"$d/relp-out.log\" template=\"raw\")"
  wait_for 10 tcp_up "$port"
  run_logsink "$d" --to "relp://127.0.0.1:$port" --window "$2"
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
col() { printf '%s\n' "${@:2}" | awk -v c="$1" '{print $c}' | median; }

{
  echo "# logsink-forward vs rsyslog relay ($(date -u +%Y-%m-%dT%H:%M:%SZ), $mode, N=$n, $reps reps, full ring $full bytes)"
  echo "# machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs; load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# peers: nats-server $(nats-server --version 2>&1 | awk '{print $NF}'), rsyslogd $(rsyslogd -v | awk 'NR==1{print $2}')"
  echo "# per run: records/s, forwarder CPU us/record[, NATS stream bytes/record]"
} >"$out"
nats1=() natsb=() natsz=() relp=() relp8=() relay=() full1=() fullb=() fullz=() fulll=()
for r in $(seq "$reps"); do
  nats1+=("$(nats_run "$r" 1)"); log "rep $r: nats per record ${nats1[-1]}"
  natsb+=("$(nats_run "$r" 1000)"); log "rep $r: nats --batch 1000 ${natsb[-1]}"
  natsz+=("$(nats_run "$r" 1000 zstd)"); log "rep $r: nats --batch 1000 --compress zstd ${natsz[-1]}"
  relp+=("$(relp_run "$r" 1024)"); log "rep $r: relp ${relp[-1]}"
  relp8+=("$(relp_run "$r" 8192)"); log "rep $r: relp --window 8192 ${relp8[-1]}"
  relay+=("$(relay_run "$r")"); log "rep $r: rsyslog relay ${relay[-1]}/s"
  full1+=("$(full_run "$r" 1)"); log "rep $r: full ring, nats per record ${full1[-1]}"
  fullb+=("$(full_run "$r" 1000)"); log "rep $r: full ring, nats --batch 1000 ${fullb[-1]}"
  fullz+=("$(full_run "$r" 1000 zstd)"); log "rep $r: full ring, nats --batch 1000 --compress zstd ${fullz[-1]}"
  fulll+=("$(full_run "$r" 1000 lz4)"); log "rep $r: full ring, nats --batch 1000 --compress lz4 ${fulll[-1]}"
  echo "rep=$r nats_per_record=${nats1[-1]// /,} nats_batch1000=${natsb[-1]// /,} nats_batch1000_zstd=${natsz[-1]// /,} relp=${relp[-1]// /,} relp_window8192=${relp8[-1]// /,} rsyslog_relay_rps=${relay[-1]} full_ring_nats_per_record=${full1[-1]// /,} full_ring_nats_batch1000=${fullb[-1]// /,} full_ring_nats_batch1000_zstd=${fullz[-1]// /,} full_ring_nats_batch1000_lz4=${fulll[-1]// /,}" >>"$out"
done
mn=$(col 1 "${nats1[@]}") mb=$(col 1 "${natsb[@]}") mz=$(col 1 "${natsz[@]}") mr=$(col 1 "${relp[@]}")
m8=$(col 1 "${relp8[@]}") mx=$(col 1 "${relay[@]}")
f1=$(col 1 "${full1[@]}") fb=$(col 1 "${fullb[@]}") fz=$(col 1 "${fullz[@]}") fl=$(col 1 "${fulll[@]}")
cn=$(col 2 "${nats1[@]}") cb=$(col 2 "${natsb[@]}") cz=$(col 2 "${natsz[@]}") cr=$(col 2 "${relp[@]}")
c8=$(col 2 "${relp8[@]}")
cf1=$(col 2 "${full1[@]}") cfb=$(col 2 "${fullb[@]}") cfz=$(col 2 "${fullz[@]}") cfl=$(col 2 "${fulll[@]}")
bn=$(col 3 "${nats1[@]}") bb=$(col 3 "${natsb[@]}") bz=$(col 3 "${natsz[@]}")
awk -v a="$mn" -v b="$mb" -v z="$mz" -v c="$mr" -v e="$m8" -v x="$mx" \
  -v f="$f1" -v g="$fb" -v h="$fz" -v l="$fl" \
  -v ca="$cn" -v cb="$cb" -v cz="$cz" -v cc="$cr" -v ce="$c8" \
  -v cf="$cf1" -v cg="$cfb" -v ch="$cfz" -v cl="$cfl" -v ba="$bn" -v bb="$bb" -v bz="$bz" 'BEGIN {
  printf "median records/s end to end (LS_LOG -> acknowledged), forwarder CPU us/record:\n"
  printf "  logsink->NATS JetStream, one record per message  %8d  %5.2f us  %d B/record in the stream (%.1f MB/s)\n", a, ca, ba, a * ba / 1e6
  printf "  logsink->NATS JetStream, --batch 1000            %8d  %5.2f us  %d B/record in the stream (%.1f MB/s)\n", b, cb, bb, b * bb / 1e6
  printf "  logsink->NATS JetStream, --batch 1000 zstd       %8d  %5.2f us  %d B/record in the stream (%.1f MB/s)\n", z, cz, bz, z * bz / 1e6
  printf "  logsink->rsyslog RELP, --window 1024             %8d  %5.2f us\n", c, cc
  printf "  logsink->rsyslog RELP, --window 8192             %8d  %5.2f us\n", e, ce
  printf "  rsyslog relay (imuxsock->omrelp->imrelp)         %8d\n", x
  printf "median records/s of the forwarder alone from a full ring into NATS JetStream (records/s, CPU us/record):\n"
  printf "  one record per message   %8d  %5.2f us\n", f, cf
  printf "  --batch 1000              %8d  %5.2f us  (%.1fx one per message)\n", g, cg, g / f
  printf "  --batch 1000 --compress zstd %5d  %5.2f us  (%.2fx --batch 1000)\n", h, ch, h / g
  printf "  --batch 1000 --compress lz4  %5d  %5.2f us  (%.2fx --batch 1000)\n", l, cl, l / g
  printf "ratios to rsyslog relay: NATS per record %.1fx, NATS --batch 1000 %.1fx, NATS zstd %.1fx, RELP %.1fx, RELP --window 8192 %.1fx\n", a / x, b / x, z / x, c / x, e / x
  full_ok = "MISSED"; if (h >= 1000000) full_ok = "MET"
  best = c; if (e > best) best = e
  relp_ok = "MISSED"; if (best >= 5 * x) relp_ok = "MET"
  printf "[%s] full ring into JetStream >= 1,000,000 records/s (--batch 1000 --compress zstd): %d\n", full_ok, h
  printf "[%s] RELP >= 5x rsyslog relay (best window): %.1fx\n", relp_ok, best / x }' | tee -a "$out"
