#!/usr/bin/env bash
# run.sh: measures logsink side by side with rsyslog, syslog-ng and spdlog on
# this machine, same message shape ("user %d logged in from port %d request
# %d"), and writes the raw numbers, a markdown table and a plot.
#
# usage: bench/compare/run.sh [--smoke]
#   full (default): N = 1,000,000 and 10,000,000 records, from 1 thread, 4
#     processes and 4 threads of one process; installs what is missing (rsyslog and gnuplot with apt-get;
#     syslog-ng-core unpacked privately under the build dir, since Debian's
#     rsyslog and syslog-ng-core conflict); writes bench/results/compare-raw.txt,
#     compare-data.txt, compare.png and compare.md. Takes 15-40 minutes.
#   --smoke: N = 20,000, the same sender configurations, logsink + spdlog +
#     whichever syslog daemon is already there, a short latency run, no install, no plot; writes
#     bench/results/compare-smoke.txt. For CI: < 90 s once built.
#   Exit status: non-zero when logsink lost a record (or a run failed).
#   Environment: BUILD_DIR (default build/compare), BUILD_TYPE (Release),
#   JOBS (build -j, default 2), COMPARE_N (record counts, e.g. "1000000"),
#   COMPARE_TIMEOUT (seconds one measurement may take, default 900).
#
# Every daemon runs in the foreground on its own socket and files in a private
# temp dir, is stopped by its own PID, and the temp dir is removed on exit.
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/lib/daemon.sh
bench_setup compare "$@"
results=bench/results
mkdir -p "$results"

policy_created=0
bench_on_exit() { [ $policy_created = 0 ] || rm -f /usr/sbin/policy-rc.d; }

# ---- peers ------------------------------------------------------------------
apt_updated=0
apt_install() {  # installs the named Debian packages that are missing
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" = 0 ] || { log "need root to install ${missing[*]}"; return 1; }
  # No service may start from a package's postinst: this is not the system logger.
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod +x /usr/sbin/policy-rc.d
    policy_created=1
  fi
  local before
  before=$(pgrep -x rsyslogd || true)
  log "installing ${missing[*]}"
  [ $apt_updated = 1 ] || { apt-get update -qq >/dev/null; apt_updated=1; }
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  if [ $policy_created = 1 ]; then rm -f /usr/sbin/policy-rc.d; policy_created=0; fi
  local after
  after=$(pgrep -x rsyslogd || true)
  for p in $after; do
    if ! grep -qx "$p" <<<"$before"; then
      log "apt started a system rsyslogd (pid $p); stopping it"
      kill -TERM "$p" || true
    fi
  done
}

sng_root=$build/peers/syslog-ng  # syslog-ng-core unpacked here (not installed)
sng_bin=$sng_root/usr/sbin/syslog-ng
sng_lib=$sng_root/usr/lib/syslog-ng
install_syslog_ng() {
  apt_install libivykis0 libnet1 libpcre3 libwrap0 libglib2.0-0 libjson-c5 libssl3 libcap2
  [ -x "$sng_bin" ] && return 0
  log "unpacking syslog-ng-core into $sng_root"
  mkdir -p "$tmp/deb" "$sng_root"
  (cd "$tmp/deb" && apt-get download -qq syslog-ng-core 2>/dev/null)
  dpkg-deb -x "$tmp"/deb/syslog-ng-core_*.deb "$sng_root"
}

have_rsyslog=0 have_sng=0
if [ $mode = full ]; then
  apt_install rsyslog gnuplot-nox
  install_syslog_ng
fi
command -v rsyslogd >/dev/null && have_rsyslog=1
if [ -x "$sng_bin" ] && ! LD_LIBRARY_PATH=$sng_lib ldd "$sng_bin" | grep -q "not found"; then
  have_sng=1
fi

# ---- build --------------------------------------------------------------------
bench_build "$build" logsinkd daemon_launch logctl compare_run compare_latency

# ---- daemons ------------------------------------------------------------------
started_pid= stop_with=
# system dir: starts it in the foreground, sets started_pid (the daemon, for
# its CPU time) and stop_with (what to give to stop_pid)
start_daemon() {
  local sys=$1 d=$2
  mkdir -p "$d"
  started_pid= stop_with=
  case $sys in
    logsink | logsink-nb)
      logsinkd_start "$d/daemon.err" --socket "$d/ls.sock" --file "$d/ls.ring" --size 64MiB \
        --log-level warn || return 1
      started_pid=$LOGSINKD_PID stop_with=$LOGSINKD_STOP_PID ;;
    rsyslog)
      rsyslogd_start "$d" "$d/sys.sock" "$d/out.log" || return 1
      started_pid=$RSYSLOGD_PID stop_with=$RSYSLOGD_PID ;;
    syslog-ng | syslog-ng-nopasscred)
      local extra=
      [ "$sys" = syslog-ng-nopasscred ] && extra='so-passcred(no)'
      cat >"$d/syslog-ng.conf" <<EOF
@version: 3.38
source s_cmp { unix-dgram("$d/sys.sock" $extra); };
destination d_cmp { file("$d/out.log"); };
log { source(s_cmp); destination(d_cmp); };
EOF
      LD_LIBRARY_PATH=$sng_lib "$sng_bin" -F -f "$d/syslog-ng.conf" --module-path="$sng_lib/3.38" \
        -p "$d/syslog-ng.pid" -R "$d/syslog-ng.persist" -c "$d/syslog-ng.ctl" 2>"$d/daemon.err" &
      started_pid=$! stop_with=$!
      pids+=($!)
      wait_socket "$d/sys.sock" $started_pid ;;
    spdlog) ;;
  esac
}

