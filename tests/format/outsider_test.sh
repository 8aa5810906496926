#!/bin/bash
# outsider_test.sh BIN_DIR READER FIELDS: proto/FORMAT.md and render/RENDERING.md
# against logctl. The real
# logsinkd writes 1 MiB rings (tiers on, the default) with a mix of records:
# several tags at err/info/debug and other facilities, a line long enough to
# be cut (TRUNC), a program's stdout/stderr (logctl run), native records
# (logsink_hello, and outsider_native.py: every argument type, DROPPED, clocks
# an hour off, a full string table; FIELDS: outsider_fields, records with
# named fields through liblogsink, before the table fills and after, when
# its sites are stored inline), and a flood of about 10 MB of random
# lines so that the ring laps many times and tiers 1 and 2 keep records. One
# ring per codec, per other geometry (4 KiB and 32 KiB blocks, no tiers), one
# ring written by three daemon runs with different codecs, damaged copies of
# the zstd ring, the document's worked example built from its dumps, the
# version-5, version-6 and version-7 fixtures (tests/data/format5, format6,
# format7) as they are, upgraded to version 8 by logsinkd and with
# superblock copies of both versions, and a ring of field sites no daemon
# writes (outsider_fields_ring.py). The daemon is stopped, then READER (outsider_reader,
# written from FORMAT.md and RENDERING.md alone) and `logctl cat --json` read each file; every
# record must match on every field both print, as must `logctl tail -n N`,
# reads from cursors and filtered reads. The text comes from a seed printed first;
# LOGSINK_TEST_SEED=<n> reproduces a run.
set -euo pipefail

bin=$1
reader=$2
fields_bin=$3
seed=${LOGSINK_TEST_SEED:-$(((RANDOM << 15) | RANDOM))}
echo "outsider_test: seed $seed (LOGSINK_TEST_SEED=$seed reproduces the run)"

tmp=$(mktemp -d /tmp/logsink-outsider.XXXXXX)
daemon=
listener=
cleanup() {
  [ -z "$daemon" ] || kill -KILL "$daemon" 2>/dev/null || true
  [ -z "$listener" ] || kill -KILL "$listener" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "outsider_test: FAIL: $*" >&2
  exit 1
}

here=$(cd "$(dirname "$0")" && pwd)

# Start logsinkd on DIR/r with compression CODEC and wait for its READY=1
# (sd_notify) on a socket of our own: a listener binds it and says so on a
# FIFO, the daemon gets NOTIFY_SOCKET, and the listener says READY when the
# daemon does (or ends without it when it gives up).
start_daemon() {  # dir codec [more configuration [size]]
  printf '[syslog]\nsocket = "%s"\n[ring]\ncompression = "%s"\n%s\n' "$1/syslog" "$2" "${3:-}" \
    >"$1/logsinkd.toml"
  rm -f "$1/ready" "$1/notify"
  mkfifo "$1/ready"
  python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
print("bound", flush=True)
s.settimeout(60)
try:
    while b"READY=1" not in s.recv(4096):
        pass
    print("READY", flush=True)
except socket.timeout:
    pass
' "$1/notify" >"$1/ready" &
  listener=$!
  local line
  exec 3<"$1/ready"
  read -r line <&3 && [ "$line" = bound ] || fail "the notify listener did not start"
  NOTIFY_SOCKET=$1/notify "$bin/logsinkd" --config "$1/logsinkd.toml" --socket "$1/s" \
    --file "$1/r" --size "${4:-1MiB}" --log-level warn 2>>"$1/logsinkd.err" &
  daemon=$!
  if ! read -r line <&3 || [ "$line" != READY ]; then
    cat "$1/logsinkd.err" >&2
    fail "logsinkd did not report READY=1"
  fi
  exec 3<&-
  wait "$listener" || true
  listener=
}

stop_daemon() {  # dir
  kill -TERM "$daemon"
  local status=0
  wait "$daemon" || status=$?
  daemon=
  [ "$status" = 0 ] || { cat "$1/logsinkd.err" >&2; fail "logsinkd exited with status $status"; }
}

