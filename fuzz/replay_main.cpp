// A driver for the fuzz target without libFuzzer (any compiler): runs the files given on the
// command line as inputs, or else `--random N [--seed S]` pseudo-random inputs of 0-512 bytes.
// The test suite runs it this way; scripts/fuzz.sh runs the real libFuzzer build.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  std::uint64_t random_inputs = 0, seed = 1;
  std::vector<const char*> files;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--random") == 0 && i + 1 < argc) {
      random_inputs = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else {
      files.push_back(argv[i]);
    }
  }
  for (const char* f : files) {
    std::ifstream in(f, std::ios::binary);
    const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                          std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  }
  std::mt19937_64 rng(seed);
  std::vector<std::uint8_t> input;
  for (std::uint64_t n = 0; n < random_inputs; ++n) {
    input.resize(rng() % 513);
    for (auto& b : input) b = static_cast<std::uint8_t>(rng());
    LLVMFuzzerTestOneInput(input.data(), input.size());
  }
  std::printf("fuzz replay: %zu files and %llu random inputs, no invariant broken\n",
              files.size(), static_cast<unsigned long long>(random_inputs));
  return 0;
}
