// Building error messages by appending, from strings and numbers. (Appending also avoids the
// `"literal" + std::string&&` form, on which GCC 12 reports a false -Wrestrict.)
#pragma once

#include <concepts>
#include <string>
#include <string_view>

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

}  // namespace shmcoll
