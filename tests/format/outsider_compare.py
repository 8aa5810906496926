#!/usr/bin/env python3
"""outsider_compare.py OURS THEIRS NAME COVERAGE: compares outsider_reader's
records (OURS, JSON lines) with `logctl cat --json` (THEIRS) record by record
on every field both print, mapped to logctl's names; prints each mismatch
with its record number (at most 20) and appends to COVERAGE one line naming
the kinds of record the ring held. Exit 1 on any mismatch.

outsider_compare.py --many OURS JOBS CAT: each line of JOBS is one comparison
of OURS with another of logctl's outputs, its fields separated by tabs:
  tail N THEIRS NAME   THEIRS is `logctl tail -n N --json`, compared with the
                       last N of OURS (FORMAT.md, "Reading": the last n
                       records are tier 0's, then tier 1's, then tier 2's);
  from SEQ THEIRS NAME THEIRS was read from a cursor; compared with OURS from
                       SEQ on (FORMAT.md, "Tiers": a cursor lands in the
                       first tier holding a record at or after it).
CAT is `logctl cat --json` of the ring, already compared with OURS record
by record: a job's output must then be CAT's lines for those records, byte
for byte (the same flags print a record the same way), which is as strict
and costs a string comparison per record; a job that differs (or a CAT whose record numbers
are not OURS') is compared field by field for the message. The test makes
some 20 such comparisons per ring: parsing each output as JSON was most of
its time. Exit 1 if any comparison fails.

outsider_compare.py --cursor-seqs OURS: the record numbers to try cursors at."""

import json
import re
import sys

