// ring_fill.cc: makes test data for bench/logctl_bench.sh: a ring file of a
// given size written through storage's RingWriter until it is full (every slot
// written once, "user %d logged in." records with one int, 1 us apart), and
// optionally a plain-text log of the same size holding the same messages as
// timestamped lines (the baseline for tail/cat). With --records N it stops
// after N records if the ring is not full by then (bench/fleet/run.sh: an
// exact number of records per host).
//
// usage: ring_fill --ring PATH --size BYTES [--records N] [--text PATH]
// Prints "records N" (records written to the ring) and "lines N".
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "logsink/proto/codec.h"
#include "logsink/storage/ring.h"

namespace st = logsink::storage;

namespace {

int FillRing(const std::string &path, uint64_t size, uint64_t max_records) {
  st::WriterOptions o;
  o.file_size = size;
  std::unique_ptr<st::RingWriter> w;
  st::Status s = st::RingWriter::Open(st::Env::Default(), path, o, &w);
  if (!s.ok()) {
    fprintf(stderr, "ring_fill: %s: %s\n", path.c_str(), s.ToString().c_str());
    return 1;
  }
  st::Source src{w->next_source_id(), uint32_t(getpid()), getuid(), getgid(),
                 "ring_fill",         "ring_fill"};
  st::Site site{6, 1, "user %d logged in.", "bench/ring_fill.cc"};
  uint32_t id = w->Intern(site);
  if (id == 0) {
    fprintf(stderr, "ring_fill: Intern failed\n");
    return 1;
  }
  uint64_t ts = uint64_t(time(nullptr)) * 1000000000ull - 3600ull * 1000000000ull;
  uint64_t n = 0, blocks = w->layout().block_count;
  while (s.ok() && w->current_block_seq() < blocks && (max_records == 0 || n < max_records)) {
    uint8_t args[16];
    st::RecordIn r;
    r.source = &src;
    r.tid = 1;
    r.site_id = id;
    r.signature = "i";
    r.ts_ns = ts += 1000;
    r.args = args;
    r.args_len = ls_put_varint(args, ls_zigzag(int64_t(10000000 + n % 89999999)));
    s = w->Append(r);
    n++;
  }
  if (s.ok()) s = w->Flush();
  if (!s.ok()) {
    fprintf(stderr, "ring_fill: %s\n", s.ToString().c_str());
    return 1;
  }
  printf("records %" PRIu64 "\n", n);
  return 0;
}

int FillText(const std::string &path, uint64_t size) {
  FILE *f = fopen(path.c_str(), "w");
  if (!f) {
    perror(path.c_str());
    return 1;
  }
  std::vector<char> buf(1 << 20);
  size_t used = 0;
  uint64_t written = 0, n = 0;
  time_t t0 = time(nullptr) - 3600;
  while (written + used < size) {
    char line[128];
    uint64_t us = n;  // 1 us apart, like the ring's records
    time_t sec = t0 + time_t(us / 1000000);
    struct tm tm;
    gmtime_r(&sec, &tm);
    char when[32];
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    int len = snprintf(line, sizeof line,
                       "%s.%06" PRIu64 "Z info ring_fill[%d]: user %" PRIu64 " logged in.\n", when,
                       us % 1000000, int(getpid()), 10000000 + n % 89999999);
    if (written + used + uint64_t(len) > size) break;
    if (used + size_t(len) > buf.size()) {
      fwrite(buf.data(), 1, used, f);
      written += used;
      used = 0;
    }
    memcpy(buf.data() + used, line, size_t(len));
    used += size_t(len);
    n++;
  }
  fwrite(buf.data(), 1, used, f);
  if (fclose(f) != 0) {
    perror(path.c_str());
    return 1;
  }
  printf("lines %" PRIu64 "\n", n);
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  std::string ring, text;
  uint64_t size = 0, records = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--ring")
      ring = argv[i + 1];
    else if (a == "--text")
      text = argv[i + 1];
    else if (a == "--size")
      size = strtoull(argv[i + 1], nullptr, 0);
    else if (a == "--records")
      records = strtoull(argv[i + 1], nullptr, 0);
    else {
      fprintf(stderr, "usage: ring_fill --ring PATH --size BYTES [--records N] [--text PATH]\n");
      return 2;
    }
  }
  if (ring.empty() || size == 0) {
    fprintf(stderr, "usage: ring_fill --ring PATH --size BYTES [--records N] [--text PATH]\n");
    return 2;
  }
  if (int rc = FillRing(ring, size, records)) return rc;
  if (!text.empty()) return FillText(text, size);
  return 0;
}
