#!/usr/bin/env bash
# run.sh: reading the fleet (`logctl --nats`, logctl.1 "READING A FLEET"),
# beside reading the same records from the rings on this machine, in the
# same run:
#   1. Read rate. N records over H hosts: per host a ring (bench/ring_fill,
#      N/H "user %d logged in." records) shipped by its own logsink-forward
#      (--subject logs.host-NN --batch 1000 --compress zstd --start oldest)
#      into the stream LOGS (file storage, one nats-server, created first
#      with $JS.API.STREAM.CREATE, not by the forwarders); every forwarder's
#      cursor at its ring's end, the forwarders stopped, then timed:
#        logctl --nats URL --no-pager -o json > /dev/null
#      (the stream found by its subjects, every host, merged by time) beside
#        logctl cat -o json --no-pager --file RING > /dev/null
#      for each of the H rings one after another (the baseline: the same
#      records, read locally). Records/s (N over the wall time), the
#      reader's CPU (user + system) per record, nats-server's CPU per record
#      during the read, and the ratio to the local read. With FLEET_NONE=1
#      (the default) the same rings also go through --compress none
#      batches into the stream RAW (raw.host-NN), read with
#      --subject-prefix raw. Alternating, medians of REPS. Before the
#      repetitions one untimed read of each stream (also a warm-up) checks
#      that it prints N lines, H hosts, each record once.
#   2. Selectivity. A second stream MANY of SEL_HOSTS hosts (many.host-NNN,
#      SEL_RECORDS records each, --batch SEL_BATCH --compress zstd, so that
#      a host holds several messages) read with three --host options
#      (host-007, host-042, host-093) through a counting TCP proxy
#      (nats_tool.py proxy) between logctl and nats-server:
#        pulled  the stream messages the server delivered to the reader's
#                connection: MSG/HMSG frames whose reply subject is
#                $JS.ACK.* (only a message delivered from a stream has one;
#                replies to JetStream API requests and pull status messages
#                such as "408 Request Timeout" have none and are counted
#                apart as "other"), by subject, so a message of a host not
#                selected would show up by name
#        held    the messages those three subjects hold in the stream
#                ($JS.API.STREAM.INFO with subjects_filter, before the read)
#      and pulled / held (logctl.1: only the selected hosts' messages are
#      pulled; the issue asks <= 1.1x). As a cross-check, nats-server's own
#      count for that connection (/connz?state=closed on its monitoring
#      port: out_msgs, in_msgs) must equal the proxy's frames each way:
#      out_msgs = pulled + other (API replies, status messages), in_msgs =
#      fetch requests + other API requests (STREAM.NAMES, STREAM.INFO,
#      CONSUMER.CREATE, CONSUMER.INFO, CONSUMER.DELETE).
# Besides, how fast the H forwarders shipped their rings together (from the
# first start to the last cursor at its end), for scale only.
#
# usage: bench/fleet/run.sh [--smoke]
#   full: N = 1,000,000 (FLEET_N) over 10 hosts (FLEET_HOSTS), 5 repetitions
#     (REPS), selectivity 100 hosts (SEL_HOSTS) x 5,000 records
#     (SEL_RECORDS), --batch 100 (SEL_BATCH); writes bench/results/fleet.txt.
#     --smoke: N = 20,000, 1 repetition, 100 hosts x 300 records; writes
#     bench/results/fleet-smoke.txt (CI). On 2 shared cores, once built:
#     full about 3.5 minutes, smoke 10-20 s.
#   Environment: BUILD_DIR (default build/compare; never build/default),
#   FLEET_NONE (0 leaves out the --compress none stream), SHIP_GROUP
#   (forwarders running at once, default 25).
# Needs nats-server and python3 (scripts/deps.sh installs nats-server).
# One nats-server (JetStream, monitoring port) in a private temp dir on
# loopback ports, stopped by PID, like every forwarder.
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/lib/daemon.sh
bench_setup fleet-bench "$@"
if [ $mode = smoke ]; then
  n=${FLEET_N:-20000} reps=${REPS:-1} sel_records=${SEL_RECORDS:-300} out=bench/results/fleet-smoke.txt
