// Building error messages by appending, from strings and numbers. (Appending also avoids the
// `"literal" + std::string&&` form, on which GCC 12 reports a false -Wrestrict.)
#pragma once

#include <concepts>
#include <string>
#include <string_view>
#include <vector>

namespace shmcoll {

namespace text_detail {
inline void append(std::string& s, std::string_view v) { s.append(v); }
inline void append(std::string& s, char c) { s.push_back(c); }
template <std::integral T>
requires(!std::same_as<T, char>) void append(std::string& s, T v) { s.append(std::to_string(v)); }
}  // namespace text_detail

template <class... Parts>
std::string concat(const Parts&... parts) {
  std::string s;
  (text_detail::append(s, parts), ...);
  return s;
}

// Ranks in increasing order as a reader wants them: "rank 3", "ranks 0-2", "ranks 0, 2, 5-7".
inline std::string rank_list(const std::vector<int>& ranks) {
  std::string s = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (i > 0) s += ", ";
    s += std::to_string(ranks[i]);
    if (j > i) {
      // Appended in two steps: GCC 12 warns (-Wrestrict) about `"-" + std::string` here in
      // optimized builds without LTO, a false positive.
      s += '-';
      s += std::to_string(ranks[j]);
    }
    i = j + 1;
  }
  return s;
}

}  // namespace shmcoll
