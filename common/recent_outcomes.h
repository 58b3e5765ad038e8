// The outcomes of the last few computations by key, for computations that
// repeat exactly (the aggregated mode's passes and host reads of the layers
// of one decode step): equal keys, equal outcomes. Bounded: the oldest goes
// first, so memory does not grow with the run.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace ispsim {

template <typename Key, typename Outcome, size_t kEntries = 8>
class RecentOutcomes {
 public:
  // The outcome kept for `key`, or null.
  const Outcome* find(const Key& key) const {
    for (const Entry& e : entries_)
      if (e.key == key) return &e.outcome;
    return nullptr;
  }
  // As insert(), in place of the outcome kept for an equal key if there is one.
  const Outcome& replace(Key key, Outcome outcome) {
    for (Entry& e : entries_)
      if (e.key == key) return e.outcome = std::move(outcome);
    return insert(std::move(key), std::move(outcome));
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
