#!/usr/bin/env bash
# run.sh: records/s of Python's logging into logsink.Handler, FileHandler and
# SysLogHandler -> a real rsyslogd, in one run (bench/python/handler_bench.py),
# and bytes per record in logsink's ring. logsinkd and rsyslogd run in the
# foreground on sockets and files in a private temp dir, each stopped by its
# PID; rsyslogd is configured like bench/compare's (imuxsock without rate
# limit -> omfile). rsyslog is a Debian package (scripts/deps.sh installs it).
#
# usage: bench/python/run.sh [--smoke]
#   full: 100,000 records x 5 runs per handler -> bench/results/python.txt
#   --smoke: 2,000 records x 1 run -> bench/results/python-smoke.txt (CI)
#   Environment: BUILD_DIR (default build/bench-release), BUILD_TYPE (Release),
#   JOBS (build -j, default 2), PY_N / PY_REPS override the sizes.
# Exit status: non-zero when logsink lost a record or a run failed.
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${PY_N:-100000} reps=${PY_REPS:-5} out=bench/results/python.txt
if [ "${1:-}" = --smoke ]; then n=${PY_N:-2000} reps=${PY_REPS:-1} out=bench/results/python-smoke.txt; fi
build=${BUILD_DIR:-build/bench-release}
mkdir -p bench/results

tmp=$(mktemp -d /tmp/logsink-pybench.XXXXXX)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

command -v rsyslogd >/dev/null || { echo "python bench: rsyslogd missing (scripts/deps.sh)" >&2; exit 1; }
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" -DLOGSINK_WERROR=ON \
  -DLOGSINK_BUILD_TESTS=OFF >/dev/null
ninja -C "$build" -j "${JOBS:-2}" logsinkd logctl >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log" >&2; exit 1; }

wait_socket() {  # path pid: until the socket exists (10 s) while pid lives
  local i
  for i in $(seq 200); do
    [ -S "$1" ] && return 0
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}

"$build/bin/logsinkd" --socket "$tmp/ls.sock" --file "$tmp/ls.ring" --size 64MiB --log-level warn \
  2>"$tmp/logsinkd.err" &
pids+=($!)
wait_socket "$tmp/ls.sock" $! || { cat "$tmp/logsinkd.err" >&2; exit 1; }

mkdir -p "$tmp/work"
cat >"$tmp/rsyslog.conf" <<CONF
global(workDirectory="$tmp/work")
module(load="imuxsock" SysSock.Use="off")
input(type="imuxsock" Socket="$tmp/sys.sock" RateLimit.Interval="0")
*.* action(type="omfile" file="$tmp/rsyslog.log")
CONF
rsyslogd -n -f "$tmp/rsyslog.conf" -i "$tmp/rsyslog.pid" 2>"$tmp/rsyslogd.err" &
pids+=($!)
wait_socket "$tmp/sys.sock" $! || { cat "$tmp/rsyslogd.err" >&2; exit 1; }

{
  echo "# python handler bench ($(date -u +%Y-%m-%dT%H:%M:%SZ), n=$n reps=$reps)"
  echo "# host: $(uname -srm), $(nproc) CPUs; load average now: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# peers: rsyslogd $(rsyslogd -v 2>/dev/null | awk 'NR==1{print $2}' || true)"
  PYTHONDONTWRITEBYTECODE=1 python3 bench/python/handler_bench.py --n "$n" --reps "$reps" \
    --ring "$tmp/ls.ring" --socket "$tmp/ls.sock" --syslog "$tmp/sys.sock" \
    --rsyslog-out "$tmp/rsyslog.log" --file-out "$tmp/file.log" --logctl "$build/bin/logctl"
} 2>&1 | tee "$out"
exit "${PIPESTATUS[0]}"
