// ring.h: the ring file (proto/FORMAT.md): one preallocated file of fixed size
// holding a string table and a ring of fixed-size blocks. RingWriter appends
// records (one writer per file); RingReader reads them oldest -> newest, seeks
// (tail, time), follows a live writer and reports what it lost or skipped.
// Shared by logsinkd (writer) and logctl (reader). The records it returns
// and the filter it skips blocks by are record.h's and record_filter.h's.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "logsink/proto/format.h"
#include "logsink/storage/env.h"
#include "logsink/storage/record.h"
#include "logsink/storage/record_filter.h"
#include "logsink/storage/status.h"

namespace logsink::storage {

// Where everything is in a ring file (the superblock's geometry).
struct Layout {
  uint64_t file_size = 0;
  uint32_t block_size = 0;
  uint32_t block_count = 0;
  uint64_t strtab_off = 0;
  uint64_t strtab_size = 0;
  uint64_t blocks_off = 0;
  // The dictionary region (FORMAT.md, "Dictionary"): dict_size bytes at
  // dict_off = strtab_off + strtab_size, before the first slot; 0 when the
  // file is too small to give one up (fewer than LS_DICT_MIN_BLOCKS slots
  // would be left).
  uint64_t dict_off = 0;
  uint32_t dict_size = 0;
  // The summary index (FORMAT.md, "Summary index"): index_size bytes at
  // index_off = dict_off + dict_size, one LS_IDX_ENTRY entry per slot; 0 when
  // the file has no dictionary region or would keep fewer than
  // LS_DICT_MIN_BLOCKS slots after it. In a tier's layout (Tier()) index_off
  // is the entry of the tier's first slot; index_size stays the region's.
  uint64_t index_off = 0;
  uint64_t index_size = 0;
  uint64_t created_ns = 0;
  // 16 random bytes written at creation (FORMAT.md, "Superblock"): tells
  // this ring from a recreated or another one. All zero in a file created
  // before identities existed, until a writer opens it and assigns one.
  std::array<uint8_t, 16> ring_id{};
  // Tiers (FORMAT.md, "Tiers"): the slots of tier 1 (kept) and tier 2
  // (errors), each 0 or at least 2; tier 0 (recent) has the rest. Fixed at
  // creation. In a tier's own layout (Tier()) both are 0 and `tier` names it.
  uint32_t kept_blocks = 0, error_blocks = 0;
  uint8_t tier = 0;

