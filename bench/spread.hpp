// The extremes and the median of a figure over its repetitions, as records keep them.
#pragma once

#include <algorithm>
#include <vector>

namespace shmcoll::bench {

struct Spread {
  double min = 0, median = 0, max = 0;
};

// The median of an even count is the upper of the middle two; no samples give zeros.
inline Spread spread_of(std::vector<double> samples) {
  if (samples.empty()) return {};
  std::sort(samples.begin(), samples.end());
  return {samples.front(), samples[samples.size() / 2], samples.back()};
}

}  // namespace shmcoll::bench