# ---- runs ---------------------------------------------------------------------
if [ $mode = smoke ]; then
  ns=${COMPARE_N:-20000}
  raw=$results/compare-smoke.txt
else
  ns=${COMPARE_N:-"1000000 10000000"}
  raw=$results/compare-raw.txt
fi
systems=(logsink logsink-nb spdlog)
[ $have_rsyslog = 1 ] && systems+=(rsyslog)
[ $have_sng = 1 ] && systems+=(syslog-ng)
[ $have_sng = 1 ] && [ $mode = full ] && systems+=(syslog-ng-nopasscred)

fs=$(df -T "$tmp" | awk 'NR==2 {print $2}')
machine="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs, $(uname -sr), temp dir on $fs"
{
  echo "# logsink comparison ($(date -u +%Y-%m-%dT%H:%M:%SZ), $mode)"
  echo "# machine: $machine"
  echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# build: ${BUILD_TYPE:-Release} in $build; commit $(git rev-parse --short HEAD 2>/dev/null || echo none)"
  echo "# peers: rsyslogd $(rsyslogd -v 2>/dev/null | awk 'NR==1{print $2}' || true)," \
    "syslog-ng $([ $have_sng = 1 ] && LD_LIBRARY_PATH=$sng_lib "$sng_bin" -V 2>/dev/null | sed -n '1s/.*(\(.*\))/\1/p' || echo absent)," \
    "spdlog $(dpkg-query -W -f='${Version}' libspdlog-dev 2>/dev/null || echo '?')"
  echo "# system rsyslogd pids before our runs (none expected): $(pgrep -x rsyslogd | tr '\n' ' ' || true)"
} >"$raw"

fail=0
timeout=${COMPARE_TIMEOUT:-900}
[ $mode = smoke ] && timeout=60
# Sender configurations: PROCESSESxTHREADS (1x1 one thread, 4x1 four
# processes, 1x4 four threads of one process).
for n in $ns; do
  for cfg in 1x1 4x1 1x4; do
    k=${cfg%x*} th=${cfg#*x}
    for sys in "${systems[@]}"; do
      # syslog-ng with so-passcred(no) is a labelled extra, measured at the smallest N only;
      # syslog-ng (the slowest by far) runs the 4-thread case at the smallest N only.
      [ "$sys" = syslog-ng-nopasscred ] && [ "$n" != "${ns%% *}" ] && continue
      [ "$sys" = syslog-ng ] && [ "$th" != 1 ] && [ "$n" != "${ns%% *}" ] && continue
      d=$tmp/$sys-$n-$cfg
      if ! start_daemon "$sys" "$d"; then
        log "$sys did not start:"; cat "$d/daemon.err" >&2 || true
        echo "label=$sys n=$n clients=$k threads=$th FAILED_TO_START" >>"$raw"; fail=1; continue
      fi
      pid=$started_pid stop=$stop_with
      case $sys in
        logsink | logsink-nb) args=(--system "$sys" --socket "$d/ls.sock" --ring "$d/ls.ring") ;;
        spdlog) args=(--system spdlog --out "$d/spdlog.log") ;;
        *) args=(--system syslog --socket "$d/sys.sock" --out "$d/out.log") ;;
      esac
      [ -n "$pid" ] && args+=(--daemon-pid "$pid")
      log "$sys n=$n clients=$k threads=$th"
      line=$("$bin/compare_run" "${args[@]}" --n "$n" --clients "$k" --threads "$th" \
        --timeout "$timeout") || fail=1
      stop_pid "$stop"
      echo "label=$sys $line" | tee -a "$raw" >&2
      # logsink (default options) must land every record; LS_BLOCK_NEVER may
      # drop under overload, but only what it counted and reported.
      lost=$(sed -n 's/.* lost=\([-0-9]*\).*/\1/p' <<<"$line")
      dropped=$(sed -n 's/.* client_dropped=\([0-9]*\).*/\1/p' <<<"$line")
      if [ "$sys" = logsink ] && [ "${lost:-1}" != 0 ]; then
        log "FAIL: logsink lost $lost records (n=$n $cfg)"; fail=1
      fi
      if [ "$sys" = logsink-nb ] && [ "${lost:-1}" -gt "${dropped:-0}" ]; then
        log "FAIL: logsink-nb lost $lost records but counted only $dropped drops"; fail=1
      fi
      rm -rf "$d"
    done
  done
done

# Visibility: log call -> line printed by `logctl tail -f --json`.
d=$tmp/latency
start_daemon logsink "$d"
count=2000
[ $mode = smoke ] && count=300
log "latency: $count records at 1 kHz"
lat=$("$bin/compare_latency" --socket "$d/ls.sock" --ring "$d/ls.ring" --logctl "$bin/logctl" \
  --count $count --rate 1000) || { log "FAIL: latency run lost records"; fail=1; }
stop_pid "$stop_with"
echo "label=latency $lat" | tee -a "$raw" >&2
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$raw"

if [ $mode = full ]; then
  bash bench/compare/report.sh "$raw" "$results" "$machine"
  log "wrote $raw, $results/compare-data.txt, $results/compare.png, $results/compare.md"
else
  log "wrote $raw"
fi
exit $fail
