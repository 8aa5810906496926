// ring_roundtrip_test.cc: what the writer appends the reader returns, field
// by field: every argument type, DROPPED entries, sources, tids, inline sites
// when the string table is full, truncation of an oversized record, reopen
// and continue; plus creation/opening refusals (not ours, too small, mismatch).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "common/seed.h"
#include "fault_env.h"
#include "logsink/proto/args.h"
#include "logsink/proto/format.h"
#include "ring_test_util.h"

namespace logsink::test {
namespace {

using namespace ::logsink::storage;

class RoundTrip : public ::testing::Test {
 protected:
  WriterOptions Opts(uint32_t blocks = 8, uint64_t strtab = 0) {
    WriterOptions o;
    o.codec = LS_CODEC_NONE;  // the block layout as it is (compression: ring_compress_test)
    o.file_size = RingSize(blocks) + (strtab ? strtab - 4096 : 0);
    o.block_size = 4096;
    o.strtab_size = strtab;
    return o;
  }
  std::unique_ptr<RingWriter> OpenWriter(const WriterOptions &o) {
    std::unique_ptr<RingWriter> w;
    Status s = RingWriter::Open(&env_, path_, o, &w);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return w;
  }
  std::vector<OwnedRecord> ReadBack() {
    std::unique_ptr<RingReader> r;
    Status s = RingReader::Open(&env_, path_, &rep_, &r);
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (!s.ok()) return {};
    return ReadAll(r.get());
  }
  Status Add(RingWriter *w, const Source &src, uint32_t site, const std::string &sig,
             const std::string &args, uint64_t ts, uint64_t tid = 1) {
    return AppendRecord(w, src, site, sig, args, ts, tid);
  }
  // n records of site id from a_ with one string argument, len copies of c,
  // at ts0, ts0 + 1, ...
  void AddStrings(RingWriter *w, uint32_t id, int n, size_t len, char c, uint64_t ts0) {
    const std::string args = Args().Str(std::string(len, c)).str();
    for (int i = 0; i < n; i++) ASSERT_TRUE(Add(w, a_, id, "s", args, ts0 + i).ok());
  }

