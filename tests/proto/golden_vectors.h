// golden_vectors.h: reads tests/golden/frames.hex (name, then hex bytes per
// line) for the golden tests of the decoders and of the encoders.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace logsink::test {

inline std::map<std::string, std::string> LoadVectors() {
  std::ifstream in(LOGSINK_SOURCE_DIR "/tests/golden/frames.hex");
  EXPECT_TRUE(in.good()) << "cannot open tests/golden/frames.hex";
  std::map<std::string, std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    std::string name, tok, bytes;
    ls >> name;
    while (ls >> tok) {
      EXPECT_EQ(tok.size() % 2, 0u) << name;
      for (size_t i = 0; i + 1 < tok.size(); i += 2)
        bytes.push_back(char(std::stoi(tok.substr(i, 2), nullptr, 16)));
    }
    out[name] = bytes;
  }
  return out;
}

}  // namespace logsink::test