# n random-ish lines: "<tag> <i> <words> <hex>", lengths varying from about
# 10 to 120 bytes (awk's generator, seeded).
lines() {  # tag n seed
  awk -v tag="$1" -v n="$2" -v seed="$3" 'BEGIN {
    srand(seed)
    split("alpha beta gamma delta request reply user port disk cache miss hit " \
          "error timeout retry open close read write commit abort", w, " ")
    for (i = 0; i < n; i++) {
      s = tag " " i
      k = int(rand() * 12)
      for (j = 0; j < k; j++) s = s " " w[1 + int(rand() * 22)]
      h = int(rand() * 12)
      s = s " "
      for (j = 0; j < h; j++) s = s sprintf("%08x", int(rand() * 4294967296))
      print s
    }
  }'
}

# The mix of records, with a flood of FLOOD debug lines in two halves.
write_mix() {  # dir flood seed
  local d=$1 half=$(($2 / 2)) sd=$3
  send() { "$bin/logctl" send --socket "$d/s" "$@" || fail "logctl send $*"; }
  lines errs 200 "$sd" | send -t errs -p err
  lines quiet 200 "$((sd + 1))" | send -t quiet -p info
  lines mail 50 "$((sd + 2))" | send -t mailer -p mail.warning
  "$bin/logsink_hello" "$d/s" >>"$d/hello.out" || fail "logsink_hello"
  "$fields_bin" "$d/s" "$((sd + 9))" || fail "outsider_fields"
  python3 "$here/outsider_native.py" "$d/s" "$((sd + 3))" 400 || fail "outsider_native.py"
  # Syslog datagrams (RFC 3164, RFC 5424, neither): free-text records of
  # the fixed sites of FORMAT.md, "Free-text records".
  python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
for m in (b"<13>Nov 26 18:00:00 host app[42]: a 3164 message",
          b"<165>1 2026-11-26T18:00:00.123Z host app 42 ID47 [ex@1 k=\"v\"] a 5424 message",
          b"<11>neither form, err"):
    s.sendto(m, sys.argv[1])
' "$d/syslog" || fail "syslog datagrams"
  # A line over 8192 bytes is stored cut, with TRUNC.
  head -c 10000 /dev/zero | tr '\0' x | send -t long -p notice 2>/dev/null
  "$bin/logctl" run --socket "$d/s" -- sh -c 'echo to stdout; echo to stderr >&2' ||
    fail "logctl run"
  lines chatty "$half" "$((sd + 4))" | send -t chatty -p debug
  lines errs2 100 "$((sd + 5))" | send -t errs -p local3.crit
  "$bin/logsink_hello" "$d/s" >>"$d/hello.out" || fail "logsink_hello"
  lines chatty "$half" "$((sd + 6))" | send -t chatty -p debug
  python3 "$here/outsider_native.py" "$d/s" "$((sd + 7))" 400 || fail "outsider_native.py"
  # The string table is full now: these sites are stored inline.
  "$fields_bin" "$d/s" "$((sd + 10))" late || fail "outsider_fields late"
  lines tail 20 "$((sd + 8))" | send -t tailer -p info
}

