// A page list bucketed into per-die (or per-channel) queues, list order kept
// within each queue, as both the ISP's stream reader and the SSD's host reader
// schedule their reads.
#pragma once

#include <cstdint>
#include <vector>

#include "models/nand/page_address.h"

namespace ispsim::nand {

class PageQueues {
 public:
  // Buckets the indices of `pages` by queue_of(page) < queues (a counting sort).
  template <class QueueOf>
  void build(const std::vector<PageAddress>& pages, size_t queues, QueueOf queue_of) {
    begin_.assign(queues + 1, 0);
    for (const PageAddress& p : pages) ++begin_[queue_of(p) + 1];
    for (size_t q = 0; q < queues; ++q) begin_[q + 1] += begin_[q];
    next_.assign(begin_.begin(), begin_.end() - 1);
    order_.resize(pages.size());
    for (uint32_t i = 0; i < pages.size(); ++i) order_[next_[queue_of(pages[i])]++] = i;
    next_.assign(begin_.begin(), begin_.end() - 1);
  }

  bool empty(size_t q) const { return next_[q] == begin_[q + 1]; }
  // The next page index of queue q (not empty); the pointer stays valid until
  // the next build() (dies read their tags from it). pop() takes it off.
  const uint32_t* peek(size_t q) const { return &order_[next_[q]]; }
  void pop(size_t q) { ++next_[q]; }
  // Takes the next pages of queue q for one multi-plane read: while their
  // planes differ, at most `planes`. Returns how many; `*first` points at their
  // consecutive indices.
  unsigned take_multi_plane(size_t q, const std::vector<PageAddress>& pages, unsigned planes,
                            const uint32_t** first) {
    *first = &order_[next_[q]];
    unsigned count = 0, planes_used = 0;
    while (count < planes && !empty(q)) {
      const unsigned bit = 1u << pages[order_[next_[q]]].plane;
      if (planes_used & bit) break;
      planes_used |= bit;
      ++count;
      ++next_[q];
    }
    return count;
  }

 private:
  std::vector<uint32_t> order_;  // page indices, queue after queue
  std::vector<uint32_t> begin_;  // queue q holds order_[begin_[q] .. begin_[q+1])
  std::vector<uint32_t> next_;   // cursor of each queue
};

}  // namespace ispsim::nand
