// line_filter_test.cc: logctl's levels at the source for send and run
// (logctl/level_gate.h): whole lines pass or are left out by the stream's
// level or their own "<N>" prefix, however the stream is cut into reads.
#include <gtest/gtest.h>

#include <string>

#include "logctl/level_gate.h"

namespace logsink::logctl {
namespace {

// Feeds `in` in pieces of `step` bytes (0: at once) and finishes.
std::string Filter(int stream_level, bool prio, int threshold, const std::string &in, size_t step,
                   uint64_t *left_out = nullptr) {
  LineFilter f(stream_level, prio, threshold);
  std::string out;
  if (step == 0) step = in.size() + 1;
  for (size_t i = 0; i < in.size(); i += step) f.Feed(std::string(in, i, step), &out);
  f.Finish(&out);
  if (left_out) *left_out = f.lines_left_out();
  return out;
}

TEST(LineFilter, PrefixesDecideEachLineWhateverTheReads) {
  const std::string in = "<7>debug\n<3>err\nplain\n<191>local7 debug\n<03>not a pri\n\n<4>" +
                         std::string(9000, 'w') + "\n<6\n<7>" + std::string(70000, 'd') + "\n<0>";
  const std::string want =
      "<3>err\nplain\n<03>not a pri\n\n<4>" + std::string(9000, 'w') + "\n<6\n<0>";
  for (size_t step : {size_t(0), size_t(1), size_t(2), size_t(3), size_t(5), size_t(4096)}) {
    uint64_t out_n = 0;
    EXPECT_EQ(Filter(5, true, 5, in, step, &out_n), want) << "step " << step;
    EXPECT_EQ(out_n, 3u) << "step " << step;
  }
}

TEST(LineFilter, WithoutPrefixesTheStreamLevelDecides) {
  const std::string in = "<7>a\nb\n";
  EXPECT_EQ(Filter(6, false, 6, in, 1), in);  // a prefix is text here
  uint64_t out_n = 0;
  EXPECT_EQ(Filter(6, false, 5, in, 1, &out_n), "");
  EXPECT_EQ(out_n, 2u);
  EXPECT_EQ(Filter(0, true, -1, "<0>x\n", 0), "");               // off: nothing
  EXPECT_EQ(Filter(7, true, 7, "<7>x\nlast", 1), "<7>x\nlast");  // debug: everything
}

}  // namespace
}  // namespace logsink::logctl