  // Computes the layout of a file of file_size bytes. strtab_size 0 picks the
  // default: file_size / 64 rounded up to 4 KiB, clamped to [4 KiB, 16 MiB].
  // InvalidArgument (with a message saying why and the minimum size) when the
  // block size is not a power of two in [4 KiB, 1 MiB], strtab_size is not a
  // multiple of 4096, or the file cannot hold the superblock, the string table
  // and at least 2 blocks. A dictionary region of LS_DICT_REGION bytes comes
  // after the string table when at least LS_DICT_MIN_BLOCKS slots remain,
  // and the summary index after it on the same condition.
  static Status Compute(uint64_t file_size, uint32_t block_size, uint64_t strtab_size, Layout *out);
  uint64_t SlotOffset(uint64_t block_seq) const {
    return blocks_off + (block_seq % block_count) * block_size;
  }
  uint64_t capacity() const { return uint64_t(block_count) * block_size; }
  // Where block block_seq's summary index entry is (when index_size != 0).
  uint64_t IndexOffset(uint64_t block_seq) const {
    return index_off + (block_seq % block_count) * LS_IDX_ENTRY;
  }
  // Slots of tier t (0, 1, 2) in a whole file's layout.
  uint32_t TierBlocks(int t) const {
    return t == 1 ? kept_blocks : t == 2 ? error_blocks : block_count - kept_blocks - error_blocks;
  }
  // Tier t's slots as a ring of their own: blocks_off at its first slot,
  // block_count its slots (tier 0 first, then 1, then 2).
  Layout Tier(int t) const;
  // Sets kept_blocks and error_blocks to these shares of block_count (each
  // in [0, 0.5], together at most 0.75; a share that gives a tier fewer than
  // 2 slots gives it none). InvalidArgument with the reason otherwise.
  Status SetTiers(double kept_share, double error_share);
  // ring_id as 32 lowercase hex digits, or "" when the ring has none yet.
  std::string RingIdHex() const;
};

// Who sent a record: one connection of the daemon. id is unique per file for
// the daemon's lifetime (the daemon continues from RingWriter::next_source_id()).
struct Source {
  uint64_t id = 0;
  uint32_t pid = 0, uid = 0, gid = 0;  // from SO_PEERCRED, trusted
  std::string_view app;                // the client's label, untrusted
  std::string_view comm;               // /proc/<pid>/comm at accept
  // The systemd unit of the sender's cgroup (/proc/<pid>/cgroup), stamped by
  // the daemon; empty when it has none or it could not be read.
  std::string_view unit{};
};

struct RecordIn {
  const Source *source = nullptr;  // required; an id names one source for the writer's life
  uint64_t tid = 0;
  uint32_t site_id = 0;               // from Intern(); 0 = use inline_site
  const Site *inline_site = nullptr;  // required when site_id == 0
  std::string_view signature;         // the site's argument signature (proto/printf.h)
  uint64_t ts_ns = 0;
  const uint8_t *args = nullptr;  // argument bytes, already valid for signature
  size_t args_len = 0;
  uint64_t truncated = 0;  // bytes the client already cut from strings
};

struct WriterOptions {
  uint64_t file_size = 64ull << 20;
  uint32_t block_size = 8192;
  uint64_t strtab_size = 0;  // 0 = default (see Layout::Compute)
  uint32_t mode = 0640;
  // When the existing file has another geometry: false -> Status::Mismatch,
  // true -> remove it and create a new one.
  bool recreate_on_mismatch = false;
  // An existing ring owned by another uid than the effective one is refused
  // (InvalidArgument) unless this is set: whoever owns the file can read
  // every record written into it.
  bool allow_other_owner = false;
  // How sealed and flushed blocks store their entries (FORMAT.md,
  // "Compressed blocks"): LS_CODEC_ZSTD (the default), LS_CODEC_LZ4 or
  // LS_CODEC_NONE. A block decides on its own: a payload that does not
  // shrink is stored as it is. Each block names its codec, so the setting
  // may change between opens of the same file.
  uint8_t codec = LS_CODEC_ZSTD;
  // A ring of a format version this build does not read (older than
  // LS_FORMAT_VERSION_MIN) is moved aside to PATH.vN (see
  // RingWriter::moved_aside()) and a new one created; false: OldVersion.
  // One it reads is made the current version in place (upgraded_from()).
  bool move_old_version = true;
  int level = 1;  // zstd's level (ZSTD_minCLevel()..ZSTD_maxCLevel()); lz4 ignores it
  // The file's compression dictionary (FORMAT.md, "Dictionary"): with zstd,
  // a file with a dictionary region and no dictionary yet collects this
  // many bytes of entries from the blocks it seals, trains a dictionary from
  // them (on a thread of its own), writes it into the region and compresses
  // every block after that with it. 0: never train (a dictionary already in
  // the file is still used).
  uint32_t dictionary_train_bytes = 1u << 20;
  // Retention (FORMAT.md, "Tiers"): shares of the slots given to tier 1
  // (kept) and tier 2 (errors) when the file is created (Layout::SetTiers);
  // 0 and 0: one ring that keeps the newest blocks. Part of the geometry: a
  // file with other tiers is a mismatch (see recreate_on_mismatch).
  double kept_share = 0, error_share = 0;
  // A record leaving tier 0 is kept in tier 1 when its level is at or above
  // kept_level (syslog numbering: at most), one leaving tier 1 is kept in
  // tier 2 at error_level; with fairness, also when it is not from the
  // source holding the most bytes of the tier it leaves (by uid, then by
  // app label within that uid). Until tier 1 has filled once it keeps
  // everything that leaves tier 0 (when tier 2 exists: the last tier only
  // ever takes what the policy keeps).
  uint8_t kept_level = 5, error_level = 3;
  bool fairness = true;
  // A writer thread (RingWriter, "Writer thread"): with queue_bytes > 0,
  // Append and AppendDropped copy the record into a queue of at most about
  // queue_bytes bytes and return; a thread of the writer's own appends,
  // seals, compresses and writes it, in order. 0: the caller's thread does
  // all of it within each call.
  size_t queue_bytes = 0;
  // With the thread: called on it after each batch of the queue it wrote
  // (for a caller that sleeps until then, such as an event loop's wakeup).
  std::function<void()> on_written;
};

// Parses "none", "zstd", "lz4" into LS_CODEC_*; false for anything else.
bool ParseCodec(std::string_view name, uint8_t *codec);
const char *CodecName(uint8_t codec);  // "none", "zstd", "lz4", "zstd+dict" (a block's), "?"

struct WriterStats {
  uint64_t records = 0;            // records appended since open
  uint64_t bytes = 0;              // entry bytes appended since open
  uint64_t blocks_written = 0;     // sealed (full) blocks written
  uint64_t flushes = 0;            // partial-block writes
  uint64_t wraps = 0;              // times slot 0 was reused since open
  uint64_t truncated_records = 0;  // records stored cut (by their client, the writer or both)
  uint64_t strtab_full = 0;        // Intern() calls that returned 0
  // Compression (sealed blocks only): entry bytes in, payload bytes stored.
  uint64_t sealed_raw_bytes = 0, sealed_stored_bytes = 0;
  uint64_t packs = 0;  // payloads compressed (several per block: see FORMAT.md)
  // Entry bytes given to the compressor: with sealed_raw_bytes, how many
  // times each byte was compressed (zstd: once, but for splits and a
  // reopened partial block; lz4 packs the whole block each time). Records
  // kept into tiers 1 and 2 are compressed and sealed there again, and so
  // are the blocks the last tier's rescues write again (counted in all
  // four: sealed_* as they are written, packs and compressed_bytes as the
  // rescue's writer compresses, splits as it cuts its blocks).
  uint64_t compressed_bytes = 0;
  uint64_t splits = 0;  // blocks whose last records moved on to the next block
  // Retention (tiered files only): records kept in tier t (1, 2) as they
  // left the tier before it, and records that left the file, by class:
  // 0 err and more severe, 1 warning and notice (and drop reports), 2 info
  // and debug.
  uint64_t kept[3] = {};
  uint64_t evicted[3] = {};
  // Fairness in the last tier (FORMAT.md, "Tiers"): records moved on from an
  // overwritten block into the blocks after it (rescued), and records of
  // the largest (or over-share) classes taken out of those blocks to make
  // room (evicted_for_rescue, also counted in evicted).
  uint64_t rescued = 0, evicted_for_rescue = 0;
  uint64_t rewrites = 0;  // blocks those rescues wrote again in place
  // The file's compression dictionary: its id and size (0: none in use), and
  // whether training one failed (the writer then compresses without one).
  uint32_t dict_id = 0, dict_bytes = 0;
  bool dict_failed = false;
  // The writer thread's queue (WriterOptions::queue_bytes): batches handed
  // to it, times the caller waited because the queue was full and how long
  // in all, and calls that failed on the thread (their records are lost;
  // RingWriter::TakeError says why); queue_drains: times the caller waited
  // until the thread had done everything handed to it (Flush, Drain, Sync).
  uint64_t queue_batches = 0, queue_waits = 0, queue_wait_ns = 0, queue_errors = 0;
  uint64_t queue_drains = 0;
};

// The class of a syslog level for retention counters: 0 (0-3), 1 (4-5), 2 (6-7).
inline int LevelClass(uint8_t level) { return level <= 3 ? 0 : level <= 5 ? 1 : 2; }

class RingWriter {
 public:
  // Opens path if it exists (validating it is ours and has the requested
  // geometry, see WriterOptions), else creates it at exactly file_size bytes.
  // On open it finds the newest valid block and continues after its last
  // record. NotOurs for a file that is not a ring file (never overwritten).
  static Status Open(Env *env, const std::string &path, const WriterOptions &opts,
                     std::unique_ptr<RingWriter> *out);
  ~RingWriter();  // does NOT flush: call Flush() first

