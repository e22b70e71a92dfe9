// core/storage.h — the bytes behind every tensor.
//
// A Storage owns one allocation on one device and never moves or resizes it. Tensors
// are views: (sizes, strides, offset) over a Storage, so two tensors alias exactly when
// they share a StorageImpl. Storage is a cheap refcounted handle; the bytes are freed
// (returned to their Allocator, or to a from_blob deleter) when the last handle goes.
// A Storage's device always has an index for device types that have one: Device(kCUDA)
// is resolved to the current device when the bytes are allocated (device_guard.h), so
// Tensor::device() says cuda:0, never an ambiguous "cuda".
//
// Note [Version Counter Sharing]
// The version counter lives here, not on the tensor: an in-place write through any view
// changes what every other view of the same bytes sees, so all of them must observe the
// bump. Autograd records the version when it saves a tensor for backward and refuses to
// use it if the number has moved since. It also records the storage's id(): a tensor
// re-pointed at other bytes (set_data, Module::to) has the same TensorImpl but another
// storage, whose version says nothing about what was saved. (PyTorch keeps the counter on
// the tensor and shares it with views and detach(), which comes to the same for views; its
// set_data keeps the old counter, so a saved tensor rebound to other data goes unnoticed.
// Here it is an error.)
//
// A storage may give its bytes back and take them again (drop_bytes / restore_bytes) while
// every tensor keeps it: FSDP frees a unit's gathered parameters between uses this way.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "core/allocator.h"
#include "core/device.h"

namespace glass {

struct StorageImpl {
  // Allocates nbytes from `allocator`; `device` is where they live (resolved, with index).
  StorageImpl(size_t nbytes, Allocator* allocator, Device device);
  // Wraps memory the caller owns (from_blob); `deleter` (may be empty) runs at release.
  StorageImpl(void* data, size_t nbytes, Device device, std::function<void(void*)> deleter);
  ~StorageImpl();
  StorageImpl(const StorageImpl&) = delete;
  StorageImpl& operator=(const StorageImpl&) = delete;

  void* data;
  size_t nbytes;
  Device device;
  Allocator* allocator;                // null for from_blob memory
  std::function<void(void*)> deleter;  // only for from_blob memory
  std::atomic<uint32_t> version{0};    // Note [Version Counter Sharing]
  const uint64_t id;                   // unique in the process, never reused
};

class Storage {
 public:
  Storage() = default;
  explicit Storage(std::shared_ptr<StorageImpl> impl) : impl_(std::move(impl)) {}
  // nbytes from the device type's allocator, with `device` current while they are
  // allocated. Device(kCUDA) means the current CUDA device; an index beyond the device
  // count is an error naming both ("cuda:3 does not exist; this machine has 2 CUDA devices").
  static Storage allocate(size_t nbytes, Device device);

  bool defined() const { return impl_ != nullptr; }
  void* data() const { return impl_->data; }       // null while the bytes are dropped
  size_t nbytes() const { return impl_->nbytes; }  // kept while the bytes are dropped
  Device device() const { return impl_->device; }
  // The allocator the bytes came from (null for from_blob memory).
  Allocator* allocator() const { return impl_->allocator; }
  uint32_t version() const { return impl_->version.load(std::memory_order_relaxed); }
  void bump_version() const { impl_->version.fetch_add(1, std::memory_order_relaxed); }
  // Identity that outlives the storage (ids are never reused, unlike addresses).
  uint64_t id() const { return impl_->id; }
  long use_count() const { return impl_.use_count(); }

  // Gives the bytes back to their allocator; the storage, every tensor over it, its size
  // and its version stay (PyTorch: untyped_storage().resize_(0)). Reading or writing a
  // tensor over it is then an error that says so. Only allocator memory can be dropped
  // (from_blob memory belongs to whoever lent it). Dropping twice is allowed.
  void drop_bytes() const;
  // Allocates nbytes() again, on the same device. The version does not move and the
  // contents are unspecified: the caller writes back what was there (FSDP all-gathers the
  // same shards), which is what lets a tensor saved for backward be used again. Restoring
  // bytes that are present does nothing.
  void restore_bytes() const;
  bool has_bytes() const { return impl_->data != nullptr || impl_->nbytes == 0; }
  // Identity: true when both handles own the same allocation.
  bool is_alias_of(const Storage& other) const { return impl_ == other.impl_; }
  bool operator==(const Storage& other) const { return impl_ == other.impl_; }
  const StorageImpl* unsafe_impl() const { return impl_.get(); }

 private:
  std::shared_ptr<StorageImpl> impl_;
};

}  // namespace glass
