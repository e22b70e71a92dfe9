// nn/serialize/file_io.cpp — the system calls behind ReadOnlyFile and AtomicFileWriter.
//
// Every call's result is checked and its errno goes into the message, because "No space
// left on device" tells the user what to do and "write failed" does not. Reads and writes
// loop: POSIX may move fewer bytes than asked (signals, Linux's ~2 GiB cap per call).
// Removing a dead writer's temporary file asks three questions of its name and inode
// (file_io.h): this host? no such process? untouched for kStaleTempAge? A file that fails
// any of them stays: a stray file costs disk space, a wrongly removed one a live save.
#include "nn/serialize/file_io.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "core/error.h"

namespace glass::serialize {

namespace {

// Below Linux's per-call limit of 0x7ffff000 bytes.
constexpr uint64_t kMaxChunk = uint64_t{1} << 30;

// strerror() may share a static buffer between threads; std::error_code does not.
std::string error_text(int err) { return std::error_code(err, std::generic_category()).message(); }

// The process's umask, without changing it. umask() can only be read by setting it, which
// races with any other thread creating a file, so read it from /proc (Linux >= 4.7) and
// fall back to the common 022.
mode_t process_umask() {
  mode_t mask = 022;
  if (std::FILE* status = std::fopen("/proc/self/status", "re")) {
    char line[256];
    while (std::fgets(line, sizeof line, status)) {
      if (std::string_view(line).starts_with("Umask:")) {
        mask = static_cast<mode_t>(std::strtoul(line + 6, nullptr, 8));
        break;
      }
    }
    std::fclose(status);
  }
  return mask;
}

// ASCII letters and digits, whatever the locale says.
bool is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// This host's name as temporary names carry it: letters, digits and '-' kept, anything
// else (a domain name's dots above all) as '_', so that '.' only separates the name's
// fields; at most 64 characters.
std::string host_tag() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "unknown-host";
  std::string tag;
  for (const char* c = name; *c != '\0' && tag.size() < 64; ++c)
    tag += is_alnum(*c) || *c == '-' ? *c : '_';
  return tag;
}

// The writer's pid when `name` is "<prefix><pid>.XXXXXX" (mkstemp's six letters and
// digits), else nothing: another target's file, an older pattern, anything else.
std::optional<pid_t> writer_pid(std::string_view name, std::string_view prefix) {
  if (!name.starts_with(prefix)) return std::nullopt;
  name.remove_prefix(prefix.size());
  const size_t dot = name.find('.');
  if (dot == std::string_view::npos || name.size() - dot - 1 != 6) return std::nullopt;
  for (const char c : name.substr(dot + 1))
    if (!is_alnum(c)) return std::nullopt;
  long long pid = 0;
  const auto [end, ec] = std::from_chars(name.data(), name.data() + dot, pid);
  if (ec != std::errc() || end != name.data() + dot || pid <= 0 || pid > INT_MAX)
    return std::nullopt;
  return static_cast<pid_t>(pid);
}

// kill(pid, 0) sends nothing; ESRCH means no such process. EPERM means one exists that we
// may not signal: alive.
bool process_exists(pid_t pid) { return ::kill(pid, 0) == 0 || errno != ESRCH; }

}  // namespace

std::vector<std::string> remove_stale_temp_files(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const std::string prefix = target.filename().string() + ".tmp." + host_tag() + ".";
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const auto now = std::chrono::system_clock::now();
  std::vector<std::string> removed;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::optional<pid_t> pid = writer_pid(it->path().filename().string(), prefix);
    if (!pid || process_exists(*pid)) continue;
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (now - std::chrono::system_clock::from_time_t(st.st_mtime) < kStaleTempAge) continue;
    if (::unlink(it->path().c_str()) == 0) removed.push_back(it->path().string());
  }
  return removed;
}

// ---- ReadOnlyFile -----------------------------------------------------------------------

ReadOnlyFile::ReadOnlyFile(const std::string& path, std::string context)
    : context_(std::move(context)) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever. For
  // the regular files we accept it changes nothing.
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd_ < 0) {
    const int err = errno;
    detail::throw_error(detail::str_cat(context_, ": cannot open the file: ", error_text(err)));
  }
  struct stat st {};
  const bool stat_ok = ::fstat(fd_, &st) == 0;
  const int err = errno;
  if (!stat_ok || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    GLASS_CHECK(stat_ok, context_, ": cannot stat the file: ", error_text(err));
    detail::throw_error(detail::str_cat(context_, ": not a regular file",
                                        S_ISDIR(st.st_mode) ? " (it is a directory)" : "",
                                        "; give the path of a .safetensors file"));
  }
  size_ = static_cast<uint64_t>(st.st_size);
}

