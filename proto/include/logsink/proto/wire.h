/* wire.h: constants of the client <-> logsinkd protocol defined in
 * proto/PROTOCOL.md. Header-only C11, usable from C++. */
#ifndef LOGSINK_PROTO_WIRE_H
#define LOGSINK_PROTO_WIRE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LS_PROTO_VERSION 1u

/* frame := u32 len (LE, counts type + payload) | u8 type | payload */
#define LS_FRAME_HDR 5u
#define LS_FRAME_MAX (16u << 20)          /* hard protocol limit of len */
#define LS_FRAME_DEFAULT_MAX (256u << 10) /* logsinkd's default max_frame */

/* client -> daemon */
#define LS_F_HELLO 0x01u     /* u32 version | u32 flags (0) | str app */
#define LS_F_INTERN 0x02u    /* varint site | u8 level | varint line | str fmt | str file */
#define LS_F_RECORDS 0x03u   /* varint tid | record* */
#define LS_F_DROPPED 0x04u   /* varint count | varint since_ns | varint now_ns */
#define LS_F_STATS_REQ 0x05u /* empty */
#define LS_F_RING_REQ 0x06u  /* empty */
#define LS_F_READ_REQ 0x07u  /* u8 from | varint arg | varint flags (read.h) */

/* daemon -> client */
#define LS_F_REFUSE 0x81u      /* u32 highest version supported | str reason; then close */
#define LS_F_STATS 0x82u       /* varint n | n * (str name | varint value) */
#define LS_F_RING 0x83u        /* u8[16] ring_id | varint dev | varint ino | str path */
#define LS_F_READ_RECORD 0x84u /* one of the caller's records (read.h) */
#define LS_F_READ_LOST 0x85u   /* varint n: records overwritten before the read got to them */
#define LS_F_READ_END 0x86u    /* u8[16] ring_id | varint examined | varint next_seq */

/* str := varint byte length | bytes */
#define LS_APP_MAX 64u         /* longest app label */
#define LS_SITE_MAX (1u << 20) /* largest client site id */

/* record := varint (site << 1 | trunc) | [varint truncated_bytes if trunc]
 *           | zigzag varint ts delta (ns, from the previous record of the
 *             frame; the first record's is from 0) | args (by signature) */

#ifdef __cplusplus
}
#endif
#endif
