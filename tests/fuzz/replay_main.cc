// replay_main.cc: main() of the fuzz_<target>_replay executables: runs every
// file under the given files and directories (recursively, in sorted order)
// through LLVMFuzzerTestOneInput once, so the seed corpus and the kept crash
// inputs are regression tests in every build (gcc, ASan preset) without
// libFuzzer. Exit 0 when all ran; a failing input aborts.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace fs = std::filesystem;

int main(int argc, char **argv) {
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; i++) {
    std::error_code ec;
    fs::path p(argv[i]);
    if (fs::is_directory(p, ec)) {
      for (const auto &e : fs::recursive_directory_iterator(p))
        if (e.is_regular_file()) inputs.push_back(e.path());
    } else if (fs::is_regular_file(p, ec)) {
      inputs.push_back(p);
    } else {
      std::fprintf(stderr, "replay: no such file or directory: %s\n", argv[i]);
      return 2;
    }
  }
  if (inputs.empty()) {
    std::fprintf(stderr, "replay: no inputs\n");
    return 2;
  }
  std::sort(inputs.begin(), inputs.end());
  for (const auto &p : inputs) {
    std::ifstream in(p, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
      std::fprintf(stderr, "replay: cannot read %s\n", p.c_str());
      return 2;
    }
    std::fprintf(stderr, "replay: %s (%zu bytes)\n", p.c_str(), bytes.size());
    // A copy in its own allocation, so ASan sees reads past its end.
    // (libFuzzer never passes a null pointer, not even for an empty input.)
    std::vector<uint8_t> copy(bytes);
    static uint8_t empty;
    LLVMFuzzerTestOneInput(copy.empty() ? &empty : copy.data(), copy.size());
  }
  std::printf("replay: %zu inputs OK\n", inputs.size());
  return 0;
}
