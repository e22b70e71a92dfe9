// tests/cuda/sim/memory_test.cpp — the simulated GPU's device memory (arena.h) and
// properties.
//
// Device addresses fault on the host (as on a GPU) while host_view reaches the same bytes;
// malloc is 2 MiB-granular, returns null when the device is full, and gets merged ranges
// back after frees; a bad free names the pointer; freed pages leave resident memory.
// Device 1 is used where a test needs a whole device to itself (nothing else allocates
// there).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "cuda/sim/address_space.h"
#include "sim_test_util.h"

namespace glass::cuda::sim {
namespace {

using testing::DeviceBuffer;
using testing::error_of;
using testing::sim;

constexpr size_t kMiB = size_t{1} << 20;

TEST(SimMemory, PropertiesDescribeASimulatedDevice) {
  ASSERT_GE(sim().device_count(), 2) << "the tests expect GLASS_SIM_DEVICES >= 2 (the default)";
  for (int d = 0; d < sim().device_count(); ++d) {
    const DeviceProperties& p = sim().properties(d);
    EXPECT_NE(p.name.find("simulated"), std::string::npos) << p.name;
    EXPECT_NE(p.name.find(" " + std::to_string(d) + " "), std::string::npos) << p.name;
    EXPECT_EQ(p.total_memory, static_cast<int64_t>(sim().config().memory_bytes));
    EXPECT_EQ(p.multi_processor_count, sim().config().sms);
    EXPECT_EQ(p.major, 9);
    EXPECT_EQ(p.minor, 0);
    EXPECT_EQ(p.max_threads_per_block, 1024);
    EXPECT_EQ(p.shared_mem_per_block, 48u * 1024);
    EXPECT_EQ(p.warp_size, 32);
  }
  EXPECT_TRUE(sim().is_simulated());
  EXPECT_NE(error_of([] { sim().properties(sim().device_count()); }).find("does not exist"),
            std::string::npos);
}

// A module image (CUBIN, PTX) is a GPU's: the simulator runs host-compiled kernels and says so,
// rather than pretending to load one.
TEST(SimMemory, ModuleImagesAreRefusedWithTheReason) {
  for (const std::string& msg : {error_of([] {
                                   sim().module_load(0, std::string("\x7f"
                                                                    "ELF",
                                                                    4));
                                 }),
                                 error_of([] { sim().module_kernel(nullptr, "k"); }), error_of([] {
                                   sim().module_launch(nullptr, "k", Dim3(1), Dim3(1), 0, nullptr,
                                                       nullptr);
                                 })}) {
    EXPECT_NE(msg.find("runs on a GPU only"), std::string::npos) << msg;
    EXPECT_NE(msg.find("host compiler"), std::string::npos) << msg;
  }
}

TEST(SimMemory, DeviceAddressesAreTwoMiBAlignedAndKnowTheirDevice) {
  DeviceBuffer a(100, 0), b(3 * kMiB, 1);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.get()) % (2 * kMiB), 0u);
  EXPECT_EQ(sim().device_of(a.get()), 0);
  EXPECT_EQ(sim().device_of(b.get<char>() + 3 * kMiB - 1), 1);
  EXPECT_TRUE(is_device_address(a.get()));
  int on_stack = 0;
  std::vector<float> on_heap(4);
  EXPECT_EQ(sim().device_of(&on_stack), -1);
  EXPECT_EQ(sim().device_of(on_heap.data()), -1);
  EXPECT_FALSE(is_device_address(&on_stack));
  // host_view is the same bytes at a fixed distance.
  EXPECT_EQ(reinterpret_cast<uintptr_t>(host_view(a.get<char>())) -
                reinterpret_cast<uintptr_t>(a.get<char>()),
            static_cast<uintptr_t>(g_host_offset));
  host_view(a.get<int>())[3] = 42;
  EXPECT_EQ(host_view(a.get<int>())[3], 42);
}

