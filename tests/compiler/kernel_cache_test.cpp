// tests/compiler/kernel_cache_test.cpp — the kernel cache: a source is compiled once, then
// loaded from disk (in a later process too: the tests forget what this one loaded), a
// corrupted or foreign entry is rebuilt rather than loaded, and a source that does not
// compile is an error quoting the compiler and the numbered source.
#include "compiler/kernel_cache.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace glass::compiler {
namespace {

namespace fs = std::filesystem;

// Each test gets an empty cache folder of its own under the build folder.
class KernelCache : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!host_compiler().available()) GTEST_SKIP() << "no C++ compiler on this machine";
    std::string pattern = std::string(GLASS_TEST_CACHE_DIR) + "-cache-test-XXXXXX";
    fs::create_directories(fs::path(pattern).parent_path());
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    ::setenv("GLASS_CACHE_DIR", dir_.c_str(), 1);
    forget_loaded_kernels();
    reset_cache_stats();
  }
  void TearDown() override {
    forget_loaded_kernels();
    if (!dir_.empty()) fs::remove_all(dir_);
    ::unsetenv("GLASS_CACHE_DIR");
  }
  std::string dir_;
};

std::string answer_source(int value) {
  return "extern \"C\" int answer() { return " + std::to_string(value) + "; }\n";
}

int call_answer(const KernelLibrary& lib) { return lib.function<int()>("answer")(); }

TEST_F(KernelCache, CompilesOnceThenLoadsFromDiskThenFromThisProcess) {
  {
    auto lib = load_or_compile(answer_source(42));
    EXPECT_EQ(call_answer(*lib), 42);
    EXPECT_EQ(lib->path(), cache_dir() + "/kernels/" + lib->key() + ".so");
    EXPECT_EQ(lib->key().size(), 32u);
    EXPECT_EQ(cache_stats().compiled, 1);
    auto again = load_or_compile(answer_source(42));  // held: the same library
    EXPECT_EQ(again.get(), lib.get());
    EXPECT_EQ(cache_stats().in_process, 1);
  }
  forget_loaded_kernels();  // as a new process would start
  auto from_disk = load_or_compile(answer_source(42));
  EXPECT_EQ(call_answer(*from_disk), 42);
  const CacheStats s = cache_stats();
  EXPECT_EQ(s.compiled, 1);
  EXPECT_EQ(s.from_disk, 1);
  EXPECT_EQ(s.rejected, 0);
  // A different source is a different entry.
  auto other = load_or_compile(answer_source(7));
  EXPECT_EQ(call_answer(*other), 7);
  EXPECT_NE(other->key(), from_disk->key());
  EXPECT_EQ(cache_stats().compiled, 2);
}

TEST_F(KernelCache, ACorruptedLibraryIsRebuiltNotLoaded) {
  std::string path;
  {
    auto lib = load_or_compile(answer_source(5));
    path = lib->path();
  }
  forget_loaded_kernels();
  {
    // Flip bytes in the middle of the shared object, keeping its size.
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(path) / 2));
    f.write("\xde\xad\xbe\xef", 4);
  }
  auto rebuilt = load_or_compile(answer_source(5));
  EXPECT_EQ(call_answer(*rebuilt), 5);
  EXPECT_EQ(cache_stats().rejected, 1);
  EXPECT_EQ(cache_stats().compiled, 2);
}

TEST_F(KernelCache, AnEntryMissingAPartOrHoldingAnotherSourceIsRebuilt) {
  std::string base;
  {
    auto lib = load_or_compile(answer_source(9));
    base = cache_dir() + "/kernels/" + lib->key();
  }
  forget_loaded_kernels();
  fs::remove(base + ".sum");  // an interrupted writer would leave this
  EXPECT_EQ(call_answer(*load_or_compile(answer_source(9))), 9);
  EXPECT_EQ(cache_stats().rejected, 1);
  forget_loaded_kernels();
  std::ofstream(base + ".cpp") << answer_source(10);  // as if two sources shared the key
  EXPECT_EQ(call_answer(*load_or_compile(answer_source(9))), 9);
  EXPECT_EQ(cache_stats().rejected, 2);
  EXPECT_EQ(cache_stats().compiled, 3);
}

// Another compiler's output (a CUBIN, in compiler/nvrtc.h): the same entry, source and
// checksum beside the bytes, the same verification.
TEST_F(KernelCache, OtherCompilersBytesAreCachedAndVerifiedTheSameWay) {
  int builds = 0;
  const auto build = [&](const std::string& bytes) {
    return [&builds, bytes] {
      ++builds;
      return bytes;
    };
  };
  EXPECT_EQ(load_or_build("src", "v1", "blob", build("made from src")), "made from src");
  EXPECT_EQ(load_or_build("src", "v1", "blob", build("not asked for")), "made from src");
  EXPECT_EQ(builds, 1);
  EXPECT_EQ(cache_stats().from_disk, 1);
  // The key material and the extension are part of the key.
  EXPECT_EQ(load_or_build("src", "v2", "blob", build("made by v2")), "made by v2");
  EXPECT_EQ(load_or_build("src", "v1", "other", build("another kind")), "another kind");
  EXPECT_EQ(builds, 3);
  // A corrupted entry is rebuilt, not returned.
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(cache_dir() + "/kernels"))
    if (e.path().extension() == ".blob") entries.push_back(e.path());
  ASSERT_EQ(entries.size(), 2u);
  for (const fs::path& e : entries) std::ofstream(e) << "made from sra";
  EXPECT_EQ(load_or_build("src", "v1", "blob", build("made from src")), "made from src");
  EXPECT_EQ(cache_stats().rejected, 1);
  EXPECT_EQ(builds, 4);
  // A build that fails leaves no entry behind.
  EXPECT_THROW(
      load_or_build("bad", "v1", "blob", []() -> std::string { throw std::runtime_error("no"); }),
      std::runtime_error);
  EXPECT_EQ(load_or_build("bad", "v1", "blob", build("fixed")), "fixed");
}

