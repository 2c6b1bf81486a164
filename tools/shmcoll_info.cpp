// shmcoll-info: prints the configuration parameters (name, default, current value, meaning)
// and the segment size a team of a given size would map.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "segment/layout.hpp"
#include "shmcoll/shmcoll.hpp"

int main(int argc, char** argv) {
  int ranks = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::puts(
          "usage: shmcoll-info [--segment-size RANKS]\n\n"
          "Prints every SHMCOLL_* parameter with its default and its value in this environment.\n"
          "--segment-size RANKS also prints the bytes of shared memory a team of RANKS maps.");
      return 0;
    }
    if (a == "--segment-size" && i + 1 < argc) {
      ranks = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "shmcoll-info: unknown argument %s (try --help)\n", a.c_str());
      return 2;
    }
  }
  try {
    const shmcoll::Options options = shmcoll::Options::from_env();
    std::printf("%-22s %-10s %-10s %s\n", "parameter", "default", "value", "meaning");
    for (const shmcoll::ParameterInfo& p : shmcoll::parameters(options)) {
      std::printf("%-22s %-10s %-10s %s\n", p.name.c_str(), p.default_value.c_str(),
                  p.value.c_str(), p.doc.c_str());
    }
    if (ranks > 0) {
      shmcoll::segment::Geometry g;
      g.nranks = static_cast<std::uint32_t>(ranks);
      g.slots = static_cast<std::uint32_t>(options.slots);
      g.slot_bytes = (options.slot_bytes + 63) / 64 * 64;
      std::printf("\nsegment for %d ranks: %llu bytes (%llu fixed + %llu per rank)\n", ranks,
                  static_cast<unsigned long long>(g.total_bytes()),
                  static_cast<unsigned long long>(g.ranks_offset()),
                  static_cast<unsigned long long>(g.rank_stride()));
    }
  } catch (const shmcoll::Error& e) {
    std::fprintf(stderr, "shmcoll-info: %s\n", e.what());
    return 1;
  }
  return 0;
}
