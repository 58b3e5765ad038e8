// A cost computed for one item and kept while the key it depends on stays the
// same: runs of identical items (a pass's full pages, a read's full pages) pay
// for it once per run.
#pragma once

namespace ispsim {

template <typename Key, typename Value>
class LastValue {
 public:
  template <typename Make>
  const Value& get(const Key& key, Make make) {
    if (!valid_ || !(key == key_)) {
      key_ = key;
      value_ = make();
      valid_ = true;
    }
    return value_;
  }

 private:
  bool valid_ = false;
  Key key_{};
  Value value_{};
};

}  // namespace ispsim
