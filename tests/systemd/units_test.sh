#!/usr/bin/env bash
# units_test.sh: the systemd units pass `systemd-analyze verify`, and the
# service's `systemd-analyze security --offline=true` exposure is at most 2.0.
# Usage: units_test.sh <configured logsinkd.service> <logsinkd.socket> <logsinkd binary>
#                      [<logsinkd-syslog.socket>]
set -euo pipefail
service=$1 socket=$2 bin=$3 syslog_socket=${4:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# verify checks that ExecStart's binary exists: point it at the one just built,
# through a link in $tmp (the build's path may hold spaces, which ExecStart=
# would split).
ln -s "$bin" "$tmp/logsinkd"
sed -E "s|^ExecStart=[^ ]+|ExecStart=$tmp/logsinkd|" "$service" > "$tmp/logsinkd.service"
cp "$socket" "$tmp/logsinkd.socket"
units=(./logsinkd.socket ./logsinkd.service)
if [ -n "$syslog_socket" ]; then
  cp "$syslog_socket" "$tmp/logsinkd-syslog.socket"
  units+=(./logsinkd-syslog.socket)
fi
cd "$tmp"
out=$(systemd-analyze verify --man=no "${units[@]}" 2>&1) || {
  echo "systemd-analyze verify failed:"; echo "$out"; exit 1; }
if [ -n "$out" ]; then echo "systemd-analyze verify complained:"; echo "$out"; exit 1; fi
echo "systemd-analyze verify: ${#units[@]} units clean"
sec=$(systemd-analyze security --offline=true --no-pager ./logsinkd.service 2>&1)
score=$(printf '%s\n' "$sec" | sed -nE 's/.*Overall exposure level for logsinkd.service: ([0-9.]+).*/\1/p')
[ -n "$score" ] || { echo "no exposure score in:"; echo "$sec"; exit 1; }
echo "systemd-analyze security exposure: $score (limit 2.0)"
awk -v s="$score" 'BEGIN { exit !(s <= 2.0) }' || { echo "exposure $score > 2.0"; exit 1; }