# --cursor-seqs OURS: prints record numbers to try cursors at: the first
# record, the first of tier 1 and of tier 0, numbers missing in a gap of
# tiers 1 and 2, one in the middle of tier 0, the last record.
if sys.argv[1] == "--cursor-seqs":
    rs = [json.loads(line) for line in open(sys.argv[2])]
    seqs = {rs[0]["seq"], rs[-1]["seq"], rs[len(rs) - len(rs) // 4]["seq"]} if rs else set()
    for t in (0, 1):
        seqs.update(r["seq"] for r in rs[:1] if any(x["tier"] == t for x in rs))
        firsts = [r["seq"] for r in rs if r["tier"] == t]
        if firsts:
            seqs.add(firsts[0])
    for t in (1, 2):
        for a, b in zip(rs, rs[1:]):
            if a["tier"] == b["tier"] == t and b["seq"] > a["seq"] + 1:
                seqs.add(a["seq"] + 1)
                break
    print(" ".join(str(x) for x in sorted(seqs)))
    sys.exit(0)


def pairs_hook(pairs):
    """A JSON object as a dict that remembers a repeated key (RENDERING.md,
    "Named fields": each name once)."""
    d = dict(pairs)
    if len(d) != len(pairs):
        d["\0repeated"] = True
    return d


def load(line):
    # "fields" is compared in order and for repeated names: read such lines
    # with the hook only (it slows every object down).
    return json.loads(line, object_pairs_hook=pairs_hook) if '"fields":{' in line else json.loads(line)


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
        for k in ("tid", "fmt", "file", "line", "args", "args_raw", "unknown_site"):
            m[k] = r.get(k)
        m["mismatch"] = r.get("mismatch")
        if not r.get("inline"):
            m["site"] = r["site"]
        m["truncated"] = r.get("truncated")
        # Named fields, in order (RENDERING.md, "Named fields").
        m["fields"] = fields_of(r)
    return m


def fields_of(r):
    f = r.get("fields")
    return None if f is None else list(f.items())


def seen_in(ours):
    """What the ring held, for the coverage check at the end of the test."""
    return {
        "record": any(r["kind"] == "record" for r in ours),
        "dropped": any(r["kind"] == "dropped" for r in ours),
        "truncated": any("truncated" in r for r in ours),
        "inline": any(r.get("inline") for r in ours),
        "tier1": any(r["tier"] == 1 for r in ours),
        "tier2": any(r["tier"] == 2 for r in ours),
        "gap": any(a["tier"] == b["tier"] > 0 and a["block"] == b["block"] and b["seq"] > a["seq"] + 1
                   for a, b in zip(ours, ours[1:])),
        "double": any(isinstance(x, float) for r in ours for x in r.get("args") or []),
        "filter_from_opened": any(r["ts_ns"] != r["filter_ns"] for r in ours),
        "before_boot": any(r.get("before_boot") for r in ours),
        "unknown_site": any(r.get("unknown_site") for r in ours),
        "syslog": any((r.get("file") or "").startswith("syslog:") for r in ours),
        "threads": len({r.get("tid") for r in ours if r["kind"] == "record"}) > 2,
        # Named fields: of a site with FIELDS (string table, inline), of a
        # trailing "%.0s" run, and every type of value.
        "fields": any(r.get("fields_site") and r.get("fields") for r in ours),
        "fields_inline": any(r.get("fields_site") and r.get("inline") and r.get("fields") for r in ours),
        "fields_old": any(r.get("fields") and not r.get("fields_site") for r in ours),
        "field_types": {type(v).__name__ for r in ours for v in (r.get("fields") or {}).values()}
        >= {"str", "int", "float", "bool"},
    }


def compare(ours, tail, first, theirs_path, name, coverage):
    """One comparison; True when both readers agree."""
    if tail is not None:
        ours = ours[-tail:] if tail else []
    if first is not None:
        ours = [r for r in ours if r["seq"] >= first]
    theirs = [load(line) for line in open(theirs_path)]
    lost_bad = 0
    if first is not None:
        # A reader positioned by a cursor counts the numbers it does not get as
        # lost (FORMAT.md, "Tiers"): logctl prints {"lost":N} where numbers are
        # missing between the cursor and the next record or between two records.
        want, prev = [], first - 1
        for r in ours:
            if r["seq"] > prev + 1:
                want.append((prev, r["seq"] - prev - 1))
            prev = r["seq"]
        got, prev, kept = [], first - 1, []
        for t in theirs:
            if "lost" in t and "seq" not in t:
                got.append((prev, t["lost"]))
            else:
                kept.append(t)
                prev = t.get("seq", prev)
        theirs = kept
        if got != want:
            lost_bad = 1
            print(f"outsider_test: {name}: lost reports (after seq, count): outsider {want[:5]} logctl {got[:5]}")

    bad = 0
    for i in range(max(len(ours), len(theirs))):
        if i >= len(ours) or i >= len(theirs):
            side = "logctl" if i >= len(ours) else "outsider_reader"
            extra = theirs[i] if i >= len(ours) else ours[i]
            bad += 1
            if bad <= 20:
                print(f"outsider_test: {name}: record {i}: only {side} has it: {json.dumps(extra)[:300]}")
            continue
        o = ours_as_logctl(ours[i])
        t = {k: theirs[i].get(k) for k in o}
        if "fields" in o:
            t["fields"] = fields_of(theirs[i])
        diff = {k: (o[k], t[k]) for k in o if o[k] != t[k]}
        if diff:
            bad += 1
            if bad <= 20:
                print(f"outsider_test: {name}: record {i} (seq {o['seq']}, tier {ours[i]['tier']} "
                      f"block {ours[i]['block']}): " +
                      "; ".join(f"{k}: outsider {a!r:.150} logctl {b!r:.150}" for k, (a, b) in diff.items()))

    tiers = {}
    for r in ours:
        tiers[r["tier"]] = tiers.get(r["tier"], 0) + 1
    print(f"outsider_test: {name}: outsider_reader {len(ours)} records, logctl {len(theirs)}; "
          f"per tier {dict(sorted(tiers.items()))}; {min(len(ours), len(theirs))} compared, "
          f"{bad} mismatches")

    if coverage:
        seen = seen_in(ours)
        with open(coverage, "a") as f:
            f.write(" ".join(k for k, v in seen.items() if v) + "\n")
    return not (bad or lost_bad or (not ours and tail is None and first is None))


# A record's line as logctl --json prints it starts with its number.
SEQ = re.compile(r'\{"seq":(\d+),')


def lost_reports(lines, first):
    """(record number before, count) of each {"lost":N} line of a read from
    a cursor at `first`, and the other lines."""
    got, kept, prev = [], [], first - 1
    for line in lines:
        if line.startswith('{"lost":'):
            got.append((prev, json.loads(line)["lost"]))
        else:
            kept.append(line)
            m = SEQ.match(line)
            prev = int(m.group(1)) if m else prev
    return got, kept


def lost_wanted(seqs, first):
    want, prev = [], first - 1
    for s in seqs:
        if s < first:
            continue
        if s > prev + 1:
            want.append((prev, s - prev - 1))
        prev = s
    return want


if sys.argv[1] == "--many":
    ours_seqs = [json.loads(line)["seq"] for line in open(sys.argv[2])]
    cat = open(sys.argv[4]).read().splitlines()
    cat_seqs = [int(m.group(1)) if m else None for m in map(SEQ.match, cat)]
    same = cat_seqs == ours_seqs
    ours_all = None
    ok = True
    for job in open(sys.argv[3]):
        kind, arg, theirs_path, jname = job.rstrip("\n").split("\t")
        n = int(arg)
        lines = open(theirs_path).read().splitlines()
        if kind == "tail":
            good = same and lines == (cat[-n:] if n else [])
        else:
            got, kept = lost_reports(lines, n)
            good = (same and kept == [c for c, s in zip(cat, cat_seqs) if s >= n] and
                    got == lost_wanted(ours_seqs, n))
        if good:
            print(f"outsider_test: {jname}: {len(lines)} lines, each as logctl cat prints it")
            continue
        if ours_all is None:
            ours_all = [load(line) for line in open(sys.argv[2])]
        if compare(ours_all, n if kind == "tail" else None, n if kind == "from" else None,
                   theirs_path, jname, None):
            print(f"outsider_test: {jname}: its lines differ from logctl cat's for the same records")
        ok = False
    sys.exit(0 if ok else 1)
sys.exit(0 if compare([load(line) for line in open(sys.argv[1])], None, None, sys.argv[2], sys.argv[3],
                      sys.argv[4]) else 1)
