/* format.h: constants of the ring file, the on-disk format defined in
 * proto/FORMAT.md. Header-only C11, usable from C++. Offsets are in bytes from
 * the start of the structure they belong to; all integers are little-endian. */
#ifndef LOGSINK_PROTO_FORMAT_H
#define LOGSINK_PROTO_FORMAT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LS_FORMAT_VERSION 8u
/* The oldest version this build reads. Versions 5 (no fields), 6 (no
 * field keys in block summaries) and 7 (no brace formats) are version 8
 * without what came later (FORMAT.md, "Versions"): readers read them as
 * they are, and a writer opening one makes it version 8 in place. Versions 1 (56-byte block
 * header, entries stored as they are), 2 (one ring of blocks, no tiers), 3
 * (no compression dictionary) and 4 (no summary index) are refused with a
 * message naming both versions. */
#define LS_FORMAT_VERSION_MIN 5u

/* ---- superblock: two copies, at offsets 0 and LS_SB_SLOT ---------------- */
#define LS_SB_MAGIC "LSRING\r\n" /* 8 bytes; \r\n catches text-mode mangling */
#define LS_SB_SLOT 4096u         /* bytes reserved for each copy */
#define LS_SB_SIZE 128u          /* bytes of a copy covered by its CRC */
#define LS_SB_REGION (2u * LS_SB_SLOT)
#define LS_SB_OFF_MAGIC 0        /* u8[8] */
#define LS_SB_OFF_VERSION 8      /* u32 LS_FORMAT_VERSION */
#define LS_SB_OFF_CRC 12         /* u32 CRC32C of bytes [16, LS_SB_SIZE) */
#define LS_SB_OFF_GENERATION 16  /* u64 higher wins; copy = generation % 2 */
#define LS_SB_OFF_FILE_SIZE 24   /* u64 the file's size, never changes */
#define LS_SB_OFF_BLOCK_SIZE 32  /* u32 power of two, 4 KiB .. 1 MiB */
#define LS_SB_OFF_BLOCK_COUNT 36 /* u32 >= 2 */
#define LS_SB_OFF_STRTAB_OFF 40  /* u64 start of the string table region */
#define LS_SB_OFF_STRTAB_SIZE 48 /* u64 its size (multiple of 4096) */
#define LS_SB_OFF_BLOCKS_OFF 56  /* u64 start of block slot 0 */
#define LS_SB_OFF_CREATED_NS 64  /* u64 wall clock at creation, ns since epoch */
#define LS_SB_OFF_TAIL_HINT 72   /* u64 a recent block sequence number (hint only) */
#define LS_SB_OFF_RING_ID 80     /* u8[16] random at creation; all zero = none yet */
#define LS_RING_ID_LEN 16
#define LS_SB_OFF_KEPT_BLOCKS 96   /* u32 slots of tier 1 (kept), 0 or >= 2 */
#define LS_SB_OFF_ERROR_BLOCKS 100 /* u32 slots of tier 2 (errors), 0 or >= 2 */
#define LS_SB_OFF_DICT_SIZE 104    /* u32 bytes of the dictionary region: 0 or LS_DICT_REGION */
#define LS_SB_OFF_INDEX_SIZE 112   /* u64 bytes of the summary index region (0 = none) */
/* bytes [108, 112) and [120, 128) are reserved and zero */

/* ---- the dictionary region: dict_size bytes after the string table ------- */
/* (FORMAT.md, "Dictionary"). Written once per file, before any block uses it. */
#define LS_DICT_REGION 32768u     /* its size, when the file has one */
#define LS_DICT_MIN_BLOCKS 64u    /* a file gets one when this many blocks remain after it */
#define LS_DICT_MAGIC 0x4344534cu /* "LSDC" read as little-endian u32 */
#define LS_DICT_HDR 32u
#define LS_DICT_OFF_MAGIC 0       /* u32 */
#define LS_DICT_OFF_CRC 4         /* u32 CRC32C of bytes [8, LS_DICT_HDR + len) */
#define LS_DICT_OFF_LEN 8         /* u32 bytes of the dictionary, 1 .. region - LS_DICT_HDR */
#define LS_DICT_OFF_ID 12         /* u32 the zstd dictionary's own id, nonzero */
#define LS_DICT_OFF_WRITTEN_NS 16 /* u64 wall clock when it was written, ns since epoch */
/* bytes [24, 32) reserved, 0; then the dictionary (a zstd dictionary, RFC 8878 section 5) */

