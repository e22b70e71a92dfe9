// core/device.h — where a tensor's bytes live: a device type and an index.
//
// Device(kCPU) has index -1 (there is one CPU); Device(kCUDA, i) names GPU i. Every op
// checks that its tensor operands share a device before touching data.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

namespace glass {

enum class DeviceType : int8_t { CPU = 0, CUDA = 1 };
inline constexpr DeviceType kCPU = DeviceType::CPU;
inline constexpr DeviceType kCUDA = DeviceType::CUDA;
inline constexpr int kNumDeviceTypes = 2;

class Device {
 public:
  Device(DeviceType type, int index = -1);  // NOLINT: implicit, as in libtorch
  // Parses "cpu", "cuda", "cuda:1".
  explicit Device(const std::string& spec);

  DeviceType type() const { return type_; }
  int index() const { return index_; }
  bool is_cpu() const { return type_ == kCPU; }
  bool is_cuda() const { return type_ == kCUDA; }
  std::string str() const;

  bool operator==(const Device& o) const { return type_ == o.type_ && index_ == o.index_; }
  bool operator!=(const Device& o) const { return !(*this == o); }

 private:
  DeviceType type_;
  int index_;
};

std::ostream& operator<<(std::ostream& os, const Device& d);
std::ostream& operator<<(std::ostream& os, DeviceType t);

}  // namespace glass
