// core/storage.cpp — acquiring and releasing a Storage's bytes.
#include "core/storage.h"

#include "core/error.h"

namespace glass {

StorageImpl::StorageImpl(size_t n, Allocator* a)
    : data(a->allocate(n)), nbytes(n), device(a->device()), allocator(a) {}

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
  return Storage(std::make_shared<StorageImpl>(nbytes, get_allocator(device.type())));
}

}  // namespace glass