  FaultEnv env_;
  std::string path_ = "/ring";
  RecordingReporter rep_;
  Source a_{7, 100, 1000, 1000, "app-a", "comm-a"};
  Source b_{9, 200, 0, 0, "app-b", "comm-b"};
};

TEST_F(RoundTrip, EveryArgumentTypeAndField) {
  auto w = OpenWriter(Opts());
  Site site{3, 42, "i=%d u=%u f=%f c=%c s=%s p=%p w=%*d", "main.c"};
  uint32_t id = w->Intern(site);
  ASSERT_EQ(id, 1u);
  std::string sig = Signature(site.fmt);
  ASSERT_EQ(sig, "iufcspii");
  std::string args = Args()
                         .Int(-123456789012)
                         .Uint(18446744073709551615ull)
                         .Double(-2.5)
                         .Char(0x20ac)
                         .Str("héllo")
                         .Ptr(0xdeadbeef)
                         .Int(5)
                         .Int(-1)
                         .str();
  ASSERT_EQ(ls_args_check(sig.c_str(), reinterpret_cast<const uint8_t *>(args.data()), args.size()),
            0);
  ASSERT_TRUE(Add(w.get(), a_, id, sig, args, 1000000, 11).ok());
  ASSERT_TRUE(Add(w.get(), b_, id, sig, args, 999999, 22).ok());  // time going back
  ASSERT_TRUE(w->AppendDropped(a_, 1000500, 17, 900000).ok());
  ASSERT_TRUE(Add(w.get(), a_, id, sig, args, 1000600, 22).ok());
  EXPECT_TRUE(w->dirty());
  ASSERT_TRUE(w->Flush().ok());
  EXPECT_FALSE(w->dirty());
  EXPECT_EQ(w->stats().records, 4u);
  EXPECT_EQ(w->stats().flushes, 1u);
  EXPECT_EQ(w->next_record_seq(), 4u);

  auto got = ReadBack();
  ASSERT_EQ(got.size(), 4u);
  EXPECT_TRUE(rep_.bad.empty()) << rep_.Dump();
  const OwnedRecord &r0 = got[0];
  EXPECT_EQ(std::tie(r0.kind, r0.seq, r0.block_seq, r0.ts_ns, r0.tid, r0.source_id),
            std::make_tuple(Record::Kind::kRecord, 0u, 0u, 1000000u, 11u, 7u));
  EXPECT_EQ(std::tie(r0.pid, r0.uid, r0.app, r0.comm),
            std::make_tuple(100u, 1000u, "app-a", "comm-a"));
  EXPECT_TRUE(r0.site_known);
  EXPECT_EQ(std::tie(r0.site_id, r0.fmt, r0.file, r0.line, r0.level),
            std::make_tuple(1u, site.fmt, "main.c", 42u, 3));
  EXPECT_EQ(r0.args, args);
  EXPECT_EQ(r0.truncated, 0u);
  // Decode the arguments back by the signature.
  const uint8_t *p = reinterpret_cast<const uint8_t *>(r0.args.data()), *end = p + r0.args.size();
  ls_arg a;
  p += ls_arg_get('i', p, end, &a);
  EXPECT_EQ(int64_t(a.u), -123456789012);
  p += ls_arg_get('u', p, end, &a);
  EXPECT_EQ(a.u, 18446744073709551615ull);
  p += ls_arg_get('f', p, end, &a);
  EXPECT_EQ(a.f, -2.5);
  p += ls_arg_get('c', p, end, &a);
  EXPECT_EQ(a.u, 0x20acu);
  p += ls_arg_get('s', p, end, &a);
  EXPECT_EQ(std::string(reinterpret_cast<const char *>(a.s), a.len), "héllo");
  p += ls_arg_get('p', p, end, &a);
  EXPECT_EQ(a.u, 0xdeadbeefu);

  const OwnedRecord &r1 = got[1], &r2 = got[2], &r3 = got[3];
  EXPECT_EQ(std::tie(r1.source_id, r1.pid, r1.app, r1.ts_ns, r1.tid),
            std::make_tuple(9u, 200u, "app-b", 999999u, 22u));
  EXPECT_EQ(std::tie(r2.kind, r2.seq, r2.source_id, r2.app, r2.ts_ns),
            std::make_tuple(Record::Kind::kDropped, 2u, 7u, "app-a", 1000500u));
  EXPECT_EQ(std::tie(r2.dropped_count, r2.dropped_since_ns), std::make_tuple(17u, 900000u));
  EXPECT_EQ(std::tie(r3.seq, r3.tid, r3.ts_ns, r3.source_id),
            std::make_tuple(3u, 22u, 1000600u, 7u));
}

TEST_F(RoundTrip, SourcesAreRedeclaredInEveryBlock) {
  auto w = OpenWriter(Opts(4));
  uint32_t id = w->Intern(Site{6, 1, "%s", "x.c"});
  std::string args = Args().Str(std::string(1000, 'x')).str();
  for (int i = 0; i < 10; i++) {  // 3 records per 4 KiB block
    ASSERT_TRUE(Add(w.get(), i % 2 ? a_ : b_, id, "s", args, 100 + i).ok());
  }
  ASSERT_TRUE(w->Flush().ok());
  auto got = ReadBack();
  ASSERT_EQ(got.size(), 10u);
  for (int i = 0; i < 10; i++) {
    EXPECT_EQ(got[i].seq, uint64_t(i));
    EXPECT_EQ(got[i].block_seq, uint64_t(i / 3));
    EXPECT_EQ(got[i].app, i % 2 ? "app-a" : "app-b") << i;
    EXPECT_EQ(got[i].ts_ns, uint64_t(100 + i));
  }
  EXPECT_TRUE(rep_.bad.empty()) << rep_.Dump();
}

// A reader given its writer (ReaderOptions::sites_from, the daemon's reads)
// looks sites up in the writer's table: the same records and sites as a
// reader with its own copy, also for sites interned after it opened.
TEST_F(RoundTrip, AReaderUsingTheWritersTableSeesTheSameSites) {
  auto w = OpenWriter(Opts(8));
  const uint32_t early = w->Intern(Site{3, 10, "early %s", "e.c"});
  AddStrings(w.get(), early, 5, 100, 'e', 100);
  ASSERT_TRUE(w->Flush().ok());
  ReaderOptions ro;
  ro.sites_from = w.get();
  std::unique_ptr<RingReader> shared;
  ASSERT_TRUE(RingReader::Open(&env_, path_, &rep_, ro, &shared).ok());
  const uint32_t late = w->Intern(Site{6, 20, "late %s", "l.c"});
  AddStrings(w.get(), late, 5, 100, 'l', 200);
  ASSERT_TRUE(w->Flush().ok());
  const std::vector<OwnedRecord> want = ReadBack(), got = ReadAll(shared.get());
  ASSERT_EQ(got.size(), 10u);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); i++) {
    EXPECT_TRUE(got[i].site_known) << i;
    EXPECT_EQ(got[i].fmt, want[i].fmt) << i;
    EXPECT_EQ(got[i].file, want[i].file) << i;
    EXPECT_EQ(got[i].line, want[i].line) << i;
    EXPECT_EQ(got[i].level, want[i].level) << i;
    EXPECT_EQ(got[i].args, want[i].args) << i;
  }
  EXPECT_EQ(got.back().fmt, "late %s");
  EXPECT_TRUE(rep_.bad.empty()) << rep_.Dump();
}