TEST_F(KernelCache, ASourceThatDoesNotCompileShowsTheCompilerAndTheNumberedSource) {
  const std::string bad = "extern \"C\" int answer() {\n  return undeclared_name;\n}\n";
  try {
    load_or_compile(bad);
    FAIL() << "no error";
  } catch (const std::exception& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("the generated kernel did not compile"), std::string::npos) << what;
    EXPECT_NE(what.find("undeclared_name"), std::string::npos) << what;  // the compiler's words
    EXPECT_NE(what.find("    2 |   return undeclared_name;"), std::string::npos) << what;
  }
  // Nothing half-made stays behind: the folder holds no entry and no temporary file.
  for (const auto& entry : fs::directory_iterator(cache_dir() + "/kernels"))
    ADD_FAILURE() << "left behind: " << entry.path();
}

TEST_F(KernelCache, AMissingSymbolIsNamed) {
  auto lib = load_or_compile(answer_source(1));
  try {
    lib->symbol("question");
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("no symbol 'question' in " + lib->path()),
              std::string::npos)
        << e.what();
  }
}

TEST_F(KernelCache, AFolderOthersMayWriteToIsRefused) {
  ASSERT_EQ(::chmod(dir_.c_str(), 0777), 0);
  try {
    load_or_compile(answer_source(3));
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("others may write to " + dir_ + " (mode 777)"),
              std::string::npos)
        << e.what();
  }
  ASSERT_EQ(::chmod(dir_.c_str(), 0700), 0);
  EXPECT_EQ(call_answer(*load_or_compile(answer_source(3))), 3);
  struct stat st {};
  ASSERT_EQ(::stat((dir_ + "/kernels").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u) << "the kernels folder is private";
}

// Another compiler's bytes in a folder others may write to: built and returned, never read
// from there (an entry planted there could be anyone's), nor written.
TEST_F(KernelCache, OtherCompilersBytesAreNeverReadFromAFolderOthersMayWriteTo) {
  int builds = 0;
  const auto build = [&builds] {
    ++builds;
    return std::string("bytes");
  };
  EXPECT_EQ(load_or_build("src", "", "blob", build), "bytes");  // a valid entry
  ASSERT_EQ(::chmod(dir_.c_str(), 0777), 0);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(load_or_build("src", "", "blob", build), "bytes");
  ::testing::internal::GetCapturedStderr();  // its one warning, if this process has not yet
  ASSERT_EQ(::chmod(dir_.c_str(), 0700), 0);
  EXPECT_EQ(builds, 2);
  EXPECT_EQ(cache_stats().from_disk, 0);
}

// A full disk (here a file size limit) costs only the caching: the bytes come back, and no
// partial file is left to fill the disk further.
TEST_F(KernelCache, AFullDiskLeavesNoPartialEntry) {
  const std::string big(64 * 1024, 'x');
  struct rlimit old {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  struct rlimit small = old;
  small.rlim_cur = 4096;
  auto* previous = std::signal(SIGXFSZ, SIG_IGN);  // a write past the limit fails, EFBIG
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  ::testing::internal::CaptureStderr();
  std::string got;
  try {
    got = load_or_build("src", "", "blob", [&] { return big; });
  } catch (...) {
  }
  ::testing::internal::GetCapturedStderr();
  ::setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, previous);
  EXPECT_EQ(got, big);
  for (const auto& e : fs::directory_iterator(dir_ + "/kernels"))
    ADD_FAILURE() << "left behind: " << e.path();
}

TEST_F(KernelCache, ThreadsAskingForTheSameSourceShareOneBuild) {
  std::vector<std::shared_ptr<KernelLibrary>> libs(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] { libs[t] = load_or_compile(answer_source(77)); });
  for (auto& th : threads) th.join();
  for (const auto& lib : libs) EXPECT_EQ(lib.get(), libs[0].get());
  EXPECT_EQ(cache_stats().compiled, 1);
  EXPECT_EQ(call_answer(*libs[3]), 77);
}

TEST(HostCompiler, KnowsItsVersionAndWhatNativeMeansHere) {
  const HostCompiler& cxx = host_compiler();
  if (!cxx.available()) GTEST_SKIP() << "no C++ compiler on this machine";
  EXPECT_FALSE(cxx.version.empty());
  EXPECT_NE(cxx.flags.find("-O3"), std::string::npos);
  if (cxx.flags.find("-march=native") != std::string::npos) {
    EXPECT_FALSE(cxx.target.empty()) << "the cache key must name the CPU";
  }
}

}  // namespace
}  // namespace glass::compiler
