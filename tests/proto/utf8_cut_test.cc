// utf8_cut_test.cc: the one rule for cutting text (proto/codec.h,
// ls_utf8_trim_partial / ls_utf8_cut): a cut never ends inside a UTF-8
// character, and bytes that are not UTF-8 are cut where asked.
#include <gtest/gtest.h>

#include <string>

#include "logsink/proto/codec.h"

namespace logsink::test {
namespace {

size_t Trim(const std::string &s) {
  return ls_utf8_trim_partial(reinterpret_cast<const uint8_t *>(s.data()), s.size());
}
size_t Cut(const std::string &s, size_t max) {
  return ls_utf8_cut(reinterpret_cast<const uint8_t *>(s.data()), s.size(), max);
}

TEST(Utf8Cut, TrimsOnlyAnUnfinishedCharacter) {
  EXPECT_EQ(Trim(""), 0u);
  EXPECT_EQ(Trim("abc"), 3u);
  EXPECT_EQ(Trim("a\xc3\xa9"), 3u);      // é whole
  EXPECT_EQ(Trim("a\xc3"), 1u);          // é's first byte only
  EXPECT_EQ(Trim("a\xe2\x82\xac"), 4u);  // € whole
  EXPECT_EQ(Trim("a\xe2\x82"), 1u);      // € cut after 2 of 3
  EXPECT_EQ(Trim("a\xe2"), 1u);
  EXPECT_EQ(Trim("a\xf0\x9f\x98\x80"), 5u);  // 😀 whole
  EXPECT_EQ(Trim("a\xf0\x9f\x98"), 1u);      // cut after 3 of 4
  EXPECT_EQ(Trim("\x80\x80\x80\x80"), 4u);   // not UTF-8: nothing to finish
  EXPECT_EQ(Trim("a\xff"), 2u);              // not a lead byte
  EXPECT_EQ(Trim("a\xc0"), 2u);              // overlong lead: not one we finish
}

size_t Tail(const std::string &s, size_t max) {
  return ls_utf8_tail(reinterpret_cast<const uint8_t *>(s.data()), s.size(), max);
}

// Keeping the end (a long file name): the kept part never starts inside a
// character; bytes that are not UTF-8 are cut where asked.
TEST(Utf8Cut, TailStartsOnABoundary) {
  const std::string s = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";  // aé€😀, 10 bytes
  EXPECT_EQ(Tail(s, 10), 0u);
  EXPECT_EQ(Tail(s, 11), 0u);
  EXPECT_EQ(Tail(s, 9), 1u);  // "é€😀"
  EXPECT_EQ(Tail(s, 8), 3u);  // é's second byte left out: "€😀"
  EXPECT_EQ(Tail(s, 7), 3u);
  EXPECT_EQ(Tail(s, 6), 6u);  // "😀"
  EXPECT_EQ(Tail(s, 4), 6u);
  EXPECT_EQ(Tail(s, 3), 10u);                  // nothing whole fits
  EXPECT_EQ(Tail("\x80\x80\x80\x80", 2), 2u);  // not UTF-8: as asked
  EXPECT_EQ(Tail("\xe2"
                 "A\x82\x82",
                 3),
            1u);  // a lead not followed by its bytes
}

TEST(Utf8Cut, CutsAtMostMaxOnABoundary) {
  const std::string s = "\xc3\xa9\xc3\xa9\xc3\xa9";  // ééé, 6 bytes
  EXPECT_EQ(Cut(s, 10), 6u);
  EXPECT_EQ(Cut(s, 6), 6u);
  EXPECT_EQ(Cut(s, 5), 4u);
  EXPECT_EQ(Cut(s, 4), 4u);
  EXPECT_EQ(Cut(s, 1), 0u);
  EXPECT_EQ(Cut(s, 0), 0u);
}

}  // namespace
}  // namespace logsink::test
