# bench/lib/daemon.sh: what the shell benchmarks share, sourced by each
# after it has changed to the repository's root:
#   bench_setup NAME [--smoke]
#                           $mode (smoke with --smoke, else full), $build
#                           ($BUILD_DIR, default build/compare), the
#                           directory bench/results, a fresh
#                           scratch directory $tmp, the list $pids of
#                           the processes it started, log() (prefix NAME);
#                           at exit every process in $pids is stopped
#                           (stop_pid) and $tmp removed; a script that
#                           defines bench_on_exit has it called first
#   bench_build DIR TARGET...
#                           configures DIR (CMake, Ninja, BUILD_TYPE or
#                           Release, -Werror, no tests; not with
#                           BENCH_REUSE_BUILD=1, which uses DIR as it is
#                           configured) and builds the targets with -j
#                           JOBS (default 2); sets $bin
#   logsinkd_start ERR ARG...
#                           starts $bin/logsinkd ARG... through
#                           $bin/daemon_launch (build it too), which applies
#                           tests/common's rule (daemon_process.h): ready =
#                           its sd_notify READY=1 on a private NOTIFY_SOCKET
#                           within kHang (10 s); exiting first or not being
#                           ready by then is a failure (ERR is printed,
#                           status 1). Sets LOGSINKD_PID (logsinkd itself,
#                           e.g. for its CPU time) and LOGSINKD_STOP_PID (the
#                           process to give to stop_pid; in $pids)
#   stop_pid PID            stops PID and waits: a launcher stops its
#                           logsinkd with SIGTERM, up to kHang, then SIGKILL;
#                           any other process gets SIGTERM, 10 s, SIGKILL
#   stop_all                stop_pid for every process in $pids
#   rsyslogd_start DIR SOCKET OUT
#                           rsyslogd -n with imuxsock on SOCKET (no rate
#                           limit) -> omfile OUT, its files in DIR, stderr in
#                           DIR/rsyslogd.err; ready when SOCKET exists;
#                           sets RSYSLOGD_PID (in $pids)
#   wait_for SECONDS CMD... runs CMD every 10 ms until it succeeds, at most
#                           SECONDS (for peers that signal nothing: a socket
#                           file, a TCP port, a counter)
#   wait_socket PATH PID    wait_for 10 s until PATH is a socket, while PID lives

bench_setup() {  # name [--smoke]
  bench_name=$1
  mode=full
  [ "${2:-}" = --smoke ] && mode=smoke
  build=${BUILD_DIR:-build/compare}
  mkdir -p bench/results
  tmp=$(mktemp -d "/tmp/logsink-$1.XXXXXX")
  pids=()
  declare -gA bench_launchers=()
  trap bench_cleanup EXIT
  trap 'exit 130' INT TERM
}
bench_cleanup() {
  if declare -F bench_on_exit >/dev/null; then bench_on_exit || true; fi
  stop_all
  rm -rf "$tmp"
}
log() { echo "$bench_name: $*" >&2; }

bench_build() {  # dir target...
  local dir=$1; shift
  # BENCH_REUSE_BUILD=1: DIR is configured already (CI: its checkout's
  # Release tree) and is used as it is.
  if [ "${BENCH_REUSE_BUILD:-0}" != 1 ]; then
    cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" -DLOGSINK_WERROR=ON \
      -DLOGSINK_BUILD_TESTS=OFF >/dev/null
  fi
  ninja -C "$dir" -j "${JOBS:-2}" "$@" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log" >&2; exit 1; }
  bin=$dir/bin
}

wait_for() {  # seconds command...
  local end=$(($(date +%s) + $1)); shift
  until "$@"; do
    [ "$(date +%s)" -lt $end ] || return 1
    sleep 0.01
  done
}
socket_while() { [ -S "$1" ] || { kill -0 "$2" 2>/dev/null && return 1; return 0; }; }
wait_socket() {  # path pid
  wait_for 10 socket_while "$1" "$2" && [ -S "$1" ]
}

logsinkd_start() {  # err-file arg...
  local err=$1 fifo=$tmp/.launch.$$.$RANDOM line
  shift
  mkfifo "$fifo"
  "$bin/daemon_launch" "$err" "$bin/logsinkd" "$@" >"$fifo" &
  LOGSINKD_STOP_PID=$!
  pids+=("$LOGSINKD_STOP_PID")
  bench_launchers[$LOGSINKD_STOP_PID]=1
  # One line, then the launcher closes its output: no wait of our own here.
  read -r line <"$fifo" || line="failed: the launcher exited"
  rm -f "$fifo"
  if [ "${line%% *}" != ready ]; then
    log "logsinkd did not start: ${line#* }"
    cat "$err" >&2 2>/dev/null || true
    stop_pid "$LOGSINKD_STOP_PID"  # the launcher, exiting
    return 1
  fi
  LOGSINKD_PID=${line#ready }
}

rsyslogd_start() {  # dir socket out
  mkdir -p "$1/work"
  cat >"$1/rsyslog.conf" <<CONF
global(workDirectory="$1/work")
module(load="imuxsock" SysSock.Use="off")
input(type="imuxsock" Socket="$2" RateLimit.Interval="0")
*.* action(type="omfile" file="$3")
CONF
  rsyslogd -n -f "$1/rsyslog.conf" -i "$1/rsyslog.pid" 2>"$1/rsyslogd.err" &
  RSYSLOGD_PID=$!
  pids+=("$RSYSLOGD_PID")
  wait_socket "$2" "$RSYSLOGD_PID" || { log "rsyslogd did not start:"; cat "$1/rsyslogd.err" >&2; return 1; }
}

stop_pid() {  # pid
  local p=$1 q keep=()
  [ -n "$p" ] || return 0
  kill -TERM "$p" 2>/dev/null || true
  if [ -z "${bench_launchers[$p]:-}" ]; then
    wait_for 10 eval "! kill -0 $p 2>/dev/null" || kill -KILL "$p" 2>/dev/null || true
  fi
  wait "$p" 2>/dev/null || true
  unset "bench_launchers[$p]"
  for q in "${pids[@]}"; do [ "$q" = "$p" ] || keep+=("$q"); done
  pids=("${keep[@]}")
}
stop_all() {
  local p
  for p in "${pids[@]}"; do stop_pid "$p"; done
}
