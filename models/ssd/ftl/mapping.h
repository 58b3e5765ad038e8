// The FTL's logical-to-physical page mapping: a page-level mapping (any logical
// page may map to any physical page) behind an interface, so that a cached
// variant (DFTL-style) can take the same role later.
//
// ExtentMap stores it as extents: a run of consecutive logical pages mapped to
// consecutive physical pages is one entry. KV caches and RAG stores are written
// in long sequential runs, so the simulator's memory grows with the number of
// runs written, not with the drive's capacity; random overwrites split extents
// down to single pages, which is the most a page-level table can need.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

namespace ispsim::ftl {

// Logical pages [lpn, lpn + count) at physical pages [ppn, ppn + count).
struct PageRun {
  uint64_t lpn = 0;
  uint64_t ppn = 0;
  uint64_t count = 0;
};

// What the mapping holds at a logical page: the whole extent that covers it
// (mapped), or the gap up to the next mapped page (count = pages to it, or
// UINT64_MAX - lpn when nothing follows).
struct Segment {
  bool mapped = false;
  PageRun run;
};

class MappingTable {
 public:
  virtual ~MappingTable() = default;
  virtual Segment segment(uint64_t lpn) const = 0;
  // Maps `run`; appends the parts of earlier mappings it replaced to `replaced`.
  virtual void map(const PageRun& run, std::vector<PageRun>& replaced) = 0;
  // Unmaps [lpn, lpn + count); appends what was mapped there to `removed`.
  virtual void unmap(uint64_t lpn, uint64_t count, std::vector<PageRun>& removed) = 0;
  // Every extent in logical order.
  virtual void for_each(const std::function<void(const PageRun&)>& visit) const = 0;
  virtual uint64_t mapped_pages() const = 0;
  // Entries held, and the simulator memory they take (bytes, estimated).
  virtual uint64_t entries() const = 0;
  virtual uint64_t memory_bytes() const = 0;
};

class ExtentMap final : public MappingTable {
 public:
  ExtentMap() = default;
  ExtentMap(const ExtentMap&) = delete;  // it keeps an iterator into itself
  ExtentMap& operator=(const ExtentMap&) = delete;
  Segment segment(uint64_t lpn) const override;
  void map(const PageRun& run, std::vector<PageRun>& replaced) override;
  void unmap(uint64_t lpn, uint64_t count, std::vector<PageRun>& removed) override;
  void for_each(const std::function<void(const PageRun&)>& visit) const override;
  uint64_t mapped_pages() const override { return mapped_pages_; }
  uint64_t entries() const override { return extents_.size(); }
  uint64_t memory_bytes() const override;

 private:
  struct Extent {
    uint64_t count;
    uint64_t ppn;
  };
  using Extents = std::map<uint64_t, Extent>;  // by first logical page
  // extents_.upper_bound(lpn), found from the last one when lpn is in the
  // same or the next extent (reads walk the map in logical order).
  Extents::const_iterator upper_bound(uint64_t lpn) const;
  // Splits the extent covering `lpn` (if any) so that one starts at `lpn`.
  void split_at(uint64_t lpn);
  // Joins the extent at `it` with its logical and physical successor.
  void merge_with_next(Extents::iterator it);

  Extents extents_;
  uint64_t mapped_pages_ = 0;
  mutable Extents::const_iterator last_upper_;  // the last upper_bound(), while valid_last_
  mutable bool valid_last_ = false;             // false after any change
};

}  // namespace ispsim::ftl