TEST_F(RoundTrip, InternDeduplicatesAndInlinesWhenTableFull) {
  auto w = OpenWriter(Opts(4));
  Site s1{6, 10, "first %d", "a.c"};
  EXPECT_EQ(w->Intern(s1), 1u);
  EXPECT_EQ(w->Intern(s1), 1u);
  Site s1_other_line{6, 11, "first %d", "a.c"};
  EXPECT_EQ(w->Intern(s1_other_line), 2u);
  Site s1_other_level{5, 10, "first %d", "a.c"};
  EXPECT_EQ(w->Intern(s1_other_level), 3u);
  // Fill the 4 KiB table: each entry is 20 + 1000 + 3 bytes.
  std::string big(1000, 'f');
  uint32_t last = 0;
  int added = 0;
  for (int i = 0; i < 10; i++) {
    big[0] = char('a' + i);
    uint32_t id = w->Intern(Site{6, 1, big, "b.c"});
    if (id == 0) break;
    last = id;
    added++;
  }
  EXPECT_EQ(added, 3);  // 3 * 31 + 3 * 1023 = 3162 bytes; a fourth does not fit
  EXPECT_EQ(last, 6u);
  // 934 bytes left: 29 entries of 20 + 9 + 3 bytes, then 6 bytes of nothing.
  char small[32];
  int small_added = 0;
  for (int i = 0; i < 100; i++) {
    snprintf(small, sizeof small, "small %03d", i);
    if (w->Intern(Site{6, 1, small, "b.c"}) == 0) break;
    small_added++;
  }
  EXPECT_EQ(small_added, 29);
  EXPECT_EQ(w->stats().strtab_full, 2u);  // the big one and the 30th small one
  Site inl{4, 77, "inline %s", "c.c"};
  EXPECT_EQ(w->Intern(inl), 0u);
  EXPECT_EQ(w->stats().strtab_full, 3u);
  Site got_site;
  ASSERT_TRUE(w->LookupSite(2, &got_site));
  EXPECT_EQ(got_site.line, 11u);
  EXPECT_TRUE(w->LookupSite(35, &got_site));
  EXPECT_EQ(got_site.fmt, "small 028");
  EXPECT_FALSE(w->LookupSite(36, &got_site));

  std::string args = Args().Str("v").str();
  RecordIn in;
  in.source = &a_;
  in.site_id = 0;
  in.inline_site = &inl;
  in.signature = "s";
  in.ts_ns = 5;
  in.args = reinterpret_cast<const uint8_t *>(args.data());
  in.args_len = args.size();
  ASSERT_TRUE(w->Append(in).ok());
  ASSERT_TRUE(Add(w.get(), a_, 1, "i", Args().Int(3).str(), 6).ok());
  ASSERT_TRUE(w->Flush().ok());
  auto got = ReadBack();
  ASSERT_EQ(got.size(), 2u);
  const OwnedRecord &g0 = got[0];
  EXPECT_TRUE(g0.site_known);
  EXPECT_EQ(std::tie(g0.site_id, g0.fmt, g0.file, g0.line, g0.level, g0.args),
            std::make_tuple(0u, "inline %s", "c.c", 77u, 4, args));
  EXPECT_EQ(got[1].fmt, "first %d");
  w.reset();

  // Across reopen: the table is loaded, so the same sites get the same ids.
  auto w2 = OpenWriter(Opts(4));
  EXPECT_EQ(w2->Intern(s1_other_level), 3u);
  EXPECT_EQ(w2->Intern(s1), 1u);
  EXPECT_EQ(w2->Intern(inl), 0u);  // still full
}

