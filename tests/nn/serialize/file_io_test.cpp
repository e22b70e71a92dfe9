// tests/nn/serialize/file_io_test.cpp — AtomicFileWriter and ReadOnlyFile.
//
// What atomicity promises, checked step by step: until commit() the target holds its old
// bytes (a crash at any point before the rename leaves it intact); an abandoned or failed
// write removes its temporary file; a real write error (the file-size limit standing in
// for a full disk — permission tricks do not work for root) is reported and cleaned up;
// the temporary file of a writer killed mid-save is removed by the next save, and only
// that one: never a live writer's, a recent one's, another host's or another target's.
#include "nn/serialize/file_io.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
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

// A save interrupted halfway, in a child process: it opens an AtomicFileWriter on `path`,
// writes part of a file, sends its temporary file's name through a pipe and waits to be
// killed (the child touches nothing of glass but the writer, so forking is safe).
class ChildWriter {
 public:
  explicit ChildWriter(const std::string& path) {
    int fds[2];
    if (::pipe(fds) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::close(fds[0]);
      try {
        AtomicFileWriter out(path, "save(child)");
        out.write("half a checkpoint", 17);
        const std::string& t = out.temp_path();
        if (::write(fds[1], t.data(), t.size()) != static_cast<ssize_t>(t.size())) ::_exit(1);
        ::close(fds[1]);
        for (;;) ::pause();  // mid-save until SIGKILL
      } catch (...) {
        ::_exit(1);
      }
    }
    ::close(fds[1]);
    char buffer[4096];
    for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;)
      temp_.append(buffer, static_cast<size_t>(n));
    ::close(fds[0]);
  }
  ~ChildWriter() { kill(); }
  ChildWriter(const ChildWriter&) = delete;
  ChildWriter& operator=(const ChildWriter&) = delete;

  // kill -9, then reap it: from here on no process has its pid (until one is reused).
  void kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  pid_t pid() const { return pid_; }
  const std::string& temp() const { return temp_; }

 private:
  pid_t pid_ = -1;
  std::string temp_;
};

// Sets a file's modification time to `age` ago.
void make_old(const std::string& path, std::chrono::seconds age) {
  timespec times[2];
  ::clock_gettime(CLOCK_REALTIME, &times[0]);
  times[0].tv_sec -= static_cast<time_t>(age.count());
  times[1] = times[0];
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

TEST(AtomicFileWriter, TheNextSaveRemovesWhatAKilledWriterLeftAndNothingElse) {
  ScratchDir dir("file_io");
  const std::string path = dir.path("model.safetensors");
  save({{"w", ones({4})}}, path);
  const auto old = std::chrono::duration_cast<std::chrono::seconds>(serialize::kStaleTempAge) +
                   std::chrono::seconds(60);

  ChildWriter killed(path), live(path);
  ASSERT_GT(killed.pid(), 0);
  ASSERT_FALSE(killed.temp().empty());
  ASSERT_FALSE(live.temp().empty());
  // "<path>.tmp.<host>.<pid>.XXXXXX": the name says which host and process wrote it.
  const std::string pid = std::to_string(killed.pid());
  const std::string suffix = "." + pid + "." + killed.temp().substr(killed.temp().size() - 6);
  ASSERT_TRUE(killed.temp().ends_with(suffix)) << killed.temp();
  const std::string host_prefix = killed.temp().substr(0, killed.temp().size() - suffix.size());
  ASSERT_TRUE(host_prefix.starts_with(path + ".tmp.")) << killed.temp();
  const std::string host = host_prefix.substr(path.size() + 5);
  EXPECT_EQ(host.find('.'), std::string::npos) << host;

  killed.kill();
  ASSERT_NE(::kill(std::stoi(pid), 0), 0) << "pid " << pid << " was reused already";
  EXPECT_EQ(read_bytes(killed.temp()), "half a checkpoint");  // nothing removed it
  make_old(killed.temp(), old);
  make_old(live.temp(), old);  // stalled for as long, but its process is alive
  // Names that look alike and must stay: the dead writer's pid but written just now;
  // another host's; another target's; the old pattern; not mkstemp's six characters.
  const std::vector<std::string> keep = {
      host_prefix + "." + pid + ".Recent",
      path + ".tmp.elsewhere." + pid + ".Abc123",
      dir.path("other.safetensors") + ".tmp." + host + "." + pid + ".Abc123",
      path + ".tmp.Abc123",
      host_prefix + "." + pid + ".Abc1234",
  };
  for (const std::string& f : keep) {
    write_bytes(f, "not mine to remove");
    if (f != keep[0]) make_old(f, old);
  }

  save({{"w", ones({8})}}, path);
  EXPECT_FALSE(std::filesystem::exists(killed.temp()));
  EXPECT_TRUE(std::filesystem::exists(live.temp()));
  for (const std::string& f : keep) EXPECT_TRUE(std::filesystem::exists(f)) << f;
  EXPECT_EQ(dir.names().size(), 1 + 1 + keep.size());  // the checkpoint, live's, the look-alikes
  EXPECT_EQ(load(path).front().second.numel(), 8);

  // Once the live writer is killed too, the next save removes its file as well.
  live.kill();
  EXPECT_EQ(serialize::remove_stale_temp_files(path), std::vector<std::string>{live.temp()});
  EXPECT_EQ(dir.names().size(), 1 + keep.size());
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