TEST(SimMemoryDeathTest, HostDereferenceOfADevicePointerFaults) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        void* p = sim().malloc(0, 4096);
        volatile int* device_int = static_cast<int*>(p);
        std::fprintf(stderr, "read %d\n", *device_int);  // a GPU pointer read on the host
      },
      "");
}

TEST(SimMemory, BytesInUseFollowMallocAndFree) {
  const size_t before = sim().bytes_in_use(1);
  void* p = sim().malloc(1, 5 * kMiB);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(sim().bytes_in_use(1), before + 6 * kMiB);
  sim().free(1, p);
  EXPECT_EQ(sim().bytes_in_use(1), before);
  sim().free(1, nullptr);  // as cudaFree(nullptr)
}

TEST(SimMemory, OutOfMemoryIsNullAndFreedRangesMerge) {
  const size_t capacity = sim().config().memory_bytes;
  ASSERT_EQ(sim().bytes_in_use(1), 0u) << "device 1 must be empty for this test";
  EXPECT_EQ(sim().malloc(1, capacity + 1), nullptr);
  // Three pieces, freed middle first: only a merge gives back one range of the whole device.
  void* a = sim().malloc(1, 2 * kMiB);
  void* b = sim().malloc(1, 2 * kMiB);
  void* c = sim().malloc(1, capacity - 4 * kMiB);
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(sim().malloc(1, 1), nullptr);  // full
  sim().free(1, b);
  sim().free(1, a);
  sim().free(1, c);
  void* whole = sim().malloc(1, capacity);
  ASSERT_NE(whole, nullptr);
  EXPECT_EQ(sim().malloc(1, 1), nullptr);
  sim().free(1, whole);
  EXPECT_EQ(sim().bytes_in_use(1), 0u);
}

TEST(SimMemory, BadFreesNameThePointer) {
  void* p = sim().malloc(0, 4096);
  ASSERT_NE(p, nullptr);
  std::ostringstream name;
  name << p;
  std::string msg = error_of([&] { sim().free(1, p); });
  EXPECT_NE(msg.find("memory of cuda:0"), std::string::npos) << msg;
  EXPECT_NE(msg.find(name.str()), std::string::npos) << msg;
  msg = error_of([&] { sim().free(0, static_cast<char*>(p) + 64); });
  EXPECT_NE(msg.find("not returned by malloc"), std::string::npos) << msg;
  int host = 0;
  msg = error_of([&] { sim().free(0, &host); });
  EXPECT_NE(msg.find("not device memory"), std::string::npos) << msg;
  sim().free(0, p);
  msg = error_of([&] { sim().free(0, p); });
  EXPECT_NE(msg.find("freed already"), std::string::npos) << msg;
  EXPECT_NE(error_of([] { sim().malloc(7, 16); }).find("device 7 does not exist"),
            std::string::npos);
}

// Resident set size of this process, in bytes (from /proc/self/statm).
size_t resident_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  unsigned long size = 0, resident = 0;
  EXPECT_EQ(std::fscanf(f, "%lu %lu", &size, &resident), 2);
  std::fclose(f);
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

TEST(SimMemory, FreedPagesLeaveResidentMemoryAndComeBackZeroed) {
  constexpr size_t kBytes = 64 * kMiB;
  void* p = sim().malloc(1, kBytes);
  ASSERT_NE(p, nullptr);
  const size_t before = resident_bytes();
  std::memset(host_view(static_cast<char*>(p)), 0x5a, kBytes);
  const size_t touched = resident_bytes();
  EXPECT_GE(touched, before + kBytes * 3 / 4);
  sim().free(1, p);
  EXPECT_LE(resident_bytes(), touched - kBytes * 3 / 4);
  void* again = sim().malloc(1, kBytes);
  ASSERT_EQ(again, p);  // best fit on an otherwise empty device: the same range
  const char* bytes = host_view(static_cast<const char*>(again));
  EXPECT_EQ(bytes[0], 0);
  EXPECT_EQ(bytes[kBytes - 1], 0);
  sim().free(1, again);
}

}  // namespace
}  // namespace glass::cuda::sim
