// fuzz_ring.cc: fuzz target of the ring-file reader (storage RingReader) fed
// mutated files through an in-memory Env (no disk I/O). Byte 0 of the input
// holds options, the rest is the file. Option bit 0 recomputes every CRC
// (superblocks, string-table entries, blocks) before reading, so mutations
// reach the parsers behind the CRC checks. Runs Open, SeekOldest + Next until
// NotFound, Summarize, Verify, SeekLast, SeekTime and SeekEnd, and checks that
// records come in strictly increasing sequence order and that the bytes the
// reader asks for stay bounded by the file's real size. A filtered read
// (block summaries and the summary index) returns no more than the whole.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_check.h"
#include "logsink/proto/codec.h"
#include "logsink/proto/format.h"
#include "logsink/storage/ring.h"
#include "mem_env.h"

namespace {

using logsink::storage::Crc32c;

class CountingReporter : public logsink::storage::Reporter {
 public:
  void Corruption(uint64_t, std::string_view reason) override {
    n_corrupt++;
    sink += reason.size();
  }
  void Lost(uint64_t n) override { lost += n; }
  uint64_t n_corrupt = 0, lost = 0, sink = 0;
};

volatile uint64_t g_sink;

// Makes the CRCs of the superblocks, string-table entries and blocks match
// their (mutated) contents, using the geometry of superblock copy A.
void FixCrcs(std::vector<uint8_t> *file) {
  uint8_t *f = file->data();
  const uint64_t size = file->size();
  for (uint64_t off : {uint64_t{0}, uint64_t{LS_SB_SLOT}}) {
    if (off + LS_SB_SIZE > size) continue;
    ls_put_u32(f + off + LS_SB_OFF_CRC, Crc32c(f + off + 16, LS_SB_SIZE - 16));
  }
  if (size < LS_SB_SIZE) return;
  const uint64_t st_off = ls_get_u64(f + LS_SB_OFF_STRTAB_OFF);
  const uint64_t st_size = ls_get_u64(f + LS_SB_OFF_STRTAB_SIZE);
  if (st_off < size && st_size <= size - st_off) {
    uint64_t o = st_off, st_end = st_off + st_size;
    while (st_end - o >= LS_ST_HDR && ls_get_u32(f + o + LS_ST_OFF_ID) != 0) {
      uint64_t n = LS_ST_HDR + uint64_t{ls_get_u16(f + o + LS_ST_OFF_FMT_LEN)} +
                   ls_get_u16(f + o + LS_ST_OFF_FILE_LEN);
      if (n > st_end - o) break;
      ls_put_u32(f + o + LS_ST_OFF_CRC, Crc32c(f + o + 4, n - 4));
      o += n;
    }
  }
  const uint64_t bs = ls_get_u32(f + LS_SB_OFF_BLOCK_SIZE);
  const uint64_t count = ls_get_u32(f + LS_SB_OFF_BLOCK_COUNT);
  const uint64_t boff = ls_get_u64(f + LS_SB_OFF_BLOCKS_OFF);
  if (bs < LS_BLK_HDR || boff >= size) return;
  for (uint64_t i = 0; i < count && boff + i * bs + bs <= size; i++) {
    uint8_t *b = f + boff + i * bs;
    if (ls_get_u32(b + LS_BLK_OFF_MAGIC) != LS_BLK_MAGIC) continue;
    uint32_t used = ls_get_u32(b + LS_BLK_OFF_USED);
    if (used < LS_BLK_HDR || used > bs) continue;
    ls_put_u32(b + LS_BLK_OFF_CRC, Crc32c(b + 8, used - 8));
  }
  // Summary index entries that are not all zero (FORMAT.md, "Summary index").
  const uint64_t ioff = boff - std::min<uint64_t>(boff, ls_get_u64(f + LS_SB_OFF_INDEX_SIZE));
  for (uint64_t i = 0; i < count && ioff + (i + 1) * LS_IDX_ENTRY <= boff; i++) {
    uint8_t *e = f + ioff + i * LS_IDX_ENTRY;
    if (ls_get_u64(e + LS_IDX_OFF_SEQ) || ls_get_u32(e + LS_IDX_OFF_COUNT))
      ls_put_u32(e + LS_IDX_OFF_CRC, Crc32c(e + 4, LS_IDX_ENTRY - 4));
  }
}

// Reads every byte a record's views point at (ASan sees stale views).
uint64_t Touch(const logsink::storage::Record &r) {
  uint64_t s = 0;
  for (std::string_view v : {r.app, r.comm, r.site.fmt, r.site.file, r.args})
    for (char c : v) s += static_cast<uint8_t>(c);
  return s;
}

// Next() until NotFound (or an error), at most `limit` records. Returns the
// number read; checks the sequence order.
uint64_t Drain(logsink::storage::RingReader *r, uint64_t limit, uint64_t *first_seq) {
  logsink::storage::Record rec;
  uint64_t n = 0, last = 0;
  while (n < limit) {
    logsink::storage::Status s = r->Next(&rec);
    if (!s.ok()) break;
    if (n > 0) FUZZ_CHECK(rec.seq > last);
    if (n == 0 && first_seq) *first_seq = rec.seq;
    last = rec.seq;
    g_sink = Touch(rec);
    n++;
  }
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  const uint8_t opts = data[0];
  logsink::fuzz::MemEnv env;
  auto &file = env.files["/ring"];
  file.assign(data + 1, data + size);
  if (opts & 1) FixCrcs(&file);
  // Everything below reads each block a few times at most; ForEachSlot-style
  // scans read in chunks of up to 1 MiB. A reader that trusts a superblock
  // claiming more than the file holds would read terabytes of nothing.
  env.read_budget = 64 * (file.size() + (1u << 20));

  CountingReporter rep;
  logsink::storage::ReaderOptions ro;
  ro.crc_retries = 0;  // no writer races a file in memory: never sleep
  ro.crc_retry_sleep_us = 0;
  std::unique_ptr<logsink::storage::RingReader> r;
  if (!logsink::storage::RingReader::Open(&env, "/ring", &rep, ro, &r).ok()) return 0;
  FUZZ_CHECK(r != nullptr);
  const auto &l = r->layout();
  FUZZ_CHECK(l.block_count >= 2 && l.block_size >= LS_BLOCK_SIZE_MIN &&
             l.block_size <= LS_BLOCK_SIZE_MAX && (l.block_size & (l.block_size - 1)) == 0);

  // Bounds the work per input: a 64 KiB file with 4 KiB blocks holds < 8k records.
  constexpr uint64_t kLimit = 1u << 16;
  uint64_t oldest = 0;
  uint64_t all = Drain(r.get(), kLimit, &oldest);
  (void)r->SeekOldest();
  FUZZ_CHECK(Drain(r.get(), kLimit, nullptr) == all);  // a re-read sees the same

  logsink::storage::RingReader::Summary sum;
  if (r->Summarize(&sum).ok()) {
    FUZZ_CHECK(sum.oldest_seq <= sum.newest_seq && sum.oldest_block <= sum.newest_block);
    if (all > 0) FUZZ_CHECK(oldest >= sum.oldest_seq);
  }
  (void)r->Verify();

  // A filtered read (block summaries, the summary index): bounded, in order.
  logsink::storage::RecordFilter bf;
  bf.apps = {"app"};
  bf.levels = uint8_t(1u << (opts >> 5));
  r->SetFilter(&bf);
  if (r->SeekOldest().ok()) FUZZ_CHECK(Drain(r.get(), kLimit, nullptr) <= all);
  r->SetFilter(nullptr);

  const uint64_t last_n = 1 + (opts >> 1) % 64;
  if (r->SeekLast(last_n).ok()) FUZZ_CHECK(Drain(r.get(), kLimit, nullptr) <= last_n);
  uint64_t t = sum.oldest_ts_ns + (sum.newest_ts_ns - sum.oldest_ts_ns) / 2;
  if (r->SeekTime(t).ok()) Drain(r.get(), kLimit, nullptr);
  if (r->SeekEnd().ok()) FUZZ_CHECK(Drain(r.get(), kLimit, nullptr) == 0);  // nothing new
  return 0;
}
