// core/array_ref.h — a non-owning view of a contiguous list, like c10::ArrayRef.
//
// IntArrayRef is how shapes, strides and dim lists are passed: from a std::vector, a
// braced list ({2, 3}), or a single integer. It never owns its elements; it is valid only
// as long as what it points at (a braced list lives until the end of the full expression,
// so never store an IntArrayRef — copy it into a vector with .vec()).
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <vector>

namespace glass {

template <class T>
class ArrayRef {
 public:
  constexpr ArrayRef() = default;
  constexpr ArrayRef(const T& one) : data_(&one), size_(1) {}  // NOLINT
  constexpr ArrayRef(const T* data, size_t size) : data_(data), size_(size) {}
  ArrayRef(const std::vector<T>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT
  template <size_t N>
  constexpr ArrayRef(const std::array<T, N>& a) : data_(a.data()), size_(N) {}  // NOLINT
  // The list's array lives until the end of the full expression that wrote it, which
  // is exactly as long as an ArrayRef argument is used (same rule as c10::ArrayRef).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
  constexpr ArrayRef(std::initializer_list<T> l)  // NOLINT
      : data_(l.begin() == l.end() ? nullptr : l.begin()), size_(l.size()) {}
#pragma GCC diagnostic pop

  constexpr const T* begin() const { return data_; }
  constexpr const T* end() const { return data_ + size_; }
  constexpr const T* data() const { return data_; }
  constexpr size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr const T& operator[](size_t i) const { return data_[i]; }
  constexpr const T& front() const { return data_[0]; }
  constexpr const T& back() const { return data_[size_ - 1]; }
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }
  ArrayRef slice(size_t start) const { return ArrayRef(data_ + start, size_ - start); }
  ArrayRef slice(size_t start, size_t n) const { return ArrayRef(data_ + start, n); }

  bool equals(ArrayRef other) const {
    if (size_ != other.size_) return false;
    for (size_t i = 0; i < size_; ++i)
      if (!(data_[i] == other.data_[i])) return false;
    return true;
  }

 private:
  const T* data_ = nullptr;
  size_t size_ = 0;
};

template <class T>
bool operator==(ArrayRef<T> a, ArrayRef<T> b) {
  return a.equals(b);
}
template <class T>
bool operator==(ArrayRef<T> a, const std::vector<T>& b) {
  return a.equals(ArrayRef<T>(b));
}
template <class T>
bool operator==(const std::vector<T>& a, ArrayRef<T> b) {
  return b.equals(ArrayRef<T>(a));
}

using IntArrayRef = ArrayRef<int64_t>;

// Prints [2, 3], the way PyTorch prints sizes and strides in messages.
template <class T>
std::ostream& operator<<(std::ostream& os, ArrayRef<T> a) {
  os << '[';
  for (size_t i = 0; i < a.size(); ++i) os << (i ? ", " : "") << a[i];
  return os << ']';
}

}  // namespace glass
