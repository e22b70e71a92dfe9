// nn/serialize/file_io.h — POSIX files for checkpoints, with every error checked.
//
// Two small RAII classes, one per direction:
//
// ReadOnlyFile fixes the file's size when it opens and reads exact byte ranges; a read that
// comes up short (the file shrank, an I/O error) throws instead of returning partial data.
//
// AtomicFileWriter replaces a file so that a reader, or the next run after a crash, sees
// either the complete old contents or the complete new ones, never a mix. It writes to a
// temporary file beside the target (same directory, hence same filesystem, so rename()
// is atomic), fsyncs it, renames it over the target and fsyncs the directory so that the
// rename itself survives a power cut. Until commit() succeeds the target is untouched;
// if anything fails, or the writer is destroyed uncommitted, the temporary file is
// removed.
//
// A process killed outright cannot remove anything: it leaves its temporary file, named
// "<path>.tmp.<host>.<pid>.XXXXXX", next to the intact old file. The next writer to the
// same path removes such leftovers (remove_stale_temp_files), but only where the writer is
// certainly gone: a file of exactly that pattern, from this host, whose process no longer
// exists, and untouched for kStaleTempAge — a live writer touches its file with every
// write, and the age also covers a pid that another pid namespace (a container sharing
// the directory and the host name) would see differently.
//
// Every message starts with the caller's `context`, e.g. "save(model.safetensors)".
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace glass::serialize {

class ReadOnlyFile {
 public:
  // Opens a regular file (a directory, FIFO or device is refused, so nothing blocks).
  ReadOnlyFile(const std::string& path, std::string context);
  ~ReadOnlyFile();
  ReadOnlyFile(const ReadOnlyFile&) = delete;
  ReadOnlyFile& operator=(const ReadOnlyFile&) = delete;

  uint64_t size() const { return size_; }
  // Reads bytes [offset, offset + n) into dst; `what` names them in errors ("tensor 'w'").
  void read_exact(uint64_t offset, void* dst, uint64_t n, const std::string& what) const;

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
  std::string context_;
};

// How long a dead writer's temporary file must have been left untouched before it is
// removed. Generous: a slow disk's final fsync can hold a live file still for minutes.
inline constexpr std::chrono::minutes kStaleTempAge{15};

// Removes the temporary files that writers to `path` on this host left when they died (see
// above); never another target's, another host's, a live process's, or a recent one.
// Best effort: what cannot be removed stays. Returns the paths it removed.
std::vector<std::string> remove_stale_temp_files(const std::string& path);

class AtomicFileWriter {
 public:
  // Removes stale temporary files of `path` (remove_stale_temp_files), then creates
  // "<path>.tmp.<host>.<pid>.XXXXXX" in the target's directory.
  AtomicFileWriter(std::string path, std::string context);
  // Uncommitted: closes and removes the temporary file; the target is as it was.
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  // Appends all n bytes (short writes are retried; ENOSPC, EIO, ... throw).
  void write(const void* data, size_t n);
  // fsync, close, rename over the target, fsync the directory. Call once, last.
  void commit();

  const std::string& temp_path() const { return temp_path_; }

 private:
  // Removes the temporary file and throws "<context>: <doing> failed: <strerror(err)>".
  [[noreturn]] void fail(const std::string& doing, int err);
  void discard() noexcept;

  std::string path_;
  std::string temp_path_;
  std::string context_;
  int fd_ = -1;
  bool committed_ = false;
};

}  // namespace glass::serialize