/* ---- the summary index: one entry per block slot, after the dictionary --- */
/* (FORMAT.md, "Summary index"). A copy of each sealed block's summary, so a
 * filtered read skips blocks without reading them. Present when the file has
 * a dictionary region and still keeps LS_DICT_MIN_BLOCKS slots after it. */
#define LS_IDX_ENTRY 128u        /* bytes per entry; entry i belongs to slot i */
#define LS_IDX_OFF_CRC 0         /* u32 CRC32C of bytes [4, LS_IDX_ENTRY); all-zero entry = none */
#define LS_IDX_OFF_TIER 4        /* u8 the tier of the block (the slot's tier) */
#define LS_IDX_OFF_LEVELS 5      /* u8 the block header's levels */
#define LS_IDX_OFF_FLAGS 6       /* u8 LS_IDX_F_* */
#define LS_IDX_F_FIELD_KEYS 0x1u /* the header has LS_BLK_F_FIELD_KEYS */
/* byte 7 reserved, 0 */
#define LS_IDX_OFF_SEQ 8        /* u64 the block's sequence number */
#define LS_IDX_OFF_FIRST_REC 16 /* u64 its first record's sequence number */
#define LS_IDX_OFF_COUNT 24     /* u32 its record count */
#define LS_IDX_OFF_BLOCK_CRC 28 /* u32 its CRC field (LS_BLK_OFF_CRC) */
#define LS_IDX_OFF_MIN_TIME 32  /* u64 the header's smallest filter time */
#define LS_IDX_OFF_MAX_TIME 40  /* u64 the header's largest filter time */
#define LS_IDX_OFF_BOOT_ID 48   /* u8[16] the header's boot identity */
#define LS_IDX_OFF_BLOOM 64     /* u8[64] the header's source filter */

/* Tiers (FORMAT.md, "Tiers"): the block slots are cut into up to three rings.
 * Tier 0 (recent) takes every record; a record leaving it may be kept in
 * tier 1, and one leaving tier 1 in tier 2. Slots: tier 0 first, then 1, 2. */
#define LS_TIERS 3u
/* The most blocks after a tier's oldest that a fairness rewrite of the
 * last tier writes (FORMAT.md, "Tiers"). */
#define LS_TIER_REWRITE_MAX 8u

/* ---- string table entries, packed from the start of the region ---------- */
#define LS_ST_HDR 20u         /* fixed part of an entry */
#define LS_ST_OFF_CRC 0       /* u32 CRC32C of bytes [4, LS_ST_HDR + fmt_len + file_len) */
#define LS_ST_OFF_ID 4        /* u32 > previous id (ids may be skipped, never reused), >= 1 */
#define LS_ST_OFF_LINE 8      /* u32 source line */
#define LS_ST_OFF_LEVEL 12    /* u8 syslog level 0..7 */
#define LS_ST_OFF_FLAGS 13    /* u8 LS_ST_F_* (format 6; 0 in format 5) */
#define LS_ST_OFF_FMT_LEN 14  /* u16 */
#define LS_ST_OFF_FILE_LEN 16 /* u16 */
/* bytes [18, 20) reserved, 0; then fmt bytes, then file bytes (no NULs) */
#define LS_ST_F_FIELDS 0x01u /* the format carries fields (proto/fields.h) */
#define LS_ST_MAX_FMT 4096u  /* longest format string, bytes */
#define LS_ST_MAX_FILE 1024u /* longest file name, bytes */

/* ---- blocks: block_count fixed-size slots from blocks_off --------------- */
#define LS_BLK_MAGIC 0x4b42534cu /* "LSBK" read as little-endian u32 */
#define LS_BLK_HDR 176u
#define LS_BLK_OFF_MAGIC 0      /* u32 */
#define LS_BLK_OFF_CRC 4        /* u32 CRC32C of bytes [8, used) */
#define LS_BLK_OFF_SEQ 8        /* u64 block sequence number; slot = seq % block_count */
#define LS_BLK_OFF_FIRST_REC 16 /* u64 sequence number of the block's first record */
#define LS_BLK_OFF_BASE_TS 24   /* u64 ns timestamp the first record's delta is from */
#define LS_BLK_OFF_MAX_TS 32    /* u64 largest record timestamp in the block */
#define LS_BLK_OFF_USED 40      /* u32 bytes of the slot used: header + stored payload */
#define LS_BLK_OFF_COUNT 44     /* u32 records (kind RECORD and DROPPED) */
#define LS_BLK_OFF_FLAGS 48     /* u32 LS_BLK_F_* */
#define LS_BLK_OFF_OPENED                                                                      \
  52                             /* u32 writer's clock when the first entry went in: 1 + whole \
                                    seconds since the ring's creation; 0 unknown */
