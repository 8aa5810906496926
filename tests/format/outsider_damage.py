#!/usr/bin/env python3
"""outsider_damage.py RING CASE: damages a copy of a ring file in place, as
proto/FORMAT.md's damage rules describe, for outsider_test.sh to check that
outsider_reader and logctl skip the same parts. Cases:

  mixed          a byte of string-table entry 2 (the entry is skipped, its
                 records show an unknown site), a payload byte of tier 0's
                 slot 40 and of tier 2's slot 0 (CRC), tier 1's slot 3 zeroed
  slots0-7       tier 0's slots 0..7 zeroed (the tail search has no anchor)
  newest-crc     a payload byte of tier 0's newest block (a torn write)
  claims-newer   tier 0's slot 50 claims a far newer block (CRC fails)
  superblock     the superblock copy of the higher generation fails its CRC
  dictionary     a byte of the dictionary (its CRC fails: every block of
                 codec 3 is reported, the others still read)
"""

import struct
import sys

path, case = sys.argv[1], sys.argv[2]
with open(path, "r+b") as f:
    b = bytearray(f.read())
    size, count = struct.unpack_from("<II", b, 32)
    strtab_off = struct.unpack_from("<Q", b, 40)[0]
    blocks_off = struct.unpack_from("<Q", b, 56)[0]
    kept, errors = struct.unpack_from("<II", b, 96)
    first = [0, count - kept - errors, count - errors]

    def slot(tier, i):
        return blocks_off + (first[tier] + i) * size

    def seq(tier, i):
        o = slot(tier, i)
        return struct.unpack_from("<Q", b, o + 8)[0] if b[o:o + 4] == b"LSBK" else -1

    if case == "mixed":
        e1 = 20 + sum(struct.unpack_from("<HH", b, strtab_off + 14))
        b[strtab_off + e1 + 22] ^= 0x20
        b[slot(0, 40) + 200] ^= 0xFF
        b[slot(2, 0) + 200] ^= 0xFF
        b[slot(1, 3):slot(1, 4)] = bytes(size)
    elif case == "slots0-7":
        b[slot(0, 0):slot(0, 8)] = bytes(8 * size)
    elif case == "newest-crc":
        newest = max(range(first[1]), key=lambda i: seq(0, i))
        b[slot(0, newest) + 200] ^= 1
    elif case == "claims-newer":
        struct.pack_into("<Q", b, slot(0, 50) + 8, 10**9)
    elif case == "dictionary":
        dict_off = strtab_off + struct.unpack_from("<Q", b, 48)[0]
        assert struct.unpack_from("<I", b, 104)[0] > 0, "the ring has no dictionary region"
        b[dict_off + 32 + 100] ^= 0x20
    elif case == "superblock":
        gens = [struct.unpack_from("<Q", b, o + 16)[0] for o in (0, 4096)]
        b[(0 if gens[0] > gens[1] else 4096) + 30] ^= 1
    else:
        sys.exit(f"outsider_damage.py: unknown case {case}")
    f.seek(0)
    f.write(b)
