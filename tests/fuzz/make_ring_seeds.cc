// make_ring_seeds.cc: writes the seed corpus of fuzz_ring: small ring files
// made by the real RingWriter in memory (every entry kind, string-table
// overflow to inline sites, truncation, wrapping), each prefixed with the
// target's option byte. Usage: fuzz_make_ring_seeds OUT_DIR
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "logsink/proto/codec.h"
#include "logsink/proto/printf.h"
#include "logsink/storage/ring.h"
#include "mem_env.h"

namespace st = logsink::storage;

namespace {

std::string Var(uint64_t v) {
  uint8_t b[LS_VARINT_MAX];
  return std::string(reinterpret_cast<char *>(b), ls_put_varint(b, v));
}
std::string Str(std::string_view s) { return Var(s.size()) + std::string(s); }
std::string Dbl(double d) {
  char b[8];
  std::memcpy(b, &d, 8);
  return std::string(b, 8);
}

std::string Sig(std::string_view fmt) {
  char sig[LS_FMT_MAX_ARGS + 1];
  int n = ls_fmt_signature(fmt.data(), fmt.size(), sig, sizeof sig);
  if (n < 0) {
    std::fprintf(stderr, "bad format %.*s\n", static_cast<int>(fmt.size()), fmt.data());
    std::exit(1);
  }
  return sig;
}

void Check(const st::Status &s, const char *what) {
  if (!s.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
    std::exit(1);
  }
}

// Appends `n` records of a few kinds; `distinct` > 0 interns that many
// different formats first (to overflow a small string table).
void Fill(st::RingWriter *w, int n, int distinct) {
  st::Source a{1, 100, 1000, 1000, "app", "proc"};
  st::Source b{2, 200, 0, 0, "other", "daemon"};
  const std::string f1 = "user %s port %d", f2 = "%5.2f%% %-8x %c %p %lu %*.*s";
  st::Site s1{6, 42, f1, "main.c"}, s2{3, 7, f2, "x.c"};
  uint32_t id1 = w->Intern(s1), id2 = w->Intern(s2);
  const std::string sig1 = Sig(f1), sig2 = Sig(f2);
  std::vector<std::string> fmts;
  for (int i = 0; i < distinct; i++) fmts.push_back("site " + std::to_string(i) + " %d");
  uint64_t ts = 1700000000000000000ull;
  for (int i = 0; i < n; i++) {
    ts += 1000 + i % 7;
    st::RecordIn r;
    std::string args;
    r.ts_ns = ts;
    r.tid = 10 + i % 3;
    r.source = i % 5 == 0 ? &b : &a;
    switch (i % 4) {
      case 0:
        args = Str(i % 8 == 0 ? std::string(600, 'z') : "bob") + Var(ls_zigzag(-i));
        r.site_id = id1;
        r.signature = sig1;
        break;
      case 1:
        args = Dbl(1.5 * i) + Var(0xbeef) + Var(0xe9) + Var(0x7ffd1000) + Var(i) +
               Var(ls_zigzag(6)) + Var(ls_zigzag(2)) + Str("abcdef");
        r.site_id = id2;
        r.signature = sig2;
        break;
      case 2: {
        const std::string &f = fmts.empty() ? f1 : fmts[i % fmts.size()];
        st::Site s{7, static_cast<uint32_t>(i), f, "gen.c"};
        r.site_id = w->Intern(s);
        r.inline_site = &s;
        const std::string sig = Sig(f);
        r.signature = sig;
        args = fmts.empty() ? Str("x") + Var(ls_zigzag(2)) : Var(ls_zigzag(i));
        r.args = reinterpret_cast<const uint8_t *>(args.data());
        r.args_len = args.size();
        Check(w->Append(r), "append inline");
        continue;
      }
      default:
        Check(w->AppendDropped(*r.source, ts, 3 + i, ts - 5000), "dropped");
        continue;
    }
    if (i % 16 == 1) r.truncated = 12;
    r.args = reinterpret_cast<const uint8_t *>(args.data());
    r.args_len = args.size();
    Check(w->Append(r), "append");
  }
  Check(w->Flush(), "flush");
}

void Save(const std::string &dir, const char *name, uint8_t opts, const std::vector<uint8_t> &img) {
  std::string path = dir + "/" + name;
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(&opts, 1, 1, f) != 1 ||
      std::fwrite(img.data(), 1, img.size(), f) != img.size() || std::fclose(f) != 0) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    std::exit(1);
  }
  std::printf("%s: %zu bytes\n", path.c_str(), img.size() + 1);
}

std::vector<uint8_t> Make(uint64_t size, int n, int distinct, double tiers = 0, bool dict = false) {
  logsink::fuzz::MemEnv env;
  st::WriterOptions o;
  o.file_size = size;
  o.block_size = 4096;
  o.strtab_size = 4096;
  o.kept_share = o.error_share = tiers;  // FORMAT.md "Tiers": kept records, GAP entries
  // FORMAT.md "Dictionary": blocks of codec 3 after a dictionary trained early.
  o.dictionary_train_bytes = dict ? 16384 : 0;
  std::unique_ptr<st::RingWriter> w;
  Check(st::RingWriter::Open(&env, "/ring", o, &w), "open");
  if (n) Fill(w.get(), n, distinct);
  if (dict) {
    Check(w->FinishDictionary(), "dictionary");
    if (w->stats().dict_id == 0) {
      std::fprintf(stderr, "no dictionary was trained\n");
      std::exit(1);
    }
    Fill(w.get(), n, distinct);
  }
  w.reset();
  return env.files["/ring"];
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  std::string dir = argv[1];
  Save(dir, "empty-20k", 0, Make(20 << 10, 0, 0));
  Save(dir, "wrapped-28k", 0, Make(28 << 10, 900, 0));
  Save(dir, "strtab-full-28k-fixcrc", 1, Make(28 << 10, 700, 200));
  Save(dir, "partial-64k", 0, Make(64 << 10, 300, 20));
  Save(dir, "tiered-64k", 0, Make(64 << 10, 4000, 0, 0.25));
  Save(dir, "dictionary-304k", 0, Make(304 << 10, 3000, 0, 0, true));
  // FORMAT.md "Summary index": a file large enough for one, tiers on.
  Save(dir, "index-320k", 0, Make(320 << 10, 20000, 0, 0.25));
  return 0;
}
