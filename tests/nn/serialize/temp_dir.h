// tests/nn/serialize/temp_dir.h — a per-test scratch directory and the byte-level file
// helpers the serialize tests share: read a file whole, write one, and assemble a
// safetensors file from its header JSON and data.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace glass::testing {

// A fresh, empty directory for one test, removed with its contents afterwards:
// <TempDir>/glass_<prefix>_<test name>_<pid>.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& prefix) {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("glass_" + prefix + "_" + test->name() + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // The names of the entries in the directory, sorted.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(dir_)) {
      out.push_back(e.path().filename().string());
    }
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  std::filesystem::path dir_;
};

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Unlinks first: rewriting a file in place through truncation makes ext4 flush it to disk
// on close (its auto_da_alloc heuristic), which would make thousands of rewrites slow.
inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::filesystem::remove(path);
  std::ofstream(path, std::ios::binary) << bytes;
}

// A safetensors file from its parts: the header length as 8 little-endian bytes (built
// with shifts, whatever this machine's byte order), the JSON, the data.
inline std::string file_bytes(const std::string& json, const std::string& data) {
  std::string out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((json.size() >> (8 * i)) & 0xff));
  return out + json + data;
}

}  // namespace glass::testing
