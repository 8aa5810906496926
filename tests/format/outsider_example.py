#!/usr/bin/env python3
"""outsider_example.py FORMAT_MD READER LOGCTL DIR: builds the file of
proto/FORMAT.md's "Worked example" from its xxd dumps (superblock copy B as
the text says: copy A with generation 1 and its own CRC), then checks that
outsider_reader reads it without a report and finds the three records the
text lists, and that `logctl cat --json` agrees with it. The example is part
of the contract: its bytes, CRCs included, must be a valid file."""

import json
import re
import struct
import subprocess
import sys

from outsider_codec import crc32c

format_md, reader, logctl, out_dir = sys.argv[1:5]
text = open(format_md, encoding="utf-8").read()
example = text[text.index("## Worked example"):]


assert crc32c(b"123456789") == 0xE3069283
f = bytearray(20480)
for m in re.finditer(r"^([0-9a-f]{8}): ((?:[0-9a-f]{4} ?)+)", example, re.M):
    off = int(m.group(1), 16)
    data = bytes.fromhex(m.group(2).replace(" ", ""))
    f[off:off + len(data)] = data
b = bytearray(f[0:4096])
struct.pack_into("<Q", b, 16, 1)
struct.pack_into("<I", b, 12, crc32c(b[16:128]))
f[4096:8192] = b
path = out_dir + "/example.ring"
open(path, "wb").write(f)

bad = 0
r = subprocess.run([reader, "--strict", path], capture_output=True, text=True)
print(r.stderr.strip())
if r.returncode != 0:
    print("outsider_test: example: outsider_reader reported problems")
    bad += 1
recs = [json.loads(line) for line in r.stdout.splitlines()]
want = [(0, "alice", 22, 0), (1, "bob", 80, 1500), (2, "carol", -22, 1000)]
got = [(x["seq"], x["args"][0], x["args"][1], x["ts_ns"] - 1795399074000000000) for x in recs]
if got != want:
    print(f"outsider_test: example: records {got}, the text says {want}")
    bad += 1
for x in recs:
    if (x["pid"], x["uid"], x["gid"], x["app"], x["comm"], x["fmt"], x["file"], x["line"], x["level"],
            x["monotonic_ns"] - x["ts_ns"]) != (4242, 1000, 1000, "demo", "demo", "user %s port %d", "a.c",
                                                12, 6, 5 * 10**9 - 1795399074000000000):
        print(f"outsider_test: example: record {x['seq']} is not the text's: {x}")
        bad += 1
with open(out_dir + "/example.outsider.jsonl", "w") as o:
    o.write(r.stdout)
lr = subprocess.run([logctl, "cat", "--json", "--file", path], capture_output=True, text=True)
with open(out_dir + "/example.logctl.jsonl", "w") as o:
    o.write(lr.stdout)
if lr.returncode != 0:
    print(f"outsider_test: example: logctl cat failed: {lr.stderr}")
    bad += 1
print(f"outsider_test: example: {len(recs)} records, {bad} problems")
sys.exit(1 if bad else 0)