# Both readers on DIR/r, compared record by record.
compare() {  # dir name
  local d=$1
  "$reader" --strict "$d/r" >"$d/outsider.jsonl" 2>"$d/outsider.err" ||
    { cat "$d/outsider.err" >&2; fail "$2: outsider_reader reported problems (above)"; }
  sed "s/^/outsider_test: $2: /" "$d/outsider.err"
  cat "$d/outsider.err" >>"$tmp/summaries"
  "$bin/logctl" cat --json --utc --file "$d/r" >"$d/logctl.jsonl" 2>"$d/logctl.err" ||
    { cat "$d/logctl.err" >&2; fail "$2: logctl cat --json failed"; }
  python3 "$here/outsider_compare.py" "$d/outsider.jsonl" "$d/logctl.jsonl" "$2" "$tmp/coverage" ||
    return 1
  python3 "$here/outsider_filters.py" "$bin/logctl" "$d/r" "$d/outsider.jsonl" "$2" || return 1
  # The last n records, for n ending inside each tier and beyond the file;
  # logctl's outputs are compared with OURS by one outsider_compare.py --many
  # at the end (one parse of OURS for all of them).
  local t0 t1 all n jobs=$d/compare.jobs
  : >"$jobs"
  t0=$(grep -c '"tier":0' "$d/outsider.jsonl" || true)
  t1=$(grep -c '"tier":1' "$d/outsider.jsonl" || true)
  all=$(wc -l <"$d/outsider.jsonl")
  for n in 1 $((t0 - 1)) $((t0 + 1)) $((t0 + t1 + 1)) $((all + 10)); do
    [ "$n" -ge 1 ] || continue
    "$bin/logctl" tail -n "$n" --json --utc --file "$d/r" >"$d/tail.$n.jsonl" 2>"$d/logctl.err" ||
      { cat "$d/logctl.err" >&2; fail "$2: logctl tail -n $n --json failed"; }
    printf 'tail\t%s\t%s\t%s\n' "$n" "$d/tail.$n.jsonl" "$2 tail -n $n" >>"$jobs"
  done
  # Cursors (FORMAT.md, "Cursors"): the ring identity as 32 hex digits and
  # the record number in hex; --cursor S reads from the first record at or
  # after S, --after-cursor S after it.
  local id seq want last
  id=$(od -An -tx1 -j80 -N16 "$d/r" | tr -d ' \n')
  last=$(tail -n 1 "$d/outsider.jsonl" | sed 's/.*"seq":\([0-9]*\).*/\1/')
  want="-- cursor: ls1-$id-$(printf %x "$last")"
  "$bin/logctl" cat --show-cursor --file "$d/r" | tail -n 1 | grep -qx -- "$want" ||
    { echo "outsider_test: $2: --show-cursor does not print $want"; return 1; }
  for seq in $(python3 "$here/outsider_compare.py" --cursor-seqs "$d/outsider.jsonl"); do
    "$bin/logctl" cat --json --utc --file "$d/r" --cursor "ls1-$id-$(printf %x "$seq")" \
      >"$d/cursor.$seq.jsonl" 2>"$d/logctl.err" || { cat "$d/logctl.err" >&2; return 1; }
    printf 'from\t%s\t%s\t%s\n' "$seq" "$d/cursor.$seq.jsonl" "$2 --cursor at $seq" >>"$jobs"
    "$bin/logctl" cat --json --utc --file "$d/r" --after-cursor "ls1-$id-$(printf %x "$seq")" \
      >"$d/after.$seq.jsonl" 2>"$d/logctl.err" || { cat "$d/logctl.err" >&2; return 1; }
    printf 'from\t%s\t%s\t%s\n' "$((seq + 1))" "$d/after.$seq.jsonl" "$2 --after-cursor at $seq" >>"$jobs"
  done
  local rc=0
  python3 "$here/outsider_compare.py" --many "$d/outsider.jsonl" "$jobs" "$d/logctl.jsonl" || rc=1
  rm -f "$d"/tail.*.jsonl "$d"/cursor.*.jsonl "$d"/after.*.jsonl
  return $rc
}

# Both readers on DIR/r, records only (for the small rings below, where the
# filtered reads, tails and cursors of compare() would only cost time).
compare_records() {  # dir name [--strict]
  local d=$1
  "$reader" ${3:-} "$d/r" >"$d/outsider.jsonl" 2>"$d/outsider.err" ||
    { cat "$d/outsider.err" >&2; fail "$2: outsider_reader failed or reported problems (above)"; }
  sed "s/^/outsider_test: $2: /" "$d/outsider.err"
  "$bin/logctl" cat --json --utc --file "$d/r" >"$d/logctl.jsonl" 2>"$d/logctl.err" ||
    { cat "$d/logctl.err" >&2; fail "$2: logctl cat --json failed"; }
  python3 "$here/outsider_compare.py" "$d/outsider.jsonl" "$d/logctl.jsonl" "$2" "$tmp/coverage"
}

