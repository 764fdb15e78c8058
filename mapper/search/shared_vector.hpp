#pragma once
// A vector whose copies share one buffer: a layer's mapspace (its block configs and templates), its
// pmapping groups and their compatibilities are copied to every layer of a workload with identical
// layers (a 50,000-layer chain of one layer repeated) and into the join problems, and each copy
// would otherwise hold its own kilobytes. Reads share; edit() copies first unless this copy is the
// buffer's only holder (copy on write), so changing one copy never changes another.

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <utility>
#include <vector>

namespace npumap::search {

/// A std::vector<T> shared by its copies (reference-counted, safe to copy across threads). Built
/// whole from a vector; reads as a const vector does; edit() gives the vector to change.
template <class T>
class SharedVector {
 public:
  SharedVector() = default;
  SharedVector(std::vector<T> v)  // NOLINT(google-explicit-constructor): assigned from a built vector
      : data_(v.empty() ? nullptr : std::make_shared<std::vector<T>>(std::move(v))) {}

  SharedVector(std::initializer_list<T> items) : SharedVector(std::vector<T>(items)) {}

  const std::vector<T>& vector() const { return data_ ? *data_ : none(); }
  operator const std::vector<T>&() const { return vector(); }  // NOLINT(google-explicit-constructor)

  std::size_t size() const { return vector().size(); }
  bool empty() const { return vector().empty(); }
  const T& operator[](std::size_t i) const { return vector()[i]; }
  const T& at(std::size_t i) const { return vector().at(i); }
  const T& front() const { return vector().front(); }
  const T& back() const { return vector().back(); }
  typename std::vector<T>::const_iterator begin() const { return vector().begin(); }
  typename std::vector<T>::const_iterator end() const { return vector().end(); }

  /// This copy's vector to change: copied from the shared buffer first unless this copy is its only
  /// holder (no other copy ever sees the change). Not to be called while another thread reads this
  /// same object (reading other copies is fine).
  std::vector<T>& edit() {
    if (!data_) {
      data_ = std::make_shared<std::vector<T>>();
    } else if (data_.use_count() > 1) {
      data_ = std::make_shared<std::vector<T>>(*data_);
    }
    return *data_;
  }

  /// Whether the two copies share one buffer (both empty counts as sharing).
  bool shares_with(const SharedVector& other) const { return data_ == other.data_; }
  /// The shared buffer's identity (null when empty): equal for copies that share it.
  const void* buffer() const { return data_.get(); }

  friend bool operator==(const SharedVector& a, const SharedVector& b) {
    return a.data_ == b.data_ || a.vector() == b.vector();
  }

 private:
  static const std::vector<T>& none() {
    static const std::vector<T> none;
    return none;
  }
  std::shared_ptr<std::vector<T>> data_;
};

}  // namespace npumap::search
