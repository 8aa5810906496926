#!/usr/bin/env bash
# run_fuzz.sh: builds the libFuzzer targets with clang (build dir build/fuzz,
# or $LOGSINK_FUZZ_BUILD_DIR) and runs each for SECONDS (default 30) on a copy
# of its seed corpus. Prints per target: executions, exec/s, coverage, and
# whether it crashed; exits non-zero if any target crashed, printing the
# reproducer's path (copy it into tests/fuzz/corpus/<target>/ once fixed).
# Usage: tests/fuzz/run_fuzz.sh [SECONDS] [TARGET...]
# (LOGSINK_FUZZ_JOBS: campaigns run at once and the build's -j, default 2)
set -uo pipefail

secs=${1:-30}
shift || true
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${LOGSINK_FUZZ_BUILD_DIR:-$root/build/fuzz}
jobs=${LOGSINK_FUZZ_JOBS:-2}
all=(frame syslog kmsg ring render printf levels encode)
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all[@]}")

CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DLOGSINK_FUZZ=ON -DLOGSINK_BUILD_BENCH=OFF >"$build.configure.log" 2>&1 \
  || { cat "$build.configure.log"; echo "run_fuzz: configure failed" >&2; exit 2; }

build_list=()
for t in "${targets[@]}"; do
  if [ "$t" = encode ] && ! grep -q '^LIBFFI_FOUND:INTERNAL=1' "$build/CMakeCache.txt"; then
    echo "run_fuzz: libffi-dev missing: not running encode" >&2
    continue
  fi
  build_list+=("$t")
done
ninja -C "$build" -j"$jobs" $(printf 'fuzz_%s ' "${build_list[@]}") >"$build.build.log" 2>&1 \
  || { tail -50 "$build.build.log"; echo "run_fuzz: build failed" >&2; exit 2; }

out=$build/fuzz-runs
mkdir -p "$out"
# run_one TARGET: one campaign; its line of the table goes to $out/TARGET.line,
# the lines of its log that explain a crash after it.
run_one() {
  local t=$1 work=$out/$1 log rc execs rate cov ft repro result maxlen
  rm -rf "$work"
  mkdir -p "$work/corpus" "$work/artifacts"
  cp "$root/tests/fuzz/corpus/$t/"* "$work/corpus/" 2>/dev/null || true
  log=$work/fuzz.log
  # -max_len: the ring seeds are files of up to 64 KiB; other targets 8 KiB.
  maxlen=8192
  [ "$t" = ring ] && maxlen=70000
  "$build/bin/fuzz_$t" "$work/corpus" -max_total_time="$secs" -rss_limit_mb=2048 \
    -max_len="$maxlen" -timeout=25 -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
    >"$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | awk '{print $2}')
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | awk '{print $2}')
  repro=$(ls "$work/artifacts/" 2>/dev/null | head -1)
  if [ $rc -ne 0 ] || [ -n "$repro" ]; then
    result="CRASH: $work/artifacts/$repro (log: $log)"
  else
    result=ok
  fi
  {
    printf '%-8s %12s %10s %8s %8s  %s\n' "$t" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "$result"
    if [ "$result" != ok ]; then
      grep -m1 -A12 -E 'ERROR: (AddressSanitizer|libFuzzer)|runtime error|FUZZ_CHECK failed|==ERROR' "$log" | head -25
    fi
  } >"$out/$t.line"
  [ "$result" = ok ]
}

# $jobs campaigns at a time (LOGSINK_FUZZ_JOBS, default 2: one per core here).
running=0
for t in "${build_list[@]}"; do
  if [ $running -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  rm -f "$out/$t.line"
  run_one "$t" &
  running=$((running + 1))
done
wait
crashed=0
printf '%-8s %12s %10s %8s %8s  %s\n' target execs exec/s cov ft result
for t in "${build_list[@]}"; do
  cat "$out/$t.line"
  grep -q '  ok$' <(head -1 "$out/$t.line") || crashed=1
done
exit $crashed
