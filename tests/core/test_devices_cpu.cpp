// tests/core/test_devices_cpu.cpp — the CPU binaries' devices for the parameterised
// suites (device_test.h): just the CPU. Linked into core_tests and autograd_tests.
#include "device_test.h"

namespace glass::testing {

std::vector<Device> test_devices() { return {Device(kCPU)}; }

}  // namespace glass::testing