# Three rings, one per codec, each written by one daemon run with the full
# mix (about 10 MB of flood), and one ring written by three runs, one per
# codec, with a smaller flood each (a file that mixes codecs, reopened with
# partial blocks).
failed=0
# Flood lines per ring: 100,000 (about 10 MB: the zstd ring keeps ~20,000
# records, so it laps five times, and tiers 1 and 2 keep records with
# every codec; the coverage check at the end says so; 200,000 made this
# the suite's longest test, two minutes alone, for no kind of record more);
# LOGSINK_OUTSIDER_FLOOD makes it smaller where everything runs slower (the
# ASan preset: 60,000).
flood=${LOGSINK_OUTSIDER_FLOOD:-100000}
# A ring's comparisons run beside the writing of the next ring (the test
# keeps both cores busy; it runs alone): later() waits for the one before,
# then starts one in the background; settle() waits and records a failure.
pending=()
later() {
  settle
  "$@" &
  pending+=($!)
}
settle() {
  local p
  for p in "${pending[@]}"; do wait "$p" || failed=1; done
  pending=()
}
for codec in zstd lz4 none; do
  mkdir "$tmp/$codec"
  start_daemon "$tmp/$codec" "$codec"
  write_mix "$tmp/$codec" "$flood" "$seed"
  stop_daemon "$tmp/$codec"
  later compare "$tmp/$codec" "$codec"
done
# Other geometries: the smallest blocks, large blocks, and no tiers at all
# ([retention] shares 0: one ring, as in format version 2).
for variant in blocks4k blocks32k notiers; do
  case $variant in
  blocks4k) conf='block_size = "4KiB"' ;;
  blocks32k) conf='block_size = "32KiB"' ;;
  notiers) conf=$'[retention]\nkept_share = 0\nerror_share = 0' ;;
  esac
  mkdir "$tmp/$variant"
  start_daemon "$tmp/$variant" zstd "$conf"
  write_mix "$tmp/$variant" "$flood" "$((seed + 200))"
  stop_daemon "$tmp/$variant"
  later compare "$tmp/$variant" "$variant"
done
mkdir "$tmp/restarts"
# lz4 right after zstd: the lz4 writer finds zstd's partial block and seals
# it as it is (its entries need not fit a slot with lz4), then goes on.
for codec in zstd lz4 none; do
  start_daemon "$tmp/restarts" "$codec"
  write_mix "$tmp/restarts" 2000 "$((seed + 100))"
  stop_daemon "$tmp/restarts"
done
later compare "$tmp/restarts" restarts
settle

# Damage (FORMAT.md, "String table", "Blocks", "Reading"): copies of the zstd
# ring damaged as outsider_damage.py describes. Both readers must skip the
# same parts and agree on every other record.
for case in mixed slots0-7 newest-crc claims-newer superblock dictionary; do
  d=$tmp/damage-$case
  mkdir "$d"
  cp "$tmp/zstd/r" "$d/r"
  python3 "$here/outsider_damage.py" "$d/r" "$case"
  "$reader" "$d/r" >"$d/outsider.jsonl" 2>"$d/outsider.err" ||
    { cat "$d/outsider.err" >&2; fail "damage $case: outsider_reader failed"; }
  sed "s/^/outsider_test: damage $case: /" "$d/outsider.err"
  "$bin/logctl" cat --json --utc --file "$d/r" >"$d/logctl.jsonl" 2>"$d/logctl.err" ||
    { cat "$d/logctl.err" >&2; fail "damage $case: logctl cat --json failed"; }
  python3 "$here/outsider_compare.py" "$d/outsider.jsonl" "$d/logctl.jsonl" "damage $case" \
    "$tmp/coverage" || failed=1
done
for want in "string table: .* damaged bytes" "tier 0 slot 40 .*CRC mismatch" \
  "tier 2 slot 0 .*CRC mismatch" "tier 1 slot 3 .*never written"; do
  grep -q "$want" "$tmp/damage-mixed/outsider.err" ||
    { failed=1; echo "outsider_test: damage mixed: not reported: $want"; }
done
# logctl reports the damaged string-table stretch too (FORMAT.md, "String table").
grep -q "damaged string-table bytes" "$tmp/damage-mixed/logctl.err" ||
  { failed=1; echo "outsider_test: damage mixed: logctl did not report the string table"; }
grep -q "the dictionary region does not check" "$tmp/damage-dictionary/outsider.err" &&
  grep -q "codec 3 without the file's dictionary" "$tmp/damage-dictionary/outsider.err" ||
  { failed=1; echo "outsider_test: damage dictionary: not reported"; }