TEST_F(RoundTrip, UnknownSiteIdRefused) {
  auto w = OpenWriter(Opts(4));
  EXPECT_EQ(Add(w.get(), a_, 5, "", "", 1).code(), Status::Code::kInvalidArgument);
  RecordIn in;  // no source
  EXPECT_EQ(w->Append(in).code(), Status::Code::kInvalidArgument);
}

TEST_F(RoundTrip, OversizedRecordIsTruncatedLongestFirst) {
  auto w = OpenWriter(Opts(4));
  uint32_t id = w->Intern(Site{6, 1, "%s %d %s %s", "t.c"});
  ASSERT_TRUE(Add(w.get(), a_, id, "sisS", Args().Str("small").str(), 1).code() ==
              Status::Code::kOk);  // a normal record first: the big one needs a fresh block
  std::string s_long(9000, 'L'), s_mid(3000, 'M'), s_short(10, 's');
  std::string args = Args().Str(s_mid).Int(-7).Str(s_short).Str(s_long).str();
  ASSERT_TRUE(Add(w.get(), a_, id,
                  "sis"
                  "s",
                  args, 2, 1)
                  .ok());
  ASSERT_TRUE(w->Flush().ok());
  EXPECT_EQ(w->stats().truncated_records, 1u);
  auto got = ReadBack();
  ASSERT_EQ(got.size(), 2u);
  // A record only its client cut counts too (PROTOCOL.md, truncated_records).
  auto w2 = OpenWriter(Opts(4));
  std::string small = Args().Str("a").Int(1).Str("b").Str("c").str();
  RecordIn in;
  in.source = &a_;
  in.site_id = id;
  in.signature = "siss";
  in.args = reinterpret_cast<const uint8_t *>(small.data());
  in.args_len = small.size();
  in.ts_ns = 3;
  in.truncated = 5;
  ASSERT_TRUE(w2->Append(in).ok());
  EXPECT_EQ(w2->stats().truncated_records, 1u);
  const OwnedRecord &r = got[1];
  EXPECT_EQ(r.block_seq, 1u);  // it got an empty block of its own
  ASSERT_GT(r.truncated, 0u);
  // Decode: the short string is intact, the two long ones are cut to a common cap.
  const uint8_t *p = reinterpret_cast<const uint8_t *>(r.args.data()), *end = p + r.args.size();
  ls_arg m, i, s, l;
  size_t n;
  ASSERT_TRUE((n = ls_arg_get('s', p, end, &m)));
  p += n;
  ASSERT_TRUE((n = ls_arg_get('i', p, end, &i)));
  p += n;
  ASSERT_TRUE((n = ls_arg_get('s', p, end, &s)));
  p += n;
  ASSERT_TRUE((n = ls_arg_get('s', p, end, &l)));
  p += n;
  EXPECT_EQ(p, end);
  EXPECT_EQ(int64_t(i.u), -7);
  EXPECT_EQ(std::string(reinterpret_cast<const char *>(s.s), s.len), s_short);
  EXPECT_EQ(m.len, l.len);  // both cut to the same cap
  EXPECT_LT(l.len, 3000u);
  EXPECT_EQ(std::string(reinterpret_cast<const char *>(l.s), l.len), s_long.substr(0, l.len));
  EXPECT_EQ(r.truncated, (9000 - l.len) + (3000 - m.len));
  // It fills its block: the block cannot hold one more byte of string.
  EXPECT_GT(r.args.size(), 4096u - 320);
}