else
  n=${FLEET_N:-1000000} reps=${REPS:-5} sel_records=${SEL_RECORDS:-5000} out=bench/results/fleet.txt
fi
hosts=${FLEET_HOSTS:-10} sel_hosts=${SEL_HOSTS:-100} sel_batch=${SEL_BATCH:-100}
with_none=${FLEET_NONE:-1}
per=$((n / hosts))
n=$((per * hosts))
selected=(host-007 host-042 host-093)
[ "$sel_hosts" -ge 93 ] || { log "SEL_HOSTS must be at least 93 (host-093 is selected)"; exit 2; }
tck=$(getconf CLK_TCK)
started=$SECONDS

bench_build "$build" logctl logsink-forward ring_fill

tool() { python3 bench/fleet/nats_tool.py "$@"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
now_ns() { date +%s%N; }
cursor_at() { [ -f "$1" ] && [ "$(awk '{print $4}' "$1")" = "$2" ]; }
tcp_up() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# The CPU seconds (user + system) of the children of the subshell that ran
# `times` last: its second line, "0m1.230s 0m0.040s".
times_cpu() { awk 'NR == 2 { gsub(/s/, "", $1); gsub(/s/, "", $2); split($1, u, "m"); split($2, s, "m");
  printf "%.3f\n", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$1"; }

# --- the server and its streams ---
port=$(free_port) mport=$(free_port)
nats-server -js -a 127.0.0.1 -p "$port" -m "$mport" -sd "$tmp/js" 2>"$tmp/nats.err" &
nats_pid=$!
pids+=("$nats_pid")
wait_for 10 tcp_up "$port" || { log "nats-server did not start:"; cat "$tmp/nats.err" >&2; exit 1; }
wait_for 10 tcp_up "$mport"
url=nats://127.0.0.1:$port
tool create "$port" LOGS 'logs.>'
[ "$with_none" = 1 ] && tool create "$port" RAW 'raw.>'
tool create "$port" MANY 'many.>'

# --- the rings: ring_fill, exactly PER records each ---
# Size: the records (about 10 bytes each uncompressed, less with the ring's
# zstd blocks) fit with room to spare; ring_fill stops at --records.
fill() {  # ring records
  local got
  got=$("$bin/ring_fill" --ring "$1" --size $(($2 * 16 + (1 << 20))) --records "$2" | awk '/^records/ {print $2}')
  [ "$got" = "$2" ] || { log "ring_fill wrote $got records to $1, not $2"; exit 1; }
}
mkdir -p "$tmp/rings" "$tmp/many"
host_names=() many_names=()
for i in $(seq "$hosts"); do host_names+=("$(printf 'host-%02d' "$i")"); done
for i in $(seq "$sel_hosts"); do many_names+=("$(printf 'host-%03d' "$i")"); done
for h in "${host_names[@]}"; do fill "$tmp/rings/$h.ring" "$per"; done
for h in "${many_names[@]}"; do fill "$tmp/many/$h.ring" "$sel_records"; done
log "rings: $hosts x $per records, $sel_hosts x $sel_records records ($((SECONDS - started)) s so far)"

# --- shipping: one logsink-forward per host, GROUP at a time ---
# ship DIR PREFIX BATCH COMPRESS RECORDS HOST...: each host's ring
# DIR/HOST.ring to PREFIX.HOST; returns when every cursor is at RECORDS and
# the forwarders are stopped; sets shipped (records/s of the whole). Not
# in $(...): the forwarders would hold its pipe open.
ship() {
  local d=$1 prefix=$2 batch=$3 compress=$4 records=$5
  shift 5
  local group=${SHIP_GROUP:-25} t0 t1 h fp cur=$d/cursors-$prefix i=0 live=()
  mkdir -p "$cur"
  t0=$(now_ns)
  for h in "$@"; do
    "$bin/logsink-forward" --to "$url" --subject "$prefix.$h" --file "$d/$h.ring" \
      --cursor-file "$cur/$h" --batch "$batch" --compress "$compress" --start oldest \
      --log-level warn >/dev/null 2>"$cur/$h.err" &
    fp=$!
    pids+=("$fp")
    live+=("$fp:$h")
    i=$((i + 1))
    if [ $((i % group)) = 0 ] || [ "$i" = $# ]; then
      for fp in "${live[@]}"; do
        wait_for 600 cursor_at "$cur/${fp#*:}" "$records" ||
          { log "forwarder of ${fp#*:} did not reach $records: $(cat "$cur/${fp#*:}" 2>/dev/null)"; cat "$cur/${fp#*:}.err" >&2; exit 1; }
      done
      for fp in "${live[@]}"; do kill -TERM "${fp%%:*}" 2>/dev/null || true; done
      for fp in "${live[@]}"; do stop_pid "${fp%%:*}"; done
      live=()
    fi
  done
  t1=$(now_ns)
  shipped=$(awk -v n=$(($# * records)) -v t=$((t1 - t0)) 'BEGIN { printf "%d\n", n * 1e9 / t }')
}
# check_stream NAME PREFIX HOSTS MESSAGES-FILE: every host's subject in the
# stream; writes "SUBJECT COUNT" lines and "total M" to MESSAGES-FILE.
check_stream() {
  tool subjects "$port" "$1" "$2.>" >"$4"
  local got; got=$(grep -c "^$2\." "$4" || true)
  [ "$got" = "$3" ] || { log "stream $1 holds $got subjects under $2.>, not $3"; exit 1; }
}
ship "$tmp/rings" logs 1000 zstd "$per" "${host_names[@]}"
ship_zstd=$shipped
check_stream LOGS logs "$hosts" "$tmp/logs.subjects"
log "LOGS: $n records shipped at $ship_zstd records/s, $(awk '/^total/ {print $2}' "$tmp/logs.subjects") messages"
ship_none=0
if [ "$with_none" = 1 ]; then
  ship "$tmp/rings" raw 1000 none "$per" "${host_names[@]}"
  ship_none=$shipped
  check_stream RAW raw "$hosts" "$tmp/raw.subjects"
  log "RAW: $n records shipped at $ship_none records/s, $(awk '/^total/ {print $2}' "$tmp/raw.subjects") messages"
fi
ship "$tmp/many" many "$sel_batch" zstd "$sel_records" "${many_names[@]}"
ship_many=$shipped
check_stream MANY many "$sel_hosts" "$tmp/many.subjects"
log "MANY: $((sel_hosts * sel_records)) records shipped at $ship_many records/s ($((SECONDS - started)) s so far)"
# The stream's bytes on disk per record.
stream_bytes() { awk -v b="$(du -sb "$tmp/js/jetstream/\$G/streams/$1" | cut -f1)" -v n="$2" 'BEGIN { printf "%.0f\n", b / n }'; }
bytes_zstd=$(stream_bytes LOGS "$n") bytes_none=0
[ "$with_none" = 1 ] && bytes_none=$(stream_bytes RAW "$n")

# --- the reads ---
# nats_read PREFIX [ARG...] > /dev/null: prints "records/s reader-us server-us"
nats_read() {
  local prefix=$1 t0 t1 c0 c1
  shift
  c0=$(cpu_ticks "$nats_pid")
  t0=$(now_ns)
  ( "$bin/logctl" --nats "$url" --subject-prefix "$prefix" --no-pager -o json "$@" >/dev/null || exit $?
    times ) >"$tmp/times" 2>"$tmp/read.err" || { log "logctl --nats failed:"; cat "$tmp/read.err" >&2; return 1; }
  t1=$(now_ns)
  c1=$(cpu_ticks "$nats_pid")
  awk -v n="$n" -v t=$((t1 - t0)) -v c="$(times_cpu "$tmp/times")" -v s=$((c1 - c0)) -v k="$tck" \
    'BEGIN { printf "%d %.2f %.2f\n", n * 1e9 / t, c * 1e6 / n, s * 1e6 / k / n }'
}
# local_read: every ring, one after another; prints "records/s reader-us"
local_read() {
  local t0 t1 h
  t0=$(now_ns)
  ( for h in "${host_names[@]}"; do
      "$bin/logctl" cat -o json --no-pager --file "$tmp/rings/$h.ring" >/dev/null || exit $?
    done
    times ) >"$tmp/times" 2>"$tmp/read.err" || { log "logctl cat failed:"; cat "$tmp/read.err" >&2; return 1; }
  t1=$(now_ns)
  awk -v n="$n" -v t=$((t1 - t0)) -v c="$(times_cpu "$tmp/times")" \
    'BEGIN { printf "%d %.2f\n", n * 1e9 / t, c * 1e6 / n }'
}
# check_read PREFIX: the untimed first read prints N JSON lines, H hosts,
# PER records each, no record twice; prints its bytes per line.
check_read() {
  "$bin/logctl" --nats "$url" --subject-prefix "$1" --no-pager -o json >"$tmp/check.json" 2>"$tmp/read.err" ||
    { log "logctl --nats failed:"; cat "$tmp/read.err" >&2; exit 1; }
  python3 - "$tmp/check.json" "$n" "$hosts" "$per" <<'PY' || exit 1
import json, sys
path, n, hosts, per = sys.argv[1], *map(int, sys.argv[2:])
seen, by_host, lines, prev = set(), {}, 0, 0
with open(path) as f:
    for line in f:
        lines += 1
        j = json.loads(line)
        key = (j["host"], j["seq"])
        if key in seen:
            sys.exit(f"fleet check: {key} printed twice")
        seen.add(key)
        by_host[j["host"]] = by_host.get(j["host"], 0) + 1
        ts = int(j["ts_ns_str"])
        if ts < prev:
            sys.exit(f"fleet check: line {lines} goes back in time")
        prev = ts
if lines != n or len(by_host) != hosts or set(by_host.values()) != {per}:
    sys.exit(f"fleet check: {lines} lines (not {n}), {len(by_host)} hosts (not {hosts}), per host {sorted(set(by_host.values()))}")
PY
  awk -v b="$(stat -c %s "$tmp/check.json")" -v n="$n" 'BEGIN { printf "%.0f\n", b / n }'
  rm -f "$tmp/check.json"
}
local_lines=0
for h in "${host_names[@]}"; do
  local_lines=$((local_lines + $("$bin/logctl" cat -o json --no-pager --file "$tmp/rings/$h.ring" | wc -l)))
done
[ "$local_lines" = "$n" ] || { log "logctl cat printed $local_lines lines of the rings, not $n"; exit 1; }
line_zstd=$(check_read logs) line_none=0
[ "$with_none" = 1 ] && line_none=$(check_read raw)
log "checked: each stream prints $n lines, $hosts hosts, each record once ($((SECONDS - started)) s so far)"

# --- selectivity: three hosts of MANY through the counting proxy ---
selectivity() {
  rm -f "$tmp/proxy.port" "$tmp/proxy.json"
  tool proxy "$tmp/proxy.port" "$port" "$tmp/proxy.json" >/dev/null 2>"$tmp/proxy.err" &
  local pp=$! ppt args=() h
  pids+=("$pp")
  wait_for 10 test -s "$tmp/proxy.port"
  ppt=$(cat "$tmp/proxy.port")
  for h in "${selected[@]}"; do args+=(--host "$h"); done
  local t0 t1
  t0=$(now_ns)
  "$bin/logctl" --nats "nats://127.0.0.1:$ppt" --subject-prefix many --no-pager -o json "${args[@]}" \
    >"$tmp/sel.json" 2>"$tmp/read.err" || { log "logctl --nats --host failed:"; cat "$tmp/read.err" >&2; exit 1; }
  t1=$(now_ns)
  wait_for 10 test -s "$tmp/proxy.json"
  stop_pid "$pp"
  # the server's count for the connection, once it lists it as closed
  local up; up=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["upstream_port"])' "$tmp/proxy.json")
  closed_listed() {
    python3 -c 'import sys, urllib.request; sys.stdout.buffer.write(urllib.request.urlopen(sys.argv[1], timeout=5).read())' \
      "http://127.0.0.1:$mport/connz?state=closed&limit=100000" >"$tmp/connz.json" 2>/dev/null &&
      grep -Eq "\"port\": *$up," "$tmp/connz.json"
  }
  wait_for 10 closed_listed || { log "nats-server does not list the reader's connection (port $up) as closed"; exit 1; }
  python3 - "$tmp/proxy.json" "$tmp/connz.json" "$tmp/many.subjects" "$tmp/sel.json" \
    "$sel_records" $(((t1 - t0) / 1000000)) "${selected[@]}" <<'PY'
import json, sys
proxy, connz, subjects, sel, per, ms = sys.argv[1:7]
hosts = sys.argv[7:]
p = json.load(open(proxy))
down, up = p["server_to_client"], p["client_to_server"]
held = {}
for line in open(subjects):
    s, c = line.split()
    held[s] = int(c)
want = {"many." + h for h in hosts}
held_sel = sum(held[s] for s in want)
pulled = down.get("stream", 0)
by_subject = {k[8:]: v for k, v in down.items() if k.startswith("subject:")}
foreign = sum(v for s, v in by_subject.items() if s not in want)
conn = [c for c in json.load(open(connz))["connections"] if c.get("port") == p["upstream_port"]]
if len(conn) != 1:
    sys.exit(f"selectivity: the server lists {len(conn)} closed connections from port {p['upstream_port']}")
c = conn[0]
frames_down = pulled + down.get("other", 0)
frames_up = up.get("fetch", 0) + up.get("api", 0) + up.get("other", 0)
lines = sum(1 for _ in open(sel))
api = ", ".join(f"{k[4:]} {v}" for k, v in sorted(up.items()) if k.startswith("api:"))
print(f"pulled={pulled} held={held_sel} foreign={foreign} ratio={pulled / held_sel:.3f} "
      f"other_down={down.get('other', 0)} fetch_requests={up.get('fetch', 0)} api_requests={up.get('api', 0)} "
      f"server_out_msgs={c['out_msgs']} server_in_msgs={c['in_msgs']} proxy_down={frames_down} proxy_up={frames_up} "
      f"records={lines} expected_records={len(hosts) * int(per)} stream_messages={sum(held.values())} ms={ms}")
print(api, file=sys.stderr)
PY
}
# (not in $(...): the proxy would hold its pipe open)
selectivity >"$tmp/sel.out" 2>"$tmp/sel.api" || { log "selectivity failed:"; cat "$tmp/sel.api" >&2; exit 1; }
sel=$(cat "$tmp/sel.out")
log "selectivity: $sel"
kv() { tr ' ' '\n' <<<"$sel" | awk -F= -v k="$1" '$1 == k {print $2}'; }
[ "$(kv server_out_msgs)" = "$(kv proxy_down)" ] && [ "$(kv server_in_msgs)" = "$(kv proxy_up)" ] ||
  { log "the proxy's counts differ from the server's (/connz): $sel"; exit 1; }
[ "$(kv records)" = "$(kv expected_records)" ] || { log "the --host read printed $(kv records) records, not $(kv expected_records)"; exit 1; }

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
col() { printf '%s\n' "${@:2}" | awk -v c="$1" '{print $c}' | median; }

{
  echo "# reading the fleet: logctl --nats vs logctl cat of the rings ($(date -u +%Y-%m-%dT%H:%M:%SZ), $mode, N=$n over $hosts hosts, $reps reps; selectivity $sel_hosts hosts x $sel_records records, --batch $sel_batch)"
  echo "# machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs; load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# peers: nats-server $(nats-server --version 2>&1 | awk '{print $NF}'), one node, file storage; build $build; tree $(git rev-parse --short HEAD 2>/dev/null || echo none)$(git diff --quiet 2>/dev/null || echo ' (dirty)')"
  echo "# shipped: $hosts forwarders $ship_zstd records/s --compress zstd ($bytes_zstd B/record in the stream, $(awk '/^total/ {print $2}' "$tmp/logs.subjects") messages)$([ "$with_none" = 1 ] && echo ", $ship_none records/s --compress none ($bytes_none B/record, $(awk '/^total/ {print $2}' "$tmp/raw.subjects") messages)"); -o json: $line_zstd B/line from the stream$([ "$with_none" = 1 ] && echo " ($line_none from RAW)"), checked: $n lines, $hosts hosts, each record once, in time order"
  echo "# per run: records/s, reader CPU us/record[, nats-server CPU us/record]"
} >"$out"
natz=() natn=() loc=()
for r in $(seq "$reps"); do
  natz+=("$(nats_read logs)"); log "rep $r: logctl --nats (zstd) ${natz[-1]}"
  if [ "$with_none" = 1 ]; then natn+=("$(nats_read raw)"); log "rep $r: logctl --nats (none) ${natn[-1]}"; fi
  loc+=("$(local_read)"); log "rep $r: logctl cat of the rings ${loc[-1]}"
  echo "rep=$r nats_zstd=${natz[-1]// /,}$([ "$with_none" = 1 ] && echo " nats_none=${natn[-1]// /,}") local_rings=${loc[-1]// /,}" >>"$out"
done
echo "selectivity: $sel" >>"$out"
mz=$(col 1 "${natz[@]}") cz=$(col 2 "${natz[@]}") sz=$(col 3 "${natz[@]}")
ml=$(col 1 "${loc[@]}") cl=$(col 2 "${loc[@]}")
mn=0 cn=0 sn=0
if [ "$with_none" = 1 ]; then mn=$(col 1 "${natn[@]}") cn=$(col 2 "${natn[@]}") sn=$(col 3 "${natn[@]}"); fi
awk -v z="$mz" -v cz="$cz" -v sz="$sz" -v nn="$mn" -v cn="$cn" -v sn="$sn" -v l="$ml" -v cl="$cl" \
  -v none="$with_none" -v n="$n" -v h="$hosts" -v pulled="$(kv pulled)" -v held="$(kv held)" \
  -v foreign="$(kv foreign)" -v other="$(kv other_down)" -v fetch="$(kv fetch_requests)" \
  -v apireq="$(kv api_requests)" -v out="$(kv server_out_msgs)" -v in_="$(kv server_in_msgs)" \
  -v total="$(kv stream_messages)" -v sh="$sel_hosts" -v ms="$(kv ms)" -v api="$(cat "$tmp/sel.api")" 'BEGIN {
  printf "median records/s reading %d records of %d hosts (-o json > /dev/null), reader CPU us/record, nats-server CPU us/record:\n", n, h
  printf "  logctl --nats, --batch 1000 --compress zstd  %8d  %5.2f us  %5.2f us  (wall %.2f s, of it the reader on CPU %.2f s)\n", z, cz, sz, n / z, cz * n / 1e6
  if (none == 1)
  printf "  logctl --nats, --batch 1000 --compress none  %8d  %5.2f us  %5.2f us  (wall %.2f s, of it the reader on CPU %.2f s)\n", nn, cn, sn, n / nn, cn * n / 1e6
  printf "  logctl cat --file, the %d rings in turn      %8d  %5.2f us             (wall %.2f s)\n", h, l, cl, n / l
  printf "ratio to the local read: --nats zstd %.3fx", z / l
  if (none == 1) printf ", --nats none %.3fx", nn / l
  printf "; reader CPU per record: zstd %.1fx", cz / cl
  if (none == 1) printf ", none %.1fx", cn / cl
  printf " the local read'\''s\n"
  printf "selectivity: --host host-007 --host host-042 --host host-093 of %d hosts (%d messages in the stream), %.1f s:\n", sh, total, ms / 1000
  printf "  stream messages pulled %d, of hosts not selected %d; the 3 hosts hold %d: %.3fx\n", pulled, foreign, held, pulled / held
  printf "  besides: %d other messages to the reader (API replies, pull status) for %d fetch requests and %d API requests (%s);\n", other, fetch, apireq, api
  printf "  nats-server counted out_msgs %d = %d + %d, in_msgs %d = %d + %d for that connection\n", out, pulled, other, in_, fetch, apireq
  ok = "MISSED"; if (pulled <= 1.1 * held && foreign == 0) ok = "MET"
  printf "[%s] --host pulls <= 1.1x the selected hosts'\'' messages: %.3fx\n", ok, pulled / held }' | tee -a "$out"
log "done in $((SECONDS - started)) s"
