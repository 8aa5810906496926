#!/usr/bin/env python3
"""outsider_filters.py LOGCTL RING OURS NAME: filtered reads of logctl against
outsider_reader's records (OURS, JSON lines), by the rules of proto/FORMAT.md:
a level filter by the site's level (a DROPPED report at warning, an unknown
site at info), an app filter by the source's label, and --since/--until by
the record's filter time ("What is trusted": its timestamp, or its block's
opened time when the timestamp is more than 60 s before it), starting at
the block before the first block opened at or after T - 60 s in reading
order, tiers chained (the block before the newest when none was). Prints one line per filter; exit 1 when
the record numbers differ."""

import datetime
import json
import re
import subprocess
import sys

logctl, ring, ours_path, name = sys.argv[1:5]
ours = [json.loads(line) for line in open(ours_path)]
SEQ = re.compile(r'\{"seq":(\d+),')
LEVELS = ["emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"]


def iso(ns):
    t = datetime.datetime.fromtimestamp(ns // 10**9, datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S") + ".%09dZ" % (ns % 10**9)


def run(args):
    out = subprocess.run([logctl, "cat", "--json", "--file", ring] + args, capture_output=True,
                         text=True)
    if out.returncode != 0:
        print(f"outsider_test: {name}: logctl cat {' '.join(args)}: exit {out.returncode}: "
              f"{out.stderr[:300]}")
        return None
    # Only the record numbers are compared: read from the start of each line
    # (logctl --json prints "seq" first), not parsed as JSON.
    seqs = [SEQ.match(line) for line in out.stdout.splitlines()]
    return [int(m.group(1)) if m else None for m in seqs]


cases = []
for level in ("err", "warning", "notice"):
    top = LEVELS.index(level)
    cases.append((["-p", level], lambda r, top=top: r["level"] <= top))
cases.append((["--app", "native"], lambda r: r.get("app") == "native"))
times = sorted(r["filter_ns"] for r in ours)
points = {times[0], times[len(times) // 3], times[len(times) // 2], times[-1]}
# Timestamps more than 60 s before their block opened, and far ahead.
points.update(r["ts_ns"] for r in ours if r["ts_ns"] != r["filter_ns"])
points.update(r["ts_ns"] for r in ours if r["ts_ns"] > times[len(times) // 2] + 600 * 10**9)


def since(t):
    """--since t: the blocks in reading order (tiers 2, 1, 0) from the one
    before the first opened at or after t - 60 s (the block before the
    newest when none was), the records there whose filter time is t or
    later."""
    order = []
    for r in ours:
        if not order or order[-1][0] != (r["tier"], r["block"]):
            order.append(((r["tier"], r["block"]), r.get("opened_ns") or 0))
    late = [i for i, (_, opened) in enumerate(order) if opened >= t - 60 * 10**9]
    i = late[0] if late else len(order) - 1
    start = {key for key, _ in order[max(i - 1, 0):]}
    return lambda r: (r["tier"], r["block"]) in start and r["filter_ns"] >= t


for t in sorted(points)[:12]:
    cases.append((["--since", iso(t)], since(t)))
    cases.append((["--until", iso(t)], lambda r, t=t: r["filter_ns"] <= t))

bad = 0
for args, keep in cases:
    want = [r["seq"] for r in ours if keep(r)]
    got = run(args)
    if got != want:
        bad += 1
        first = next((i for i, (a, b) in enumerate(zip(got or [], want)) if a != b), None)
        print(f"outsider_test: {name}: logctl cat {' '.join(args)}: {len(got or [])} records, "
              f"outsider {len(want)} (first difference at record {first})")
print(f"outsider_test: {name}: {len(cases)} filtered reads compared, {bad} differ")
sys.exit(1 if bad else 0)