ReadOnlyFile::~ReadOnlyFile() {
  if (fd_ >= 0) ::close(fd_);
}

void ReadOnlyFile::read_exact(uint64_t offset, void* dst, uint64_t n,
                              const std::string& what) const {
  GLASS_CHECK(offset <= size_ && n <= size_ - offset, context_, ": ", what, " would occupy bytes [",
              offset, ", ", offset + n, ") of a ", size_, "-byte file");
  auto* out = static_cast<char*>(dst);
  while (n > 0) {
    const ssize_t got = ::pread(fd_, out, std::min(n, kMaxChunk), static_cast<off_t>(offset));
    const int err = errno;
    if (got < 0 && err == EINTR) continue;
    GLASS_CHECK(got >= 0, context_, ": reading ", what, " at file offset ", offset,
                " failed: ", error_text(err));
    GLASS_CHECK(got > 0, context_, ": the file ended at byte ", offset, " while reading ", what,
                ", though it had ", size_, " bytes when opened; was it truncated while loading?");
    out += got;
    offset += static_cast<uint64_t>(got);
    n -= static_cast<uint64_t>(got);
  }
}

// ---- AtomicFileWriter -------------------------------------------------------------------

AtomicFileWriter::AtomicFileWriter(std::string path, std::string context)
    : path_(std::move(path)), context_(std::move(context)) {
  remove_stale_temp_files(path_);  // first: a full disk may need the space they hold
  std::string pattern = path_ + ".tmp." + host_tag() + "." + std::to_string(::getpid()) + ".XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  fd_ = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd_ < 0) {
    const int err = errno;
    detail::throw_error(detail::str_cat(context_, ": cannot create the temporary file ", pattern,
                                        ": ", error_text(err),
                                        " (does the directory exist and is it writable?)"));
  }
  temp_path_ = name.data();
  // mkstemp creates the file 0600; a checkpoint gets the mode any new file would get.
  if (::fchmod(fd_, 0666 & ~process_umask()) != 0) fail("setting its permissions", errno);
}

AtomicFileWriter::~AtomicFileWriter() { discard(); }

void AtomicFileWriter::discard() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!committed_ && !temp_path_.empty()) ::unlink(temp_path_.c_str());
}

void AtomicFileWriter::fail(const std::string& doing, int err) {
  discard();
  detail::throw_error(detail::str_cat(context_, ": ", doing, " failed: ", error_text(err), ". ",
                                      path_, " is unchanged and the temporary file ", temp_path_,
                                      " was removed."));
}

void AtomicFileWriter::write(const void* data, size_t n) {
  GLASS_INTERNAL_ASSERT(fd_ >= 0 && !committed_, "write() after commit() or a failure");
  const auto* in = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t put = ::write(fd_, in, std::min<uint64_t>(n, kMaxChunk));
    const int err = errno;
    if (put < 0 && err == EINTR) continue;
    if (put < 0) fail("writing " + temp_path_, err);
    // write() returning 0 for a non-empty buffer is how some devices say "full".
    if (put == 0) fail("writing " + temp_path_, ENOSPC);
    in += put;
    n -= static_cast<size_t>(put);
  }
}

void AtomicFileWriter::commit() {
  GLASS_INTERNAL_ASSERT(fd_ >= 0 && !committed_, "commit() twice or after a failure");
  if (::fsync(fd_) != 0) fail("flushing " + temp_path_ + " to disk (fsync)", errno);
  // close() is where some filesystems (NFS) finally report a failed write.
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) fail("closing " + temp_path_, errno);
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    fail("renaming " + temp_path_ + " to " + path_, errno);
  }
  committed_ = true;

  // The rename is durable only once the directory's entry is on disk too. The new file is
  // already in place here, so a failure says exactly that instead of claiming nothing
  // happened. EINVAL: the filesystem cannot sync directories, and needs not.
  std::string dir = std::filesystem::path(path_).parent_path().string();
  if (dir.empty()) dir = ".";
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return;  // a directory we may write but not read: nothing more we can do
  const bool synced = ::fsync(dir_fd) == 0;
  const int err = errno;
  ::close(dir_fd);
  GLASS_CHECK(synced || err == EINVAL, context_, ": ", path_,
              " was written and renamed into place, but syncing its directory failed (",
              error_text(err), "), so the new file may not survive a power cut.");
}

}  // namespace glass::serialize
