#!/usr/bin/env bash
# logctl_bench.sh: `logctl tail -n 100` on a full 1 GiB ring vs a
# full 1 MiB ring, `logctl cat` records/s to /dev/null, and `logctl sites`
# records/s, each beside the baseline of coreutils `tail -n 100` / `cat` /
# an awk count by program on a plain-text log of the same size with the same
# messages, in the same run. Warm page cache (one untimed
# run first); median of RUNS runs timed with bash's $EPOCHREALTIME (each time
# includes the fork + exec of the command, for both sides alike).
#
# usage: bench/logctl_bench.sh [BIN_DIR] [--smoke]
#   BIN_DIR holds logctl and ring_fill (default: build/bench-release/bin).
#   RUNS=N runs of each tail (default 11), CAT_RUNS=N runs of each cat (default 3),
#   CAT_SIZE=bytes of the ring `cat` reads (default 64 MiB).
set -euo pipefail

bin=build/bench-release/bin
smoke=0
for a in "$@"; do
  case "$a" in
    --smoke) smoke=1 ;;
    *) bin=$a ;;
  esac
done
runs=${RUNS:-11}
cat_runs=${CAT_RUNS:-3}
big=$((1 << 30))
small=$((1 << 20))
cat_size=${CAT_SIZE:-$((64 << 20))}
if [ "$smoke" = 1 ]; then
  runs=3
  big=$((16 << 20))
  cat_size=$((4 << 20))
fi
logctl=$bin/logctl
fill=$bin/ring_fill
for b in "$logctl" "$fill"; do
  [ -x "$b" ] || { echo "logctl_bench: $b not built" >&2; exit 1; }
done

dir=$(mktemp -d "${TMPDIR:-/tmp}/logsink-logctl-bench-XXXXXX")
trap 'rm -rf "$dir"' EXIT

echo "== data (scratch dir $dir)"
for sz in $big $small $cat_size; do
  [ -e "$dir/$sz.ring" ] && continue
  out=$("$fill" --ring "$dir/$sz.ring" --size "$sz" --text "$dir/$sz.log")
  echo "$sz bytes: $(echo "$out" | tr '\n' ' ')"
done

# Microseconds one run of "$@" takes, output to /dev/null ($EPOCHREALTIME:
# bash's own clock, no fork of `date` inside the timed region).
time_us() {
  local t0 t1
  t0=${EPOCHREALTIME/./}
  "$@" >/dev/null
  t1=${EPOCHREALTIME/./}
  echo $((t1 - t0))
}
# Median of RUNS timed runs after one warm-up run (printed in ms).
median_ms() {
  "$@" >/dev/null
  local i
  for ((i = 0; i < runs; i++)); do time_us "$@"; done |
    sort -n | awk '{a[NR] = $1} END {m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.2f\n", m / 1e3}'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }

echo "== sanity: outputs"
n=$("$logctl" tail -n 100 --file "$dir/$big.ring" | wc -l)
echo "logctl tail -n 100 (big ring): $n lines (must be 100); last: $("$logctl" tail -n 1 --file "$dir/$big.ring")"
echo "tail -n 1 (big text): $(tail -n 1 "$dir/$big.log")"

echo "== tail -n 100, warm, median of $runs runs (ms)"
lt_big=$(median_ms "$logctl" tail -n 100 --file "$dir/$big.ring")
lt_small=$(median_ms "$logctl" tail -n 100 --file "$dir/$small.ring")
tt_big=$(median_ms tail -n 100 "$dir/$big.log")
tt_small=$(median_ms tail -n 100 "$dir/$small.log")
printf "%-12s | %14s | %14s | %s\n" file "logctl tail" "tail (text)" "logctl/tail"
printf "%-12s | %14s | %14s | %s\n" "$((big >> 20)) MiB" "$lt_big" "$tt_big" "$(ratio "$lt_big" "$tt_big")x"
printf "%-12s | %14s | %14s | %s\n" "1 MiB" "$lt_small" "$tt_small" "$(ratio "$lt_small" "$tt_small")x"
echo "logctl tail big/small: $(ratio "$lt_big" "$lt_small")x"

echo "== cat to /dev/null, $((cat_size >> 20)) MiB, warm, median of $cat_runs runs"
# Records printed (lines not starting with "--", logctl's notes about lost or
# corrupt blocks) and records present by `logctl stats`: they must agree.
recs=$("$logctl" cat --file "$dir/$cat_size.ring" | grep -vc '^--' || true)
present=$("$logctl" stats --file "$dir/$cat_size.ring" | awk '/^records:/ {print $2}')
echo "records present (logctl stats): $present; printed by logctl cat: $recs"
lines=$(wc -l <"$dir/$cat_size.log")
saved_runs=$runs
runs=$cat_runs
lc=$(median_ms "$logctl" cat --file "$dir/$cat_size.ring")
tc=$(median_ms cat "$dir/$cat_size.log")
runs=$saved_runs
lc_rate=$(awk -v n="$recs" -v ms="$lc" 'BEGIN {printf "%.0f", n / (ms / 1e3)}')
tc_rate=$(awk -v n="$lines" -v ms="$tc" 'BEGIN {printf "%.0f", n / (ms / 1e3)}')
printf "%-22s | %10s | %12s | %s\n" what records "ms" "records/s"
printf "%-22s | %10s | %12s | %s\n" "logctl cat (ring)" "$recs" "$lc" "$lc_rate"
printf "%-22s | %10s | %12s | %s\n" "cat (text, lines)" "$lines" "$tc" "$tc_rate"
echo "logctl cat / cat (records/s): $(ratio "$lc_rate" "$tc_rate")x"

echo "== sites (the census of call sites), $((cat_size >> 20)) MiB, warm, median of $cat_runs runs"
# Beside it the text way of asking which program fills a log: awk counting
# the lines of each program[pid] field in one pass.
saved_runs=$runs
runs=$cat_runs
ls_ms=$(median_ms "$logctl" sites --file "$dir/$cat_size.ring")
aw_ms=$(median_ms awk '{c[$3]++} END {for (k in c) print c[k], k}' "$dir/$cat_size.log")
runs=$saved_runs
ls_rate=$(awk -v n="$recs" -v ms="$ls_ms" 'BEGIN {printf "%.0f", n / (ms / 1e3)}')
aw_rate=$(awk -v n="$lines" -v ms="$aw_ms" 'BEGIN {printf "%.0f", n / (ms / 1e3)}')
printf "%-22s | %10s | %12s | %s\n" what records "ms" "records/s"
printf "%-22s | %10s | %12s | %s\n" "logctl sites (ring)" "$recs" "$ls_ms" "$ls_rate"
printf "%-22s | %10s | %12s | %s\n" "awk census (text)" "$lines" "$aw_ms" "$aw_rate"
echo "logctl sites / awk (records/s): $(ratio "$ls_rate" "$aw_rate")x"

echo "== targets"
verdict() { awk -v v="$1" -v t="$2" -v op="$3" 'BEGIN {ok = (op == "<") ? (v < t) : (op == "<=") ? (v <= t) : (v >= t); print ok ? "MET" : "MISSED"}'; }
echo "  [$(verdict "$lt_big" 50 '<')] logctl tail -n 100 on $((big >> 20)) MiB: ${lt_big} ms, target < 50 ms"
r=$(ratio "$lt_big" "$lt_small")
echo "  [$(verdict "$r" 2 '<=')] tail big/small: ${r}x, target <= 2x"
echo "  [$(verdict "$lc_rate" 1000000 '>=')] logctl cat: $lc_rate records/s, target >= 1000000"
