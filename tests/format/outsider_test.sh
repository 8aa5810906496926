#!/bin/bash
# outsider_test.sh BIN_DIR READER: proto/FORMAT.md against logctl. The real
# logsinkd writes a 1 MiB ring (tiers on, the default) with a mix of records:
# several tags at err/info/debug and other facilities, a line long enough to
# be cut (TRUNC), a program's stdout/stderr (logctl run), native records
# (logsink_hello: a string, integers, a double), and a flood of about 20 MB of
# random lines so that the ring laps many times and tiers 1 and 2 keep
# records. The daemon is stopped, then READER (outsider_reader, written from
# FORMAT.md alone) and `logctl cat --json` read the file; every record must
# match on every field both print. The flood's text comes from a seed printed
# first; LOGSINK_TEST_SEED=<n> reproduces a run.
set -euo pipefail

bin=$1
reader=$2
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

# Start logsinkd and wait for its READY=1 (sd_notify) on a socket of our own:
# a listener binds it and says so on a FIFO, the daemon gets NOTIFY_SOCKET,
# and the listener says READY when the daemon does (or EOF when it gives up).
mkfifo "$tmp/ready"
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
' "$tmp/notify" >"$tmp/ready" &
listener=$!
exec 3<"$tmp/ready"
read -r line <&3 && [ "$line" = bound ] || fail "the notify listener did not start"
NOTIFY_SOCKET=$tmp/notify "$bin/logsinkd" --socket "$tmp/s" --file "$tmp/r" --size 1MiB \
  --log-level warn 2>"$tmp/logsinkd.err" &
daemon=$!
if ! read -r line <&3 || [ "$line" != READY ]; then
  cat "$tmp/logsinkd.err" >&2
  fail "logsinkd did not report READY=1"
fi
exec 3<&-
wait "$listener" || true
listener=

send() {  # logctl send options..., lines on stdin
  "$bin/logctl" send --socket "$tmp/s" "$@" || fail "logctl send $*"
}

# n random-ish lines: "<tag> <i> <words> <hex>", lengths varying from about
# 30 to 200 bytes (awk's generator, seeded).
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

lines errs 200 "$seed" | send -t errs -p err
lines quiet 200 "$((seed + 1))" | send -t quiet -p info
lines mail 50 "$((seed + 2))" | send -t mailer -p mail.warning
"$bin/logsink_hello" "$tmp/s" >"$tmp/hello.out" || fail "logsink_hello"
# A line over 8192 bytes is stored cut, with TRUNC.
head -c 10000 /dev/zero | tr '\0' x | send -t long -p notice 2>/dev/null
"$bin/logctl" run --socket "$tmp/s" -- sh -c 'echo to stdout; echo to stderr >&2' ||
  fail "logctl run"
# The flood: about 20 MB of debug lines into the 1 MiB ring, in two parts
# with other records between them.
lines chatty 100000 "$((seed + 3))" | send -t chatty -p debug
lines errs2 100 "$((seed + 4))" | send -t errs -p local3.crit
"$bin/logsink_hello" "$tmp/s" >>"$tmp/hello.out" || fail "logsink_hello"
lines chatty 100000 "$((seed + 5))" | send -t chatty -p debug
lines tail 20 "$((seed + 6))" | send -t tailer -p info

kill -TERM "$daemon"
status=0
wait "$daemon" || status=$?
daemon=
[ "$status" = 0 ] || { cat "$tmp/logsinkd.err" >&2; fail "logsinkd exited with status $status"; }

"$reader" --strict "$tmp/r" >"$tmp/outsider.jsonl" 2>"$tmp/outsider.err" ||
  { cat "$tmp/outsider.err" >&2; fail "outsider_reader reported problems (above)"; }
cat "$tmp/outsider.err"
"$bin/logctl" cat --json --utc --file "$tmp/r" >"$tmp/logctl.jsonl" 2>"$tmp/logctl.err" ||
  { cat "$tmp/logctl.err" >&2; fail "logctl cat --json failed"; }

python3 - "$tmp/outsider.jsonl" "$tmp/logctl.jsonl" <<'EOF'
import json, sys

ours = [json.loads(l) for l in open(sys.argv[1])]
theirs = [json.loads(l) for l in open(sys.argv[2])]
print(f"outsider_test: outsider_reader {len(ours)} records, logctl {len(theirs)}")

# FORMAT.md's levels (syslog 0..7) by the names logctl prints.
LEVELS = ["emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"]

def ours_as_logctl(r):
    """Our record with logctl's JSON field names and values."""
    m = {k: r.get(k) for k in ("seq", "ts_ns", "pid", "uid", "gid", "app", "comm", "unit",
                               "boot_id", "monotonic_ns")}
    m["level"] = LEVELS[r["level"]] if r.get("level") is not None else None
    if r["kind"] == "dropped":
        m["dropped"] = r["dropped"]
        m["dropped_since_ns"] = r["dropped_since_ns"]
    else:
        for k in ("tid", "fmt", "file", "line", "site", "args"):
            if k in r:
                m[k] = r[k]
        m["truncated"] = r.get("truncated")
    return m

def theirs_fields(t, keys):
    return {k: t.get(k) for k in keys}

bad = 0
for i in range(max(len(ours), len(theirs))):
    if i >= len(ours) or i >= len(theirs):
        side = "logctl" if i >= len(ours) else "outsider_reader"
        extra = theirs[i] if i >= len(ours) else ours[i]
        print(f"record {i}: only {side} has it: {json.dumps(extra)[:300]}")
        bad += 1
        continue
    o = ours_as_logctl(ours[i])
    t = theirs_fields(theirs[i], o.keys())
    diff = {k: (o[k], t[k]) for k in o if o[k] != t[k]}
    if diff:
        bad += 1
        if bad <= 20:
            print(f"record {i} (seq {o['seq']}, tier {ours[i].get('tier')} block {ours[i].get('block')}): "
                  + "; ".join(f"{k}: outsider {a!r:.120} logctl {b!r:.120}" for k, (a, b) in diff.items()))
tiers = {}
for r in ours:
    tiers[r["tier"]] = tiers.get(r["tier"], 0) + 1
print(f"outsider_test: records per tier {dict(sorted(tiers.items()))}; "
      f"{min(len(ours), len(theirs))} compared, {bad} mismatches")
kinds = {"truncated": sum("truncated" in r for r in ours),
         "gap-numbered tiers": sum(r["tier"] > 0 for r in ours),
         "args": sum(bool(r.get("args")) for r in ours)}
print(f"outsider_test: coverage {kinds}")
if bad or not ours:
    sys.exit(1)
if not all(kinds.values()):
    print("outsider_test: the mix did not reach every kind of record above")
    sys.exit(1)
EOF
echo "outsider_test: ok"