#define LS_BLK_OFF_RAW 56        /* u32 bytes of entries once the payload is decoded */
#define LS_BLK_OFF_CODEC 60      /* u8 LS_CODEC_*: how the payload is stored */
#define LS_BLK_OFF_LEVELS 61     /* u8 bit L set: some record has level L (summary) */
#define LS_BLK_OFF_TIER 62       /* u8 the tier whose slots hold the block (0..2) */
#define LS_BLK_OFF_RESERVED 63   /* u8 zero */
#define LS_BLK_OFF_MIN_TIME 64   /* u64 smallest filter time of the records (summary) */
#define LS_BLK_OFF_MAX_TIME 72   /* u64 largest filter time of the records (summary) */
#define LS_BLK_OFF_BOOT_ID 80    /* u8[16] /proc/sys/kernel/random/boot_id of the writer */
#define LS_BLK_OFF_OPEN_MONO 96  /* u64 CLOCK_MONOTONIC ns when the block opened */
#define LS_BLK_OFF_OPEN_REAL 104 /* u64 CLOCK_REALTIME ns at the same instant */
#define LS_BLK_OFF_BLOOM 112     /* u8[64] 512-bit filter of uids, pids, apps (summary) */
#define LS_BLK_BLOOM_BYTES 64u
#define LS_BLK_BLOOM_HASHES 3u
#define LS_BOOT_ID_LEN 16
#define LS_BLK_F_SEALED 0x1u /* the writer moved on; the block will not grow */
/* The summary filter also holds every field of every record (FORMAT.md,
 * "Block summaries"): LS_BLOOM_KEY_FIELD or LS_BLOOM_KEY_FIELD_ANY keys. */
#define LS_BLK_F_FIELD_KEYS 0x2u
/* At most this many field keys go into one block's filter. */
#define LS_BLK_FIELD_KEYS_MAX 32u
/* A decoded payload is at most this many times the block size: decoders
 * refuse a block claiming more (a decompression bomb). */
#define LS_BLK_RAW_FACTOR 32u

/* Payload codecs (LS_BLK_OFF_CODEC). */
#define LS_CODEC_NONE 0u      /* the entries as they are: used = LS_BLK_HDR + raw */
#define LS_CODEC_ZSTD 1u      /* one zstd frame (RFC 8878) holding the entries */
#define LS_CODEC_LZ4 2u       /* one LZ4 block (no frame header) holding the entries */
#define LS_CODEC_ZSTD_DICT 3u /* one zstd frame compressed with the file's dictionary */

/* Keys of the summary filter: a type byte, then the value. */
#define LS_BLOOM_KEY_UID 'u'       /* then u32 uid */
#define LS_BLOOM_KEY_PID 'p'       /* then u32 pid */
#define LS_BLOOM_KEY_APP 'a'       /* then the app label's bytes */
#define LS_BLOOM_KEY_COMM 'c'      /* then the process name's bytes */
#define LS_BLOOM_KEY_UNIT 'n'      /* then the systemd unit's name */
#define LS_BLOOM_KEY_FIELD 'f'     /* then NAME '=' the value's text */
#define LS_BLOOM_KEY_FIELD_ANY 'F' /* then NAME: its values are not all keyed */

#define LS_BLOCK_SIZE_MIN 4096u
#define LS_BLOCK_SIZE_MAX (1u << 20)
#define LS_BLOCK_SIZE_DEFAULT 8192u

/* ---- entries inside a block (see FORMAT.md "Entries") ------------------- */
/* entry := varint(len) head payload ; len counts head + payload */
#define LS_E_KIND_MASK 0x03u
#define LS_E_RECORD 0x00u   /* a log record */
#define LS_E_SOURCE 0x01u   /* declares a source (connection) for this block */
#define LS_E_DROPPED 0x02u  /* a client reported N dropped records */
#define LS_E_F_SOURCE 0x04u /* RECORD/DROPPED: varint source id follows */
#define LS_E_F_TID 0x08u    /* RECORD: varint thread id follows */
#define LS_E_F_TRUNC 0x10u  /* RECORD: varint truncated byte count follows */
#define LS_E_F_INLINE 0x20u /* RECORD: inline site instead of a string id */
#define LS_E_F_GAP 0x40u    /* RECORD/DROPPED: varint gap first: seq = previous + 1 + gap */

#ifdef __cplusplus
}
#endif
#endif
