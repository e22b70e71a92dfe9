// core/storage.cpp — acquiring and releasing a Storage's bytes.
#include "core/storage.h"

#include "core/device_guard.h"
#include "core/error.h"

namespace glass {

StorageImpl::StorageImpl(size_t n, Allocator* a, Device dev)
    : data(a->allocate(n)), nbytes(n), device(dev), allocator(a) {}

StorageImpl::StorageImpl(void* d, size_t n, Device dev, std::function<void(void*)> del)
    : data(d), nbytes(n), device(dev), allocator(nullptr), deleter(std::move(del)) {}

StorageImpl::~StorageImpl() {
  if (allocator) {
    allocator->deallocate(data, nbytes);
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

}  // namespace glass
