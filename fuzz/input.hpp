// Reads typed values off a fuzz input; past its end every value is zero, so any input is a
// complete test case.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace shmcoll::fuzz {

class Input {
 public:
  Input(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  template <class T>
  T take() {
    T value{};
    fill(reinterpret_cast<unsigned char*>(&value), sizeof value);
    return value;
  }
  void fill(unsigned char* out, std::size_t n) {
    const std::size_t have = std::min(n, size_ - at_);
    if (have > 0) std::memcpy(out, data_ + at_, have);
    std::memset(out + have, 0, n - have);
    at_ += have;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

}  // namespace shmcoll::fuzz
