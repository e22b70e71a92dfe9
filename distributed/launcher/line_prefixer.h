// distributed/launcher/line_prefixer.h — "[rank R] " in front of every line a rank prints.
//
// Bytes arrive from a rank's pipe in arbitrary pieces; a line is written only once it is
// complete, in one write() together with its prefix, so lines of different ranks never
// interleave mid-line. Invariant: every byte fed is written exactly once — a partial last
// line is written (with a newline added) by finish(), and a line longer than kMaxLine is
// written in pieces, each with the prefix, so memory stays bounded.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

namespace glass::distributed::launcher {

class LinePrefixer {
 public:
  static constexpr size_t kMaxLine = 64 * 1024;

  LinePrefixer(std::string prefix, int out_fd) : prefix_(std::move(prefix)), out_fd_(out_fd) {}

  void feed(const char* data, size_t size);
  void finish();  // the stream ended: write what is left as a last line

 private:
  void write_line(const char* data, size_t size);  // data excludes the '\n'

  std::string prefix_;
  int out_fd_;
  std::string partial_;
};

}  // namespace glass::distributed::launcher
