#!/usr/bin/env bash
# run.sh: what a level change costs the daemon: N connected liblogsink
# clients that take levels (levels_clients: one connection each), R rules
# in force (set first, matching none of them); then, alternating in the same
# run, `logctl level` sets and resets a rule that matches every client (each
# change sends LEVELS to all N: "push") and one that matches none ("none",
# the baseline: the same request, nothing sent). Prints each kind's wall
# time per logctl (median), the daemon's longest loop turn before the
# changes and at the end, and level_pushes.
#
# usage: bench/levels/run.sh [--smoke]
#   full: N = 1000 (LEVELS_N), R = 200 (LEVELS_R), 20 changes of each kind;
#     writes bench/results/levels.txt. --smoke: N = 50, R = 20, 4 changes,
#     bench/results/levels-smoke.txt. Environment: BUILD_DIR (default
#     build/compare).
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/lib/daemon.sh
bench_setup levels-bench "$@"
if [ $mode = smoke ]; then n=${LEVELS_N:-50}; r=${LEVELS_R:-20}; k=4; out=bench/results/levels-smoke.txt
else n=${LEVELS_N:-1000}; r=${LEVELS_R:-200}; k=20; out=bench/results/levels.txt; fi

bench_build "$build" logsinkd daemon_launch logctl levels_clients
logsinkd_start "$tmp/d.err" --socket "$tmp/s" --file "$tmp/r" --size 16MiB \
  --log-level warn || exit 1
counter() { "$bin/logctl" stats --socket "$tmp/s" | awk -F= -v k="  $1" '$1 == k {print $2}'; }
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
ms_of() {  # logctl level ARGS...: its wall time in ms
  local s e
  s=$(date +%s%N)
  "$bin/logctl" level --socket "$tmp/s" "$@" >/dev/null
  e=$(date +%s%N)
  awk -v a="$s" -v b="$e" 'BEGIN {printf "%.2f\n", (b - a) / 1e6}'
}

for i in $(seq "$r"); do "$bin/logctl" level --socket "$tmp/s" --app "nobody$i" info >/dev/null; done
mkfifo "$tmp/hold"
"$bin/levels_clients" "$n" "$tmp/s" <"$tmp/hold" >"$tmp/clients.out" &
pids+=($!)
exec 9>"$tmp/hold"  # the clients stay until this closes
wait_for 60 grep -q ready "$tmp/clients.out" || { log "clients did not connect"; exit 1; }
turn_before=$(counter loop_turn_max_us)
pushes_before=$(counter level_pushes)

: >"$tmp/push"; : >"$tmp/none"
for i in $(seq "$k"); do
  ms_of debug >>"$tmp/push"            # every client: debug
  ms_of --app nobody0 debug >>"$tmp/none"
  ms_of --reset >>"$tmp/push"          # every client: back to its own
  ms_of --app nobody0 info >>"$tmp/none"
done
exec 9>&-
mp=$(median <"$tmp/push"); mn=$(median <"$tmp/none")
{
  echo "# bench/levels/run.sh ($mode): $n clients connected (liblogsink, one connection each), $r rules in force,"
  echo "# $((2 * k)) changes that reach every client (push) and $((2 * k)) that reach none, alternating"
  echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(uname -r) $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "push: logctl level median $mp ms ($(tr '\n' ' ' <"$tmp/push"))"
  echo "none: logctl level median $mn ms ($(tr '\n' ' ' <"$tmp/none"))"
  echo "ratio push/none: $(awk -v a="$mp" -v b="$mn" 'BEGIN {printf "%.2f", a / b}')"
  echo "level_pushes: $(( $(counter level_pushes) - pushes_before )) during the changes (expected $((2 * k * n)))"
  echo "loop_turn_max_us: $turn_before before the changes (accepts and HELLOs of $n clients), $(counter loop_turn_max_us) at the end"
} | tee "$out"
