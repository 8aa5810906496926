"""outsider_codec.py: the encodings proto/FORMAT.md and proto/PROTOCOL.md
define, written from the documents (no logsink code), shared by the
outsider scripts that build files and frames by hand: CRC32C, LEB128
varints, zigzag, length-prefixed strings and little-endian doubles."""

import struct


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def zz(v):
    return ((v << 1) ^ (v >> 63)) & 0xFFFFFFFFFFFFFFFF


def s(b):
    if isinstance(b, str):
        b = b.encode()
    return varint(len(b)) + b


def d(x):
    return struct.pack("<d", x)
