// tests/nn/serialize/file_io_test.cpp — AtomicFileWriter and ReadOnlyFile.
//
// What atomicity promises, checked step by step: until commit() the target holds its old
// bytes (a crash at any point before the rename leaves it intact); an abandoned or failed
// write removes its temporary file; a real write error (the file-size limit standing in
// for a full disk — permission tricks do not work for root) is reported and cleaned up.
#include "nn/serialize/file_io.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/test_util.h"
#include "nn/serialize/safetensors.h"
#include "nn/serialize/temp_dir.h"

namespace glass {
namespace {

using namespace std::string_literals;
using serialize::AtomicFileWriter;
using serialize::ReadOnlyFile;
using testing::read_bytes;
using testing::ScratchDir;
using testing::write_bytes;

TEST(AtomicFileWriter, TheTargetKeepsItsOldBytesUntilCommit) {
  ScratchDir dir("file_io");
  const std::string path = dir.path("ckpt");
  write_bytes(path, "old");
  {
    AtomicFileWriter out(path, "save(ckpt)");
    const std::string temp = out.temp_path();
    EXPECT_EQ(temp.rfind(path + ".tmp.", 0), 0u) << temp;  // beside the target
    out.write("new bytes", 9);
    // A crash now would leave exactly this: the old file, and a stray temporary one.
    EXPECT_EQ(read_bytes(path), "old");
    EXPECT_EQ(read_bytes(temp), "new bytes");
    out.commit();
    EXPECT_FALSE(std::filesystem::exists(temp));
  }
  EXPECT_EQ(read_bytes(path), "new bytes");
  EXPECT_EQ(dir.names(), (std::vector<std::string>{"ckpt"}));
}

TEST(AtomicFileWriter, AnUncommittedWriterRemovesItsTempFile) {
  ScratchDir dir("file_io");
  const std::string path = dir.path("ckpt");
  write_bytes(path, "old");
  {
    AtomicFileWriter out(path, "save(ckpt)");
    out.write("half of it", 10);
  }  // destroyed without commit(): an exception unwinding through save()
  EXPECT_EQ(read_bytes(path), "old");
  EXPECT_EQ(dir.names(), (std::vector<std::string>{"ckpt"}));
}

TEST(AtomicFileWriter, NewFilesGetTheUsualPermissions) {
  // mkstemp makes 0600 files; a checkpoint should be 0666 & ~umask like any other file.
  ScratchDir dir("file_io");
  const mode_t old_mask = ::umask(027);
  save({{"w", ones({2})}}, dir.path("m.safetensors"));
  ::umask(old_mask);
  struct stat st {};
  ASSERT_EQ(::stat(dir.path("m.safetensors").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
}

TEST(AtomicFileWriter, ARenameFailureRemovesTheTempFile) {
  // The target is a non-empty directory: everything succeeds up to rename(), which fails.
  ScratchDir dir("file_io");
  const std::string path = dir.path("ckpt");
  std::filesystem::create_directories(path + "/inside");
  EXPECT_GLASS_ERROR(save({{"w", ones({4})}}, path), "save(", "renaming", "ckpt.tmp.",
                     "was removed");
  EXPECT_EQ(dir.names(), (std::vector<std::string>{"ckpt"}));
  EXPECT_TRUE(std::filesystem::is_directory(path + "/inside"));
}

// Lowers the file-size limit for one scope: writes past it fail with EFBIG, as they would
// with ENOSPC on a full disk. SIGXFSZ, which would kill the process, is ignored meanwhile.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &old_);
    old_handler_ = ::signal(SIGXFSZ, SIG_IGN);
    rlimit lower = old_;
    lower.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &lower);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &old_);
    ::signal(SIGXFSZ, old_handler_);
  }

 private:
  rlimit old_{};
  sighandler_t old_handler_{};
};

TEST(AtomicFileWriter, AWriteErrorKeepsTheOldCheckpoint) {
  ScratchDir dir("file_io");
  const std::string path = dir.path("model.safetensors");
  save({{"w", ones({4})}}, path);
  const std::string before = read_bytes(path);
  {
    FileSizeLimit limit(1 << 20);  // 1 MiB, and the new checkpoint needs 4 MiB
    EXPECT_GLASS_ERROR(save({{"w", ones({1 << 20})}}, path), path.c_str(), "writing",
                       "File too large", "is unchanged");
  }
  EXPECT_EQ(read_bytes(path), before);
  EXPECT_EQ(dir.names(), (std::vector<std::string>{"model.safetensors"}));
}

TEST(ReadOnlyFile, ReadsExactRangesAndRefusesOthers) {
  ScratchDir dir("file_io");
  const std::string path = dir.path("bytes");
  write_bytes(path, "0123456789");
  const ReadOnlyFile file(path, "load(bytes)");
  EXPECT_EQ(file.size(), 10u);
  char buffer[4] = {};
  file.read_exact(3, buffer, 4, "a range");
  EXPECT_EQ(std::string(buffer, 4), "3456");
  EXPECT_GLASS_ERROR(file.read_exact(8, buffer, 4, "the tail"), "load(bytes)", "the tail",
                     "bytes [8, 12) of a 10-byte file");
}

TEST(ReadOnlyFile, NoticesAFileThatShrinksWhileOpen) {
  ScratchDir dir("file_io");
  const std::string path = dir.path("bytes");
  write_bytes(path, "0123456789");
  const ReadOnlyFile file(path, "load(bytes)");
  std::filesystem::resize_file(path, 5);  // someone truncates it under us
  char buffer[10];
  EXPECT_GLASS_ERROR(file.read_exact(0, buffer, 10, "everything"),
                     "the file ended at byte 5 while reading everything", "had 10 bytes");
}

}  // namespace
}  // namespace glass