# The worked example of FORMAT.md, built from its dumps.
python3 "$here/outsider_example.py" "$here/../../proto/FORMAT.md" "$reader" "$bin/logctl" "$tmp" &&
  python3 "$here/outsider_compare.py" "$tmp/example.outsider.jsonl" "$tmp/example.logctl.jsonl" \
    example "$tmp/coverage" || failed=1

# Versions 5, 6 and 7 (FORMAT.md, "Versions"; tests/data/format5, format6,
# format7; format7's blocks carry field keys):
# the fixture as it is; a copy that logsinkd upgrades in place and adds
# records with fields to; and that copy with the lower generation's
# superblock naming the old version again (a crash between the two writes
# of the upgrade: not damage). The superblock's CRC does not cover the
# version.
old_version() {  # version seed
  local v=$1 d=$tmp/format$1
  mkdir "$d"
  cp "$here/../data/format$v/ring" "$d/r"
  chmod u+w "$d/r"
  compare_records "$d" "format$v" --strict || failed=1
  grep -q "r: version $v," "$d/outsider.err" ||
    { failed=1; echo "outsider_test: format$v: not read as version $v"; }
  start_daemon "$d" zstd 'block_size = "4KiB"' 32KiB
  "$fields_bin" "$d/s" "$2" || fail "outsider_fields (format$v)"
  stop_daemon "$d"
  compare "$d" "format$v-upgraded" || failed=1
  grep -q "r: version 8," "$d/outsider.err" && grep -q '"fields_site":true' "$d/outsider.jsonl" &&
    grep -q '"seq":0,' "$d/outsider.jsonl" ||
    { failed=1; echo "outsider_test: format$v-upgraded: not version 8 with the old and new records"; }
  python3 -c '
import struct, sys
with open(sys.argv[1], "r+b") as f:
    b = bytearray(f.read(8192))
    gens = [struct.unpack_from("<Q", b, c * 4096 + 16)[0] for c in (0, 1)]
    low = 0 if gens[0] < gens[1] else 1
    f.seek(low * 4096 + 8)
    f.write(struct.pack("<I", int(sys.argv[2])))
' "$d/r" "$v"
  compare_records "$d" "format$v-half-upgraded" --strict || failed=1
}
old_version 5 "$((seed + 300))"
old_version 6 "$((seed + 310))"
old_version 7 "$((seed + 320))"

# Field sites no daemon writes: lists that do not split, unknown flag bits,
# narrowing, inline level bytes (outsider_fields_ring.py).
d=$tmp/fields-ring
mkdir "$d"
python3 "$here/outsider_fields_ring.py" "$d/r" >/dev/null
compare_records "$d" "fields ring" || failed=1
grep -q "string table: 70 damaged bytes" "$d/outsider.err" &&
  grep -q "damaged string-table bytes (70)" "$d/logctl.err" ||
  { failed=1; echo "outsider_test: fields ring: the entries with unknown flag bits were not skipped"; }

[ "$failed" = 0 ] || fail "logctl and outsider_reader disagree (above)"

# Every kind of record and block the document describes was compared.
for want in record dropped truncated inline tier1 tier2 gap double filter_from_opened before_boot threads \
  unknown_site syslog fields fields_inline fields_old field_types; do
  grep -qw "$want" "$tmp/coverage" || fail "no ring held a record of kind '$want'"
done
for c in 1 2 3 4; do
  sed -n 's|.*none/zstd/lz4/zstd+dict \([0-9]*\)/\([0-9]*\)/\([0-9]*\)/\([0-9]*\),.*|\1 \2 \3 \4|p' \
    "$tmp/summaries" | awk -v c=$c '$c > 0 { found = 1 } END { exit !found }' ||
    fail "no block of codec $((c - 1)) (none, zstd, lz4, zstd+dict) was read"
done
grep "restarts/r:" "$tmp/summaries" |
  grep -q "none/zstd/lz4/zstd+dict [1-9][0-9]*/[1-9][0-9]*/[1-9][0-9]*/[0-9]*," ||
  fail "the ring written by three runs does not hold blocks of all three codecs"
echo "outsider_test: ok"
