// Sorting a vector made of runs that are each already in order (a stream's
// pages channel by channel, each channel's in time order): neighbouring runs
// are merged pairwise, log2(runs) passes instead of a whole sort. Stable, like
// std::stable_sort: of equal elements, the earlier run's come first.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

namespace ispsim {

// `runs` holds where each run begins, then v.size(): run i is [runs[i], runs[i + 1]).
template <typename T, typename Less = std::less<T>>
void merge_sorted_runs(std::vector<T>& v, std::vector<size_t> runs, Less less = Less()) {
  while (runs.size() > 2) {
    std::vector<size_t> merged{runs[0]};
    for (size_t i = 0; i + 2 < runs.size(); i += 2) {
      std::inplace_merge(v.begin() + runs[i], v.begin() + runs[i + 1], v.begin() + runs[i + 2], less);
      merged.push_back(runs[i + 2]);
    }
    if (runs.size() % 2 == 0) merged.push_back(runs.back());  // an odd run out waits a pass
    runs = std::move(merged);
  }
}

}  // namespace ispsim
