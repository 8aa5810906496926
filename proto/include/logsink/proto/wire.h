/* wire.h: constants of the client <-> logsinkd protocol defined in
 * proto/PROTOCOL.md. Header-only C11, usable from C++. */
#ifndef LOGSINK_PROTO_WIRE_H
#define LOGSINK_PROTO_WIRE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version a client speaks in its HELLO. logsinkd takes 1 and 2; 2
 * adds capabilities (PROTOCOL.md, "Versions and capabilities"). */
#define LS_PROTO_VERSION 2u
#define LS_PROTO_VERSION_MIN 1u

/* frame := u32 len (LE, counts type + payload) | u8 type | payload */
#define LS_FRAME_HDR 5u
#define LS_FRAME_MAX (16u << 20)          /* hard protocol limit of len */
#define LS_FRAME_DEFAULT_MAX (256u << 10) /* logsinkd's default max_frame */

/* client -> daemon */
#define LS_F_HELLO \
  0x01u /* u32 version | u32 flags | str app [| u32 pid] [v2: | u32 caps | str levels] */
#define LS_F_INTERN \
  0x02u /* varint site | u8 level [| LS_SITE_FIELDS] | varint line | str fmt | str file */
#define LS_F_RECORDS 0x03u    /* varint tid | record* */
#define LS_F_DROPPED 0x04u    /* varint count | varint since_ns | varint now_ns */
#define LS_F_STATS_REQ 0x05u  /* empty */
#define LS_F_RING_REQ 0x06u   /* empty */
#define LS_F_READ_REQ 0x07u   /* u8 from | varint arg | varint flags (read.h) */
#define LS_F_LEVEL_REQ 0x08u  /* u8 op | level rule (frame.h) */
#define LS_F_CENSUS 0x09u     /* varint n | n * census site: the client's call sites (frame.h) */
#define LS_F_CENSUS_REQ 0x0au /* empty: the connected programs' call sites, please */
#define LS_F_RECORDS_AT 0x0bu /* varint slot | varint end | RECORDS payload (shm.h) */

/* daemon -> client */
#define LS_F_REFUSE 0x81u        /* u32 highest version supported | str reason; then close */
#define LS_F_STATS 0x82u         /* varint n | n * (str name | varint value) */
#define LS_F_RING 0x83u          /* u8[16] ring_id | varint dev | varint ino | str path */
#define LS_F_READ_RECORD 0x84u   /* one of the caller's records (read.h) */
#define LS_F_READ_LOST 0x85u     /* varint n: records overwritten before the read got to them */
#define LS_F_READ_END 0x86u      /* u8[16] ring_id | varint examined | varint next_seq */
#define LS_F_WELCOME 0x87u       /* u32 version | u32 caps | str levels (answers a v2 HELLO) */
#define LS_F_LEVELS 0x88u        /* str levels: the run-time level rules now in force */
#define LS_F_LEVEL_ANSWER 0x89u  /* varint status | str message | rules | clients (frame.h) */
#define LS_F_CENSUS_ANSWER 0x8au /* varint n | n * census client (frame.h) */
#define LS_F_SHM 0x8bu /* u32 slots | u32 slot_bytes | u32 sites_bytes + a memfd (shm.h) */

/* Capabilities (HELLO v2 and WELCOME: u32 caps) */
#define LS_CAP_LEVELS 0x1u  /* the client applies LEVELS frames */
#define LS_CAP_CENSUS 0x2u  /* the client sends its call sites (CENSUS frames) */
#define LS_CAP_FIELDS 0x4u  /* INTERN's level byte may carry LS_SITE_FIELDS (fields.h) */
#define LS_CAP_SHM 0x8u     /* the client stages records in a region the daemon gives it (shm.h) */
#define LS_CAP_BRACES 0x10u /* INTERN's format may be a brace format (braces.h) */

/* str := varint byte length | bytes */
#define LS_APP_MAX 64u            /* longest app label */
#define LS_LEVELS_TEXT_MAX 16384u /* longest level-rules text (HELLO v2, WELCOME, LEVELS) */
#define LS_SITE_MAX (1u << 20)    /* largest client site id */

/* record := varint (site << 1 | trunc) | [varint truncated_bytes if trunc]
 *           | zigzag varint ts delta (ns, from the previous record of the
 *             frame; the first record's is from 0) | args (by signature) */

#ifdef __cplusplus
}
#endif
#endif