  // Returns the string-table id of site (deduplicated, >= 1), or 0 when the
  // table is full: the caller then appends records with the site inline.
  uint32_t Intern(const Site &site);
  // Whether a record of src with `site` inline (the table being full) fits an
  // empty block in the worst case: every optional field at its largest, and
  // args_floor bytes of arguments (the arguments with every string cut to
  // nothing). When it does not, such a record could not be stored at all:
  // the caller refuses the site instead of accepting records that vanish.
  bool InlineSiteFits(const Source &src, const Site &site, size_t args_floor) const;
  // Looks an id up (for tests and for the daemon's validation cache).
  bool LookupSite(uint32_t id, Site *out) const;

  // Appends one record to the current block; a full block is sealed and
  // written first. A record never spans blocks: one that cannot fit even an
  // empty block has its string arguments cut (longest first) until it fits,
  // and is stored with the TRUNC flag and the number of bytes cut.
  Status Append(const RecordIn &rec);
  // What Append would cut of rec, done by the caller beforehand so it knows
  // (a text stream's acknowledgment counts its lines cut): OK with *cut 0
  // when rec fits an empty block as it is (Append then never cuts it,
  // whatever the current block holds); else *args holds rec's arguments
  // with its strings cut as Append cuts them and *cut the bytes cut: rec
  // with those arguments and `truncated` grown by *cut fits. An error when
  // no cut makes it fit (Append refuses it too). Reads only rec and the
  // block size: safe on the loop with the writer thread running.
  Status FitToBlock(const RecordIn &rec, std::string *args, uint64_t *cut) const;
  // Appends a DROPPED entry (a client's report of `count` records it dropped
  // since since_ns).
  Status AppendDropped(const Source &src, uint64_t ts_ns, uint64_t count, uint64_t since_ns);
  // Writes the current partial block to its slot if it changed since the last
  // write, so readers see its records. One pwrite. With the writer thread:
  // waits until it has written everything appended before the call, and
  // returns a failure of the thread's flushes since the last Flush (its
  // failed appends: TakeErrors).
  Status Flush();
  // With the writer thread: waits until it has appended everything
  // appended before the call (no flush of the partial block), so that
  // stats() and next_record_seq() count it; as Flush, a failed flush.
  // Without: nothing to do.
  Status Drain();
  // Flush without waiting: with the writer thread, hands it what was
  // appended and asks it to write the partial block after it; without,
  // the same as Flush().
  Status Post();
  // Marks of the writer thread's progress, so that the caller can go on
  // and act once the thread has done something, rather than wait for it:
  // Mark() hands the thread what was appended (no flush of the partial
  // block; after Post(), the flush Post asked for is before the mark) and
  // returns the mark that written() reaches once the thread has done
  // everything handed before it. Marks grow. Without the thread both are 0
  // (everything is done when the call that did it returns).
  uint64_t Mark();
  uint64_t written() const;
  // With the writer thread: calls that failed on it since the last call
  // (0: none), and the first one's reason in *why.
  uint64_t TakeErrors(std::string *why);
  // With the writer thread: the lock it holds while it writes the file, for
  // a reader of the same file in the same process (ReaderOptions::tails_from
  // takes it), so that no read sees a block half written; nullptr without.
  std::mutex *io_lock() const;
  // fdatasync of the file.
  Status Sync();
  // Waits for a compression dictionary being trained (see
  // WriterOptions::dictionary_train_bytes) and, when one came out, writes it
  // into the file: the blocks packed after this call use it. Nothing to do
  // while samples are still collected or when no training runs. For tests
  // and benchmarks that need the dictionary at a known point; the daemon
  // never waits for it (a writer takes it at the first seal after training).
  Status FinishDictionary();

