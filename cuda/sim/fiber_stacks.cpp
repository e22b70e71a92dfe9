// cuda/sim/fiber_stacks.cpp — one pool of fiber stacks per OS thread (see the header).
#include "cuda/sim/fiber_stacks.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <vector>

#include "core/error.h"

namespace glass::cuda::sim {
namespace {

std::atomic<uint64_t> g_mapped{0};

size_t page_bytes() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}
size_t mapping_bytes() { return kFiberStackBytes + page_bytes(); }

class StackPool {
 public:
  StackPool() = default;
  StackPool(const StackPool&) = delete;
  StackPool& operator=(const StackPool&) = delete;
  ~StackPool() {
    for (void* base : free_) munmap(base, mapping_bytes());
  }

  void* take() {
    if (!free_.empty()) {
      void* base = free_.back();
      free_.pop_back();
      return base;
    }
    void* base =
        mmap(nullptr, mapping_bytes(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    GLASS_CHECK(base != MAP_FAILED, "simulated GPU: cannot map a ", kFiberStackBytes / 1024,
                " KiB stack for a simulated thread (", std::strerror(errno),
                "); the machine is out of memory or of memory mappings (vm.max_map_count)");
    mprotect(base, page_bytes(), PROT_NONE);  // the guard page: stacks grow down into it
    free_.reserve(++owned_);                  // so that give_back() never allocates
    g_mapped.fetch_add(1, std::memory_order_relaxed);
    return base;
  }

  void give_back(void* base) noexcept { free_.push_back(base); }

 private:
  std::vector<void*> free_;
  size_t owned_ = 0;  // stacks mapped by this thread: free_ never holds more
};

thread_local StackPool t_pool;

}  // namespace

boost::context::stack_context PooledFiberStack::allocate() {
  boost::context::stack_context sc;
  sc.size = kFiberStackBytes;
  sc.sp = static_cast<char*>(t_pool.take()) + mapping_bytes();  // the top: stacks grow down
  return sc;
}

void PooledFiberStack::deallocate(boost::context::stack_context& sc) noexcept {
  t_pool.give_back(static_cast<char*>(sc.sp) - mapping_bytes());
}

uint64_t fiber_stacks_mapped() { return g_mapped.load(std::memory_order_relaxed); }

}  // namespace glass::cuda::sim