// The writer cuts an oversized string on a UTF-8 character boundary (the
// one rule of proto/codec.h, ls_utf8_cut): what is stored is whole
// characters, every byte cut is counted.
TEST_F(RoundTrip, TruncationCutsWholeCharacters) {
  auto w = OpenWriter(Opts(4));
  uint32_t id = w->Intern(Site{6, 1, "%s", "r.c"});
  for (const std::string ch : {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80"}) {
    SCOPED_TRACE(ch.size());
    std::string big;
    while (big.size() < 9000) big += ch;
    ASSERT_TRUE(Add(w.get(), a_, id, "s", Args().Str(big).str(), 1).ok());
    ASSERT_TRUE(w->Flush().ok());
    auto recs = ReadBack();
    ASSERT_FALSE(recs.empty());
    const OwnedRecord &r = recs.back();
    ls_arg s{};
    const auto *p = reinterpret_cast<const uint8_t *>(r.args.data());
    ASSERT_TRUE(ls_arg_get('s', p, p + r.args.size(), &s));
    EXPECT_EQ(s.len % ch.size(), 0u);
    EXPECT_EQ(std::string(reinterpret_cast<const char *>(s.s), s.len), big.substr(0, s.len));
    EXPECT_EQ(r.truncated, big.size() - s.len);
  }
}

TEST_F(RoundTrip, TruncationAddsToClientCount) {
  auto w = OpenWriter(Opts(4));
  uint32_t id = w->Intern(Site{6, 1, "%s", "t.c"});
  std::string args = Args().Str(std::string(5000, 'z')).str();
  RecordIn in;
  in.source = &a_;
  in.site_id = id;
  in.signature = "s";
  in.args = reinterpret_cast<const uint8_t *>(args.data());
  in.args_len = args.size();
  in.truncated = 100;  // the client already cut 100 bytes
  ASSERT_TRUE(w->Append(in).ok());
  ASSERT_TRUE(w->Flush().ok());
  auto got = ReadBack();
  ASSERT_EQ(got.size(), 1u);
  ls_arg a;
  ASSERT_TRUE(ls_arg_get('s', reinterpret_cast<const uint8_t *>(got[0].args.data()),
                         reinterpret_cast<const uint8_t *>(got[0].args.data()) + got[0].args.size(),
                         &a));
  EXPECT_EQ(got[0].truncated, 100 + (5000 - a.len));
}

// FitToBlock (what the daemon uses to know a text line was cut) cuts a
// record exactly as Append cuts it, and a record it leaves whole Append
// never cuts, whatever the current block holds: seeded records of one to
// three strings around a block's size, each appended as it is to a fresh
// writer and, cut beforehand, to one whose block already holds another
// source's record from long before (the largest planning state).
TEST_F(RoundTrip, FitToBlockCutsAsAppendCuts) {
  std::mt19937_64 rng(TestSeed());
  auto read_last = [&](const std::string &path) {
    std::unique_ptr<RingReader> r;
    EXPECT_TRUE(RingReader::Open(&env_, path, &rep_, &r).ok());
    std::vector<OwnedRecord> got = r ? ReadAll(r.get()) : std::vector<OwnedRecord>{};
    return got.empty() ? OwnedRecord{} : got.back();
  };
  int cut_records = 0;
  for (int i = 0; i < 150; i++) {
    SCOPED_TRACE(i);
    const int nstr = 1 + int(rng() % 3);
    std::string sig, fmt;
    Args args;
    size_t total = 0;
    for (int k = 0; k < nstr; k++) {
      size_t len = rng() % (4300 / size_t(nstr));
      if (k == 0 && rng() % 2) len = 3700 + rng() % 600;  // around what a block holds
      args.Str(std::string(len, char('a' + k)));
      total += len;
      sig += 's';
      fmt += "%s ";
    }
    sig += 'i';
    fmt += "%d";
    args.Int(-int64_t(rng() % 1000));
    RecordIn in;
    in.source = &a_;
    in.tid = rng() % 2 ? 0 : 1 + rng() % 100000;
    in.signature = sig;
    in.args = reinterpret_cast<const uint8_t *>(args.str().data());
    in.args_len = args.str().size();
    in.ts_ns = 5000000000ull;
    in.truncated = rng() % 2 ? 0 : rng() % 300;
    const std::string pa = "/a" + std::to_string(i), pb = "/b" + std::to_string(i);
    path_ = pa;
    auto wa = OpenWriter(Opts(4));
    path_ = pb;
    auto wb = OpenWriter(Opts(4));
    ASSERT_TRUE(wa && wb);
    const Site site{6, 1, fmt.c_str(), "fit.c"};
    in.site_id = wa->Intern(site);
    ASSERT_EQ(wb->Intern(site), in.site_id);
    ASSERT_TRUE(wa->Append(in).ok());
    ASSERT_TRUE(Add(wb.get(), b_, in.site_id, sig, Args().Str("x").Int(1).str(), 1, 99).ok());
    std::string cut_args;
    uint64_t cut = 7;
    ASSERT_TRUE(wb->FitToBlock(in, &cut_args, &cut).ok());
    RecordIn fitted = in;
    if (cut) {
      fitted.args = reinterpret_cast<const uint8_t *>(cut_args.data());
      fitted.args_len = cut_args.size();
      fitted.truncated += cut;
      cut_records++;
    }
    const uint64_t cut_before = wb->stats().truncated_records;
    ASSERT_TRUE(wb->Append(fitted).ok());
    // One record stored with TRUNC, or none: Append cut nothing more.
    EXPECT_EQ(wb->stats().truncated_records, cut_before + (fitted.truncated ? 1 : 0));
    ASSERT_TRUE(wa->Flush().ok());
    ASSERT_TRUE(wb->Flush().ok());
    OwnedRecord ra = read_last(pa), rb = read_last(pb);
    EXPECT_EQ(ra.args, rb.args) << "strings of " << total << " bytes, cut " << cut;
    EXPECT_EQ(ra.truncated, rb.truncated);
    EXPECT_EQ(ra.truncated, in.truncated + cut);
  }
  EXPECT_GT(cut_records, 10);
  EXPECT_LT(cut_records, 140);
}

TEST_F(RoundTrip, BadArgumentsOnTheTruncationPathRefused) {
  auto w = OpenWriter(Opts(4));
  uint32_t id = w->Intern(Site{6, 1, "%d", "t.c"});
  std::string junk(5000, '\xff');  // not a valid varint sequence for "i"
  EXPECT_EQ(Add(w.get(), a_, id, "i", junk, 1).code(), Status::Code::kInvalidArgument);
}

TEST_F(RoundTrip, ReopenContinuesPartialBlockAndSequence) {
  auto w = OpenWriter(Opts(4));
  uint32_t id = w->Intern(Site{6, 1, "n=%d", "r.c"});
  for (int i = 0; i < 5; i++) {
    ASSERT_TRUE(Add(w.get(), a_, id, "i", Args().Int(i).str(), i).ok());
  }
  ASSERT_TRUE(w->Flush().ok());
  EXPECT_EQ(w->next_source_id(), 1u);  // nothing in the file at open
  w.reset();

  w = OpenWriter(Opts(4));
  EXPECT_EQ(w->next_record_seq(), 5u);
  EXPECT_EQ(w->current_block_seq(), 0u);  // continuing the partial block
  EXPECT_EQ(w->next_source_id(), 8u);     // a_ (id 7) was declared in the file
  EXPECT_FALSE(w->dirty());
  Source c{8, 300, 0, 0, "app-c", "comm-c"};
  for (int i = 5; i < 8; i++) {
    ASSERT_TRUE(Add(w.get(), c, id, "i", Args().Int(i).str(), i).ok());
  }
  ASSERT_TRUE(w->Flush().ok());
  auto got = ReadBack();
  ASSERT_EQ(got.size(), 8u);
  for (int i = 0; i < 8; i++) {
    EXPECT_EQ(got[i].seq, uint64_t(i));
    EXPECT_EQ(got[i].block_seq, 0u);
    EXPECT_EQ(got[i].args, Args().Int(i).str());
    EXPECT_EQ(got[i].app, i < 5 ? "app-a" : "app-c");
  }
  EXPECT_EQ(got[4].ts_ns, 4u);
  EXPECT_EQ(got[5].ts_ns, 5u);
}

TEST_F(RoundTrip, ReopenAfterSealedBlockStartsTheNext) {
  auto w = OpenWriter(Opts(4));
  uint32_t id = w->Intern(Site{6, 1, "%s", "r.c"});
  ASSERT_NO_FATAL_FAILURE(AddStrings(w.get(), id, 4, 1250, 'q', 0));
  // 3 fit in block 0; the fourth sealed it and sits unflushed in block 1.
  EXPECT_EQ(w->current_block_seq(), 1u);
  EXPECT_EQ(w->stats().blocks_written, 1u);
  w.reset();  // no Flush: the fourth record is lost
  w = OpenWriter(Opts(4));
  EXPECT_EQ(w->current_block_seq(), 1u);
  EXPECT_EQ(w->next_record_seq(), 3u);
}

TEST_F(RoundTrip, FileNeverChangesSizeAndIsExactlyRequested) {
  WriterOptions o = Opts(4);
  auto w = OpenWriter(o);
  EXPECT_EQ(env_.Data(path_).size(), o.file_size);
  uint32_t id = w->Intern(Site{6, 1, "%s", "r.c"});
  for (int i = 0; i < 200; i++) {
    ASSERT_TRUE(Add(w.get(), a_, id, "s", Args().Str(std::string(i * 7 % 900, 'w')).str(), i).ok());
    if (i % 17 == 0) {
      ASSERT_TRUE(w->Flush().ok());
    }
  }
  EXPECT_GT(w->stats().wraps, 0u);
  EXPECT_EQ(env_.Data(path_).size(), o.file_size);
}

TEST_F(RoundTrip, RefusesFileThatIsNotOurs) {
  std::vector<uint8_t> text(100000, 'a');
  env_.Put(path_, text);
  std::unique_ptr<RingWriter> w;
  Status s = RingWriter::Open(&env_, path_, Opts(8), &w);
  EXPECT_EQ(s.code(), Status::Code::kNotOurs);
  EXPECT_NE(s.message().find(path_), std::string::npos) << s.ToString();
  EXPECT_EQ(env_.Data(path_), text);  // untouched
  std::unique_ptr<RingReader> r;
  EXPECT_EQ(RingReader::Open(&env_, path_, &rep_, &r).code(), Status::Code::kNotOurs);
  // Also an empty file.
  env_.Put("/empty", {});
  EXPECT_EQ(RingWriter::Open(&env_, "/empty", Opts(8), &w).code(), Status::Code::kNotOurs);
}

TEST_F(RoundTrip, RefusesTooSmallSize) {
  WriterOptions o;
  o.codec = LS_CODEC_NONE;  // the block layout as it is (compression: ring_compress_test)
  o.file_size = 20000;
  o.block_size = 4096;
  std::unique_ptr<RingWriter> w;
  Status s = RingWriter::Open(&env_, path_, o, &w);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("minimum is 20480"), std::string::npos) << s.ToString();
  EXPECT_FALSE(env_.FileExists(path_));
}

