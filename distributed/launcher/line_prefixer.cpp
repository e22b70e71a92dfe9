// distributed/launcher/line_prefixer.cpp — see line_prefixer.h.
#include "distributed/launcher/line_prefixer.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace glass::distributed::launcher {

void LinePrefixer::feed(const char* data, size_t size) {
  const char* end = data + size;
  while (data < end) {
    const char* newline = static_cast<const char*>(memchr(data, '\n', end - data));
    if (newline == nullptr) {
      partial_.append(data, end);
      if (partial_.size() >= kMaxLine) {
        write_line(partial_.data(), partial_.size());
        partial_.clear();
      }
      return;
    }
    if (partial_.empty()) {
      write_line(data, newline - data);
    } else {
      partial_.append(data, newline);
      write_line(partial_.data(), partial_.size());
      partial_.clear();
    }
    data = newline + 1;
  }
}

void LinePrefixer::finish() {
  if (partial_.empty()) return;
  write_line(partial_.data(), partial_.size());
  partial_.clear();
}

void LinePrefixer::write_line(const char* data, size_t size) {
  std::string line;
  line.reserve(prefix_.size() + size + 1);
  line.append(prefix_).append(data, size).push_back('\n');
  // A pipe reader that went away (glassrun | head) is not the ranks' failure: drop output.
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(out_fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

}  // namespace glass::distributed::launcher
