// The outcomes of the last few computations by key, for computations that
// repeat exactly (the aggregated mode's passes and host reads of the layers
// of one decode step): equal keys, equal outcomes. Bounded: the one least
// recently found or kept goes first, so memory does not grow with the run.
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace ispsim {

template <typename Key, typename Outcome, size_t kEntries = 8>
class RecentOutcomes {
 public:
  // The outcome kept for `key`, or null.
  const Outcome* find(const Key& key) {
    return find(key, [](const Outcome&) { return true; });
  }
  // The first outcome kept for `key` that `usable` accepts, or null. Found,
  // it becomes the newest (the one to go last).
  template <typename Usable>
  const Outcome* find(const Key& key, Usable usable) {
    for (auto e = entries_.begin(); e != entries_.end(); ++e) {
      if (!(e->key == key && usable(e->outcome))) continue;
      std::rotate(e, e + 1, entries_.end());
      return &entries_.back().outcome;
    }
    return nullptr;
  }
  const Outcome& insert(Key key, Outcome outcome) {
    if (entries_.size() == kEntries) entries_.erase(entries_.begin());
    entries_.push_back({std::move(key), std::move(outcome)});
    return entries_.back().outcome;
  }

 private:
  struct Entry {
    Key key;
    Outcome outcome;
  };
  std::vector<Entry> entries_;
};

}  // namespace ispsim
