// context_fixture.h: the state the daemon's inputs share (daemon/src/
// context.h: ring writer, free-text sites, level rules, counters) on a real ring file of
// a test's temporary directory, for tests that drive a session, the syslog
// receiver or the kernel reader in process and read the ring back.
#pragma once

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <vector>

#include "common/ring_check.h"
#include "common/temp_dir.h"
#include "context.h"
#include "levels.h"

namespace logsink::test {

class ContextTest : public ::testing::Test {
 protected:
  explicit ContextTest(uint64_t file_size) : file_size_(file_size) {}
  void SetUp() override {
    spdlog::set_level(spdlog::level::off);
    storage::WriterOptions o;
    o.file_size = file_size_;
    ASSERT_TRUE(storage::RingWriter::Open(storage::Env::Default(), dir_ / "r", o, &w_).ok());
    text_ = std::make_unique<daemon::TextSites>(w_.get());
    text_->set_kern_refused_counter(&counters_.kern_refused);  // as the server does
    text_->set_field_counters({&counters_.text_field_sites, &counters_.text_fields_fallback,
                               &counters_.text_field_names_refused});
    ctx_.writer = w_.get();
    ctx_.text = text_.get();
    ctx_.counters = &counters_;
    ctx_.levels = &levels_;
  }
  // What the ring holds after a flush.
  std::vector<OwnedRecord> Flushed() {
    EXPECT_TRUE(w_->Flush().ok());
    return ReadRing(dir_ / "r");
  }
  uint64_t file_size_;
  TempDir dir_;
  std::unique_ptr<storage::RingWriter> w_;
  std::unique_ptr<daemon::TextSites> text_;
  daemon::Counters counters_;
  daemon::LevelRules levels_;
  daemon::Context ctx_;
};

}  // namespace logsink::test
