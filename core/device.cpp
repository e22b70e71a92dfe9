// core/device.cpp — parsing and printing devices.
#include "core/device.h"

#include "core/error.h"

namespace glass {

Device::Device(DeviceType type, int index) : type_(type), index_(index) {
  GLASS_CHECK(index >= -1, "Device: index must be -1 (the current device) or >= 0, got ", index);
  GLASS_CHECK(!(type == kCPU && index > 0), "Device: CPU has only device index 0, got ", index);
  if (type == kCPU) index_ = -1;
}

Device::Device(const std::string& spec) : type_(kCPU), index_(-1) {
  std::string name = spec, idx;
  if (auto colon = spec.find(':'); colon != std::string::npos) {
    name = spec.substr(0, colon);
    idx = spec.substr(colon + 1);
  }
  if (name == "cpu") {
    type_ = kCPU;
  } else if (name == "cuda") {
    type_ = kCUDA;
  } else {
    detail::throw_error(
        detail::str_cat("Device: expected \"cpu\", \"cuda\" or \"cuda:N\", got \"", spec, "\""));
  }
  if (!idx.empty()) {
    bool digits = idx.find_first_not_of("0123456789") == std::string::npos;
    GLASS_CHECK(digits && idx.size() < 6, "Device: invalid device index in \"", spec, "\"");
    *this = Device(type_, std::stoi(idx));
  }
}

std::string Device::str() const {
  std::string s = type_ == kCPU ? "cpu" : "cuda";
  if (index_ >= 0) {
    s += ':';
    s += std::to_string(index_);
  }
  return s;
}

std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }
std::ostream& operator<<(std::ostream& os, DeviceType t) {
  return os << (t == kCPU ? "cpu" : "cuda");
}

}  // namespace glass
