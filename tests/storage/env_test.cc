// env_test.cc: Env::Default() against the real file system: exact-size
// preallocated creation, refusal to create over an existing file, pread/pwrite
// round trip, NotFound, and the exclusive writer lock.
#include "logsink/storage/env.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "logsink/storage/ring.h"

namespace logsink::test {
namespace {

using namespace ::logsink::storage;

class EnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/logsink-env-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }
  std::string dir_;
};

TEST_F(EnvTest, CreateIsExactSizeZeroFilledAndPreallocated) {
  Env *env = Env::Default();
  std::string p = dir_ + "/ring";
  std::unique_ptr<File> f;
  ASSERT_TRUE(env->CreateFile(p, 1 << 20, CreateFileOptions(), &f).ok());
  uint64_t size = 0;
  ASSERT_TRUE(f->Size(&size).ok());
  EXPECT_EQ(size, 1u << 20);
  struct stat st;
  ASSERT_EQ(stat(p.c_str(), &st), 0);
  EXPECT_GE(uint64_t(st.st_blocks) * 512, 1u << 20);  // blocks really allocated
  std::vector<uint8_t> buf(4096, 0xaa);
  size_t got = 0;
  ASSERT_TRUE(f->PRead((1 << 20) - 4096, buf.data(), buf.size(), &got).ok());
  EXPECT_EQ(got, 4096u);
  EXPECT_EQ(buf, std::vector<uint8_t>(4096, 0));
  EXPECT_TRUE(env->FileExists(p));
  // Creating again fails: a file is never overwritten by CreateFile.
  std::unique_ptr<File> g;
  EXPECT_FALSE(env->CreateFile(p, 4096, CreateFileOptions(), &g).ok());
}

TEST_F(EnvTest, WriteReadBackAndShortReadAtEnd) {
  Env *env = Env::Default();
  std::string p = dir_ + "/f";
  std::unique_ptr<File> f;
  ASSERT_TRUE(env->CreateFile(p, 100, CreateFileOptions(), &f).ok());
  ASSERT_TRUE(f->PWrite(90, "0123456789", 10).ok());
  ASSERT_TRUE(f->Sync().ok());
  char buf[20] = {};
  size_t got = 0;
  ASSERT_TRUE(f->PRead(90, buf, sizeof buf, &got).ok());
  EXPECT_EQ(got, 10u);
  EXPECT_EQ(std::string(buf, got), "0123456789");
  std::unique_ptr<File> r;
  ASSERT_TRUE(env->OpenFile(p, false, &r).ok());
  ASSERT_TRUE(r->PRead(0, buf, 5, &got).ok());
  EXPECT_EQ(got, 5u);
  EXPECT_FALSE(r->PWrite(0, "x", 1).ok());  // opened read-only
}

TEST_F(EnvTest, MissingFileIsNotFound) {
  std::unique_ptr<File> f;
  Status s = Env::Default()->OpenFile(dir_ + "/nope", false, &f);
  EXPECT_TRUE(s.IsNotFound());
  EXPECT_FALSE(Env::Default()->FileExists(dir_ + "/nope"));
  EXPECT_TRUE(Env::Default()->RemoveFile(dir_ + "/nope").IsNotFound());
}

TEST_F(EnvTest, SecondExclusiveLockIsBusy) {
  Env *env = Env::Default();
  std::string p = dir_ + "/locked";
  std::unique_ptr<File> a, b;
  ASSERT_TRUE(env->CreateFile(p, 4096, CreateFileOptions(), &a).ok());
  ASSERT_TRUE(a->LockExclusive().ok());
  ASSERT_TRUE(env->OpenFile(p, true, &b).ok());
  EXPECT_EQ(b->LockExclusive().code(), Status::Code::kBusy);
  a.reset();  // closing releases the lock
  EXPECT_TRUE(b->LockExclusive().ok());
}

TEST_F(EnvTest, RingOnTheRealFileSystem) {
  Env *env = Env::Default();
  std::string p = dir_ + "/ring";
  WriterOptions o;
  o.codec = LS_CODEC_NONE;  // the block layout as it is (compression: ring_compress_test)
  o.file_size = 1 << 20;
  o.block_size = 4096;
  std::unique_ptr<RingWriter> w;
  ASSERT_TRUE(RingWriter::Open(env, p, o, &w).ok());
  // One writer per file: a second one is refused while the first is open.
  std::unique_ptr<RingWriter> w2;
  EXPECT_EQ(RingWriter::Open(env, p, o, &w2).code(), Status::Code::kBusy);
  uint32_t site = w->Intern(Site{6, 1, "n=%d", "e.c"});
  Source src{1, 2, 3, 4, "a", "b"};
  for (int i = 0; i < 1000; i++) {
    uint8_t arg[2] = {uint8_t(i % 64 * 2), 0};
    RecordIn in;
    in.source = &src;
    in.site_id = site;
    in.signature = "i";
    in.ts_ns = uint64_t(i);
    in.args = arg;
    in.args_len = 1;
    ASSERT_TRUE(w->Append(in).ok());
  }
  ASSERT_TRUE(w->Flush().ok());
  ASSERT_TRUE(w->Sync().ok());
  struct stat st;
  ASSERT_EQ(stat(p.c_str(), &st), 0);
  EXPECT_EQ(uint64_t(st.st_size), o.file_size);
  std::unique_ptr<RingReader> r;
  ASSERT_TRUE(RingReader::Open(env, p, nullptr, &r).ok());
  Record rec;
  uint64_t n = 0;
  while (r->Next(&rec).ok()) {
    EXPECT_EQ(rec.seq, n);
    EXPECT_EQ(rec.args.size(), 1u);
    n++;
  }
  EXPECT_EQ(n, 1000u);
  EXPECT_TRUE(r->Verify().ok());
  w.reset();
  EXPECT_TRUE(RingWriter::Open(env, p, o, &w2).ok());  // the lock went with the writer
  EXPECT_EQ(w2->next_record_seq(), 1000u);
}

}  // namespace
}  // namespace logsink::test