  const Layout &layout() const;
  const WriterStats &stats() const;
  uint64_t next_record_seq() const;  // sequence number the next record gets
  uint64_t current_block_seq() const;
  // The same for one tier (0, 1, 2): the block it appends to, 0 when the
  // tier has never sealed one (then at most block 0 is in its slots).
  uint64_t current_block_seq(int tier) const;
  uint64_t next_source_id() const;  // one past the largest source id seen in the file
  bool dirty() const;               // records appended since the last write
  // Where Open moved a ring of another format version ("" when it did not).
  const std::string &moved_aside() const;
  // The format version Open found and made the current one in place (its
  // records kept where they are), 0 when it did not (FORMAT.md, "Versions").
  uint32_t upgraded_from() const;

  class Impl;
  class Thread;

 private:
  explicit RingWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  std::unique_ptr<Thread> thread_;  // WriterOptions::queue_bytes > 0
  uint64_t strtab_full_ = 0;        // Intern's, counted on the caller's thread
  mutable WriterStats merged_;      // stats(): every tier's counters together
};

// Told about everything a reader skips, with a reason (LevelDB's Reporter).
class Reporter {
 public:
  virtual ~Reporter() = default;
  // A block (or string-table entry) at file offset `off` was rejected.
  virtual void Corruption(uint64_t off, std::string_view reason) = 0;
  // The writer overwrote `n` records before this reader got to them.
  virtual void Lost(uint64_t n) = 0;
};

// One boot's stretch of the ring (RingReader::ListBoots).
struct BootInfo {
  std::array<uint8_t, 16> boot_id{};
  uint64_t first_block = 0, last_block = 0;  // block sequence numbers
  uint64_t first_seq = 0, last_seq = 0;      // record sequence numbers (inclusive)
  uint64_t first_ns = 0, last_ns = 0;        // the blocks' filter-time range
  uint64_t records = 0;
};

struct ReaderOptions {
  // The newest block (or the one after it) failing its CRC is re-read this
  // many times (Env::SleepMicros(crc_retry_sleep_us), doubling, between
  // reads) before it is reported: the read may have raced the writer's pwrite
  // of the same slot. Older blocks are never waited for (FORMAT.md, "Reading").
  int crc_retries = 3;
  uint32_t crc_retry_sleep_us = 200;
  // The writer of this same file, on this thread: sites are looked up in
  // its string table (RingWriter::LookupSite) instead of a copy the reader
  // loads, so a reader costs no memory for the table (the daemon's reads
  // through its socket). The reader must not outlive it nor be used on
  // another thread. (Summarize and Verify still read the file's table.)
  const RingWriter *sites_from = nullptr;
  // The writer of this same file, on this thread, with the same rules: a
  // tier's newest block is searched from the block the writer knows it
  // wrote last (RingWriter::current_block_seq(tier)), and a tier the writer
  // never sealed a block in is not searched beyond its first slot. Without
  // it, a tier whose first slots hold no valid block (damage, or a tier not
  // yet written: tiers 1 and 2 until tier 0 first wraps) costs a pass over
  // all its slots at each search.
  const RingWriter *tails_from = nullptr;
  // With a filter (SetFilter): one Next passes over at most this many
  // blocks by their summaries, then returns Status::Yield (call Next again
  // to go on; 0: no bound), for a caller that must not wait long (the
  // daemon's loop) on a read that matches little of a large ring.
  uint32_t pass_over_per_next = 0;
};

// A sealed block handed over whole by RingReader::NextOrBlock: its slot as
// read (block_size bytes, CRC checked, payload still as stored), for a
// BlockDecoder to turn into records, on any thread.
struct BlockImage {
  std::vector<uint8_t> bytes;
  uint64_t block_seq = 0;
  uint64_t first_seq = 0;  // its first record's number (the header's)
  uint32_t count = 0;      // its records (the header's count)
  uint64_t offset = 0;     // its slot's file offset
};

// Turns the BlockImages of one reader's file into the records Next would
// have returned from them. Made by RingReader::NewDecoder; one per thread
// (it keeps its own copy of the string table, loaded at the first Decode,
// and its own decompression context); it reads the file (the string table,
// the dictionary) through the reader's, so it must not outlive the reader.
class BlockDecoder {
 public:
  ~BlockDecoder();
  // *out gets img's records in order; their views point into this decoder
  // and stay valid until its next Decode. A payload that does not decode, or
  // a malformed entry, ends the block there: *problem says why and
  // *problem_off where, as Next reports it to Reporter::Corruption (the
  // records before it are returned); otherwise *problem is cleared. A site
  // the string table does not name (it could not be read) comes out unknown,
  // as from Next.
  void Decode(const BlockImage &img, std::vector<Record> *out, std::string *problem,
              uint64_t *problem_off);

