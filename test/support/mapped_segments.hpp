// The team segments this process maps now, by name. Their names are removed from /dev/shm once
// every rank has attached, so /proc/self/maps shows them as deleted files; a segment's name ends
// in its 16-digit nonce, and shared allocations add a suffix to it (not counted). Header-only:
// the MPI test programs use it as well as the core's suite.
#pragma once

#include <fstream>
#include <set>
#include <string>

namespace shmcoll::test {

inline std::set<std::string> mapped_segments() {
  std::set<std::string> names;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    const auto at = line.find("/dev/shm/shmcoll-");
    if (at == std::string::npos) continue;
    std::string name = line.substr(at + 9);
    if (const auto end = name.find(' '); end != std::string::npos) name.resize(end);
    const std::string last = name.substr(name.rfind('-') + 1);
    if (last.size() == 16 && last.find_first_not_of("0123456789abcdef") == std::string::npos)
      names.insert(name);
  }
  return names;
}

}  // namespace shmcoll::test