TEST_F(RoundTrip, MismatchedGeometry) {
  auto w = OpenWriter(Opts(8));
  uint32_t id = w->Intern(Site{6, 1, "x", "r.c"});
  ASSERT_TRUE(Add(w.get(), a_, id, "", "", 1).ok());
  ASSERT_TRUE(w->Flush().ok());
  w.reset();
  WriterOptions other = Opts(16);
  Status s = RingWriter::Open(&env_, path_, other, &w);
  EXPECT_EQ(s.code(), Status::Code::kMismatch);
  EXPECT_NE(s.message().find(path_), std::string::npos);
  WriterOptions bs = Opts(8);
  bs.block_size = 8192;
  EXPECT_EQ(RingWriter::Open(&env_, path_, bs, &w).code(), Status::Code::kMismatch);
  EXPECT_EQ(ReadBack().size(), 1u);  // still there

  other.recreate_on_mismatch = true;
  w = OpenWriter(other);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->layout().block_count, 16u);
  EXPECT_EQ(env_.Data(path_).size(), other.file_size);
  EXPECT_EQ(w->next_record_seq(), 0u);
  EXPECT_EQ(ReadBack().size(), 0u);
}

TEST_F(RoundTrip, SummarizeEmptyAndFilled) {
  auto w = OpenWriter(Opts(4));
  {
    std::unique_ptr<RingReader> r;
    ASSERT_TRUE(RingReader::Open(&env_, path_, &rep_, &r).ok());
    RingReader::Summary sum;
    EXPECT_TRUE(r->Summarize(&sum).IsNotFound());
    EXPECT_EQ(sum.blocks_used, 0u);
    Record rec;
    EXPECT_TRUE(r->Next(&rec).IsNotFound());
    EXPECT_TRUE(r->Verify().ok());
  }
  uint32_t id = w->Intern(Site{6, 1, "%s", "r.c"});
  ASSERT_NO_FATAL_FAILURE(AddStrings(w.get(), id, 20, 1250, 'q', 1000));
  ASSERT_TRUE(w->Flush().ok());
  // 3 per block: blocks 0..6, record 18 and 19 in block 6; the ring keeps 3..6.
  std::unique_ptr<RingReader> r;
  ASSERT_TRUE(RingReader::Open(&env_, path_, &rep_, &r).ok());
  RingReader::Summary sum;
  ASSERT_TRUE(r->Summarize(&sum).ok());
  // Blocks, then records, then times, then the file.
  EXPECT_EQ(std::tie(sum.oldest_block, sum.newest_block, sum.blocks_used, sum.wraps),
            std::make_tuple(3u, 6u, 4u, 1u));
  EXPECT_EQ(std::tie(sum.oldest_seq, sum.newest_seq, sum.oldest_ts_ns, sum.newest_ts_ns),
            std::make_tuple(9u, 19u, 1009u, 1019u));
  EXPECT_EQ(std::tie(sum.strings, sum.strtab_bytes), std::make_tuple(1u, 20u + 2 + 3));
  EXPECT_GT(sum.bytes_used, 3 * 3 * 1250u);
}

}  // namespace
}  // namespace logsink::test