  class Impl;

 private:
  friend class RingReader;
  explicit BlockDecoder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class RingReader {
 public:
  // A new reader is positioned at the oldest record (as after SeekOldest).
  // reporter may be null (problems are then only skipped).
  static Status Open(Env *env, const std::string &path, Reporter *reporter,
                     std::unique_ptr<RingReader> *out);
  static Status Open(Env *env, const std::string &path, Reporter *reporter,
                     const ReaderOptions &opts, std::unique_ptr<RingReader> *out);
  // As Open, over a file the caller opened (and checked) already, e.g. with
  // FileFromFd: path is not opened again, it only names the file in messages.
  static Status FromFile(Env *env, std::unique_ptr<File> file, const std::string &path,
                         Reporter *reporter, std::unique_ptr<RingReader> *out);
  ~RingReader();

  const Layout &layout() const;
  // The file's format version, LS_FORMAT_VERSION_MIN .. LS_FORMAT_VERSION
  // (FORMAT.md, "Versions"): an older one reads as it is.
  uint32_t format_version() const;

  // Positioning. After each, Next() returns records from there on.
  Status SeekOldest();
  // The last n records (n may exceed what is stored). Reads O(n) blocks, not the ring.
  Status SeekLast(uint64_t n);
  // SeekLast in bounded steps, for a caller that must not wait long (the
  // daemon's loop): StartSeekLast(n), then SeekLastStep until *done, each
  // step reading at most max_blocks blocks on its walk back (and, where it
  // starts a tier, that tier's tail search: O(log blocks) headers). Records
  // written meanwhile are read too. Next() before *done is not allowed.
  Status StartSeekLast(uint64_t n);
  Status SeekLastStep(uint64_t max_blocks, bool *done);
  // The first record that may have FilterTime() >= ts_ns: the block before
  // the first one the writer opened at or after ts_ns - kClockSlackNs (a
  // binary search over block open times, which only grow), so records
  // received more than that before ts_ns are not shown whatever their
  // timestamps. Blocks of files that do not record open times are searched
  // by their largest timestamp. The caller still filters per record.
  Status SeekTime(uint64_t ts_ns);
  // After the newest record present now (for "follow from now").
  Status SeekEnd();
  // At record number seq (a cursor's position): Next() returns records from
  // seq on. When seq was overwritten already, the records between it and the
  // oldest present are reported to Reporter::Lost() by the first Next(). A
  // seq past the newest record positions at the end (the caller checks the
  // range with Summarize() when it matters). O(log blocks) header reads.
  Status SeekSeq(uint64_t seq);

  // Returns OK and fills *rec, or NotFound when no further record exists yet
  // (call again later to follow a live writer: a partial block that grew and
  // blocks written since are picked up). Records come in sequence order;
  // records overwritten before they were read are reported to Lost().
  Status Next(Record *rec);

  // As Next, but a sealed block all of whose records Next would return
  // next, from its first, may come back whole in *img (*whole true) instead:
  // decode it with a BlockDecoder (NewDecoder), on another thread if wanted.
  // Otherwise a record, as Next (*whole false). Blocks come whole only from
  // a file of one tier, and not while the reader counts every number it
  // skips as lost (after SeekSeq or a lap: then records). The reader goes
  // on after the block; lost records and damaged blocks are reported as
  // Next reports them, except damage inside a whole block, which its
  // decoding tells.
  Status NextOrBlock(Record *rec, BlockImage *img, bool *whole);
  // The heap this reader holds now for reading blocks (per tier: the slot
  // read, the block decoded, zstd's context, the dictionary, the sources the
  // block being read declared, the summary index window), and the most
  // its buffers hold for blocks of this file: everything above but the
  // sources, which grow with what one block declares (BlockCursor, one
  // entry per source, at most one per 13 bytes of entries). The string
  // table a reader loads is not counted (one with sites_from has none).
  size_t HeldBytes() const;
  size_t BoundBytes() const;
  // A decoder for this reader's file (see BlockDecoder).
  std::unique_ptr<BlockDecoder> NewDecoder() const;

  // Skips whole blocks that no record of filter can come from (nullptr:
  // read every block): a block is skipped, without decoding its payload,
  // only when its summary proves that none of its records matches
  // (FORMAT.md, "Block summaries"; kernel_only is never judged by it). The
  // records of a skipped block are neither returned nor "lost"; the others
  // are returned whether they match or not: the caller decides each with
  // filter.Match. A filter that matches every record is no filter. The
  // filter is copied. use_index: consult the summary index before reading
  // a block (FORMAT.md, "Summary index"); false judges each block by its
  // header's summary only (the same records, slower: for benchmarks).
  void SetFilter(const RecordFilter *filter, bool use_index = true);
  uint64_t blocks_skipped() const;   // blocks skipped by their summary so far
  uint64_t records_skipped() const;  // the records those blocks held (their headers' counts)
  // Once Next said NotFound at the end of the ring: the number the next
  // record written will have (what a read resumes from).
  uint64_t next_seq() const;
  // Of those, the ones skipped by their summary index entry, never read.
  uint64_t blocks_skipped_by_index() const;

  // Oldest and newest record sequence numbers present now (empty ring: both 0
  // and returns NotFound), plus block-level facts for `logctl stats`.
  struct Summary {
    uint64_t oldest_seq = 0, newest_seq = 0;  // newest is inclusive
    uint64_t oldest_block = 0, newest_block = 0;
    uint64_t oldest_ts_ns = 0, newest_ts_ns = 0;
    uint64_t blocks_used = 0;  // valid blocks in the ring
    uint64_t bytes_used = 0;   // sum of their used lengths (as stored)
    uint64_t raw_bytes = 0;    // the same blocks decoded (header + entries)
    uint64_t wraps = 0;        // newest_block / block_count
    uint64_t strings = 0;      // string-table entries
    uint64_t strtab_bytes = 0;
    uint64_t records = 0;  // records present (RECORD and DROPPED entries)
    // Per tier (FORMAT.md, "Tiers"), those with slots, by tier number.
    struct Tier {
      int tier = 0;
      uint64_t blocks = 0;  // slots
      uint64_t blocks_used = 0, bytes_used = 0, raw_bytes = 0, records = 0;
      uint64_t oldest_seq = 0, oldest_ts_ns = 0, newest_ts_ns = 0;
    };
    std::vector<Tier> tiers;
  };
  Status Summarize(Summary *out);

  // The boots whose records the ring holds, oldest first: consecutive
  // blocks of one boot identity form one entry (a boot whose blocks are
  // interrupted by another's appears twice). One pass over every header.
  Status ListBoots(std::vector<BootInfo> *out);

  // Checks the superblocks, every string-table entry and every block (CRC,
  // sequence continuity, string references). Each problem goes to the
  // reporter with its offset; returns Corruption if any was found.
  Status Verify();
  // The same, telling progress (slots checked, slots in the file) after
  // each slot.
  Status Verify(const std::function<void(uint64_t, uint64_t)> &progress);

  class Impl;

 private:
  explicit RingReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// CRC32C (Castagnoli), as used in the format.
uint32_t Crc32c(const void *data, size_t n, uint32_t crc = 0);

}  // namespace logsink::storage
