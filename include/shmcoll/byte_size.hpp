// Byte sizes written with an optional K, M or G suffix (powers of 1024): how every SHMCOLL_*
// size parameter and the benchmarks' --min-bytes / --max-bytes are read.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace shmcoll {

// "4096", "64K", "16M", "1G" -> the number of bytes; nothing for anything else or on overflow.
inline std::optional<long long> parse_byte_size(const std::string& text) {
  char* end = nullptr;
  const long long n = std::strtoll(text.c_str(), &end, 0);
  if (end == text.c_str()) return std::nullopt;
  long long unit = 1;
  switch (*end) {
    case 'k':
    case 'K':
      unit = 1LL << 10;
      ++end;
      break;
    case 'm':
    case 'M':
      unit = 1LL << 20;
      ++end;
      break;
    case 'g':
    case 'G':
      unit = 1LL << 30;
      ++end;
      break;
    default:
      break;
  }
  long long bytes = 0;
  if (*end != '\0' || __builtin_mul_overflow(n, unit, &bytes)) return std::nullopt;
  return bytes;
}

}  // namespace shmcoll
