// core/small_vector.h — a vector that keeps its first N elements inline.
//
// Sizes and strides are almost always short (a 4-D tensor has four of each), and every
// op makes new ones, so keeping them in a std::vector costs a heap allocation each time.
// SmallVector<T, N> stores up to N elements inside the object and only goes to the heap
// beyond that (PyTorch's SmallVector / DimVector do the same). Only trivially copyable T:
// that keeps the implementation short, and dims are int64_t.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <type_traits>

#include "core/array_ref.h"

namespace glass {

template <class T, size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>, "SmallVector holds trivially copyable types only");

 public:
  SmallVector() = default;
  explicit SmallVector(size_t n, T value = T()) { assign(n, value); }
  SmallVector(std::initializer_list<T> l) { assign(l.begin(), l.end()); }
  SmallVector(ArrayRef<T> a) { assign(a.begin(), a.end()); }  // NOLINT: implicit, like a copy
  SmallVector(const SmallVector& o) { assign(o.begin(), o.end()); }
  SmallVector(SmallVector&& o) noexcept { steal(o); }
  SmallVector& operator=(const SmallVector& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  SmallVector& operator=(SmallVector&& o) noexcept {
    if (this != &o) {
      release();
      steal(o);
    }
    return *this;
  }
  ~SmallVector() { release(); }

  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T& back() { return data_[size_ - 1]; }
  const T& back() const { return data_[size_ - 1]; }
  operator ArrayRef<T>() const { return ArrayRef<T>(data_, size_); }  // NOLINT
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }

  void reserve(size_t n) {
    if (n <= cap_) return;
    T* fresh = new T[n];
    if (size_) std::memcpy(fresh, data_, size_ * sizeof(T));
    release();
    data_ = fresh;
    cap_ = n;
  }
  void clear() { size_ = 0; }
  void push_back(T v) {
    if (size_ == cap_) reserve(cap_ * 2);
    data_[size_++] = v;
  }
  void resize(size_t n, T value = T()) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) data_[i] = value;
    size_ = n;
  }
  void assign(size_t n, T value) {
    clear();
    resize(n, value);
  }
  template <class It>
  void assign(It first, It last) {
    size_t n = static_cast<size_t>(last - first);
    clear();
    reserve(n);
    std::copy(first, last, data_);
    size_ = n;
  }
  T* insert(T* pos, T v) {
    size_t at = static_cast<size_t>(pos - data_);
    push_back(v);  // may move the buffer: work with the index from here on
    std::rotate(data_ + at, data_ + size_ - 1, data_ + size_);
    return data_ + at;
  }
  T* erase(T* pos) {
    std::copy(pos + 1, end(), pos);
    --size_;
    return pos;
  }

  operator std::vector<T>() const { return vec(); }  // NOLINT: hands a Shape to old code

  friend bool operator==(const SmallVector& a, const SmallVector& b) {
    return ArrayRef<T>(a).equals(ArrayRef<T>(b));
  }
  friend bool operator==(const SmallVector& a, const std::vector<T>& b) {
    return ArrayRef<T>(a).equals(ArrayRef<T>(b));
  }
  friend std::ostream& operator<<(std::ostream& os, const SmallVector& v) {
    return os << ArrayRef<T>(v);
  }

 private:
  void release() {
    if (data_ != inline_) delete[] data_;
    data_ = inline_;
    cap_ = N;
  }
  void steal(SmallVector& o) {
    if (o.data_ == o.inline_) {
      std::memcpy(inline_, o.inline_, o.size_ * sizeof(T));
      data_ = inline_;
      cap_ = N;
    } else {
      data_ = o.data_;
      cap_ = o.cap_;
      o.data_ = o.inline_;
      o.cap_ = N;
    }
    size_ = o.size_;
    o.size_ = 0;
  }

  T inline_[N];
  T* data_ = inline_;
  size_t size_ = 0;
  size_t cap_ = N;
};

// The inline capacity that covers nearly every tensor (PyTorch uses 5 as well).
using DimVector = SmallVector<int64_t, 6>;

}  // namespace glass
