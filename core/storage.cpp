// core/storage.cpp — acquiring and releasing a Storage's bytes.
#include "core/storage.h"

#include <atomic>
#include <optional>

#include "core/device_guard.h"
#include "core/error.h"

namespace glass {
namespace {

uint64_t next_storage_id() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

// A CUDA allocation lands on the current device: make `device` current for it.
std::optional<DeviceGuard> guard_for(Device device) {
  if (device.is_cpu()) return std::nullopt;
  return std::optional<DeviceGuard>(std::in_place, device);
}

}  // namespace

StorageImpl::StorageImpl(size_t n, Allocator* a, Device dev)
    : data(a->allocate(n)), nbytes(n), device(dev), allocator(a), id(next_storage_id()) {}

StorageImpl::StorageImpl(void* d, size_t n, Device dev, std::function<void(void*)> del)
    : data(d),
      nbytes(n),
      device(dev),
      allocator(nullptr),
      deleter(std::move(del)),
      id(next_storage_id()) {}

StorageImpl::~StorageImpl() {
  if (allocator) {
    if (data != nullptr) allocator->deallocate(data, nbytes);
  } else if (deleter) {
    deleter(data);
  }
}

Storage Storage::allocate(size_t nbytes, Device device) {
  // The allocator first: without a backend, its error is the one that says what to do.
  Allocator* allocator = get_allocator(device.type());
  if (device.is_cpu()) return Storage(std::make_shared<StorageImpl>(nbytes, allocator, device));
  const DeviceGuardImplInterface* impl = get_device_guard_impl(device.type());
  GLASS_CHECK(impl != nullptr, "cannot allocate on ", device, ": the ", device.type(),
              " backend registered an allocator but no device guard (device_guard.h)");
  Device resolved = device.index() < 0 ? impl->getDevice() : device;
  int count = impl->deviceCount();
  if (resolved.index() >= count) {
    std::string type = resolved.is_cuda() ? "CUDA" : detail::str_cat(resolved.type());
    std::string valid = count == 0   ? ""
                        : count == 1 ? detail::str_cat(" (", Device(resolved.type(), 0), ")")
                                     : detail::str_cat(" (", Device(resolved.type(), 0), " to ",
                                                       Device(resolved.type(), count - 1), ")");
    detail::throw_error(detail::str_cat(resolved, " does not exist; this machine has ", count, " ",
                                        type, " device", count == 1 ? "" : "s", valid));
  }
  DeviceGuard guard(resolved);  // a CUDA allocation lands on the current device
  return Storage(std::make_shared<StorageImpl>(nbytes, allocator, resolved));
}

void Storage::drop_bytes() const {
  GLASS_CHECK(impl_->allocator != nullptr, "drop_bytes(): this storage (", impl_->nbytes,
              " bytes on ", impl_->device,
              ") wraps memory lent by from_blob, which only its owner can free");
  if (impl_->data == nullptr) return;
  const auto guard = guard_for(impl_->device);
  impl_->allocator->deallocate(impl_->data, impl_->nbytes);
  impl_->data = nullptr;
}

void Storage::restore_bytes() const {
  if (has_bytes()) return;
  const auto guard = guard_for(impl_->device);
  impl_->data = impl_->allocator->allocate(impl_->nbytes);  // on failure nothing changed
}

}  // namespace glass
