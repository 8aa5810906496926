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
. bench/lib/daemon.sh
bench_setup python-bench "$@"
build=${BUILD_DIR:-build/bench-release}
n=${PY_N:-100000} reps=${PY_REPS:-5} out=bench/results/python.txt
if [ $mode = smoke ]; then n=${PY_N:-2000} reps=${PY_REPS:-1} out=bench/results/python-smoke.txt; fi

command -v rsyslogd >/dev/null || { log "rsyslogd missing (scripts/deps.sh)"; exit 1; }
bench_build "$build" logsinkd daemon_launch logctl
logsinkd_start "$tmp/logsinkd.err" --socket "$tmp/ls.sock" --file "$tmp/ls.ring" --size 64MiB \
  --log-level warn

rsyslogd_start "$tmp" "$tmp/sys.sock" "$tmp/rsyslog.log"

{
  echo "# python handler bench ($(date -u +%Y-%m-%dT%H:%M:%SZ), n=$n reps=$reps)"
  echo "# host: $(uname -srm), $(nproc) CPUs; load average now: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# peers: rsyslogd $(rsyslogd -v 2>/dev/null | awk 'NR==1{print $2}' || true)"
  PYTHONDONTWRITEBYTECODE=1 python3 bench/python/handler_bench.py --n "$n" --reps "$reps" \
    --ring "$tmp/ls.ring" --socket "$tmp/ls.sock" --syslog "$tmp/sys.sock" \
    --rsyslog-out "$tmp/rsyslog.log" --file-out "$tmp/file.log" --logctl "$bin/logctl"
} 2>&1 | tee "$out"
exit "${PIPESTATUS[0]}"
