// compiler/kernel_cache.cpp — compiling generated C++ and caching the shared objects
// (kernel_cache.h). Invariants: nothing is dlopen()ed before its source and checksum were
// verified; every file in the cache folder appears by rename(), whole; the folder is this
// user's and nobody else may write to it.
#include "compiler/kernel_cache.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <future>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <vector>

#include "core/error.h"

extern char** environ;

#ifndef GLASS_BUILD_CXX
#define GLASS_BUILD_CXX "c++"
#endif
#ifndef GLASS_KERNEL_FLAGS
#define GLASS_KERNEL_FLAGS "-O3 -std=c++20 -fno-math-errno"
#endif

namespace glass::compiler {
namespace {

// [SECTION] small helpers: hashing, files, running a program ------------------------------

// FNV-1a, 64 bits. Two seeds make the 128-bit cache key; the saved source, compared on
// every load, is what rules out a collision.
uint64_t fnv1a(const std::string& bytes, uint64_t seed) {
  uint64_t h = seed;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// The 32 hex digits a cache entry is named by: everything that decided its bytes, hashed.
std::string cache_key(const std::string& material) {
  return hex64(fnv1a(material, 14695981039346656037ull)) +
         hex64(fnv1a(material, 0x9e3779b97f4a7c15ull));
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Writes `bytes` to dir/name through a temporary file in the same folder and rename(),
// so a reader sees the old file, no file, or the whole new one.
void write_file_atomically(const std::string& dir, const std::string& name,
                           const std::string& bytes) {
  static std::atomic<uint64_t> counter{0};
  const std::string tmp = dir + "/.tmp-" + std::to_string(::getpid()) + "-" +
                          std::to_string(counter.fetch_add(1)) + "-" + name;
  bool written = false;
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    written = out.good();
  }
  const int error = errno;
  // A failed write (a full disk) leaves no partial file behind to fill it further.
  if (!written || ::rename(tmp.c_str(), (dir + "/" + name).c_str()) != 0) {
    const int why = written ? errno : error;
    ::unlink(tmp.c_str());
    GLASS_CHECK(false, "compiler cache: cannot ", written ? "rename " : "write ", tmp,
                written ? " to " + dir + "/" + name : std::string(), ": ", std::strerror(why));
  }
}

// Creates the folder and its parents (new ones 0700), then refuses a folder another user
// owns or others may write to: anyone who can put a .so in the cache runs code in every
// process that loads from it (the checksum is no signature), so a shared /tmp path or a
// group-writable GLASS_CACHE_DIR is an error, as Triton's and Inductor's caches check.
void make_private_dirs(const std::string& path) {
  for (size_t i = 1; i <= path.size(); ++i) {
    if (i < path.size() && path[i] != '/') continue;
    const std::string prefix = path.substr(0, i);
    if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST)
      GLASS_CHECK(false, "compiler cache: cannot create ", prefix, ": ", std::strerror(errno));
  }
  struct stat st {};
  GLASS_CHECK(::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode), "compiler cache: ", path,
              " is not a folder");
  GLASS_CHECK(st.st_uid == ::getuid(), "compiler cache: ", path, " belongs to user ", st.st_uid,
              ", not to this user (", ::getuid(), "); set GLASS_CACHE_DIR to a folder of your own");
  GLASS_CHECK((st.st_mode & 022) == 0, "compiler cache: others may write to ", path, " (mode ",
              std::oct, (st.st_mode & 0777), "); chmod go-w it or set GLASS_CACHE_DIR");
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv) {
  ProcessResult result;
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return result;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int spawned = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  if (spawned != 0) {
    ::close(pipe_fds[0]);
    result.output = std::string("cannot start ") + argv[0] + ": " + std::strerror(spawned);
    return result;
  }
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(pipe_fds[0], buf, sizeof buf);
    if (n > 0) result.output.append(buf, static_cast<size_t>(n));
    if (n == 0 || (n < 0 && errno != EINTR)) break;
  }
  ::close(pipe_fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

namespace {

std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> words;
  std::istringstream in(s);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

std::string numbered(const std::string& source) {
  std::ostringstream out;
  std::istringstream in(source);
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    char prefix[16];
    std::snprintf(prefix, sizeof prefix, "%5d | ", ++n);
    out << prefix << line << '\n';
  }
  return out.str();
}

// [SECTION] the host compiler ---------------------------------------------------------------

HostCompiler find_host_compiler() {
  HostCompiler c;
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("GLASS_CXX"); env && *env)
    candidates = {env};  // asked for explicitly: that one or none
  else
    candidates = {GLASS_BUILD_CXX, "c++"};
  for (const std::string& candidate : candidates) {
    const ProcessResult version = run_process({candidate, "--version"});
    if (version.status != 0) continue;
    c.path = candidate;
    c.version = version.output.substr(0, version.output.find('\n'));
    break;
  }
  if (!c.available()) return c;
  c.flags = GLASS_KERNEL_FLAGS;
  // What -march=native (if used) turns into on this CPU: GCC's driver prints the expanded
  // flags it passes to cc1plus; clang prints -target-cpu and -target-feature. A kernel
  // cache copied to another machine must miss, not run instructions that CPU lacks.
  std::vector<std::string> probe = {c.path};
  for (const std::string& f : split_words(c.flags)) probe.push_back(f);
  for (const char* f : {"-E", "-v", "-x", "c++", "/dev/null", "-o", "/dev/null"})
    probe.push_back(f);
  std::istringstream lines(run_process(probe).output);
  for (std::string line; std::getline(lines, line);)
    if (line.find("-march=") != std::string::npos || line.find("-target-cpu") != std::string::npos)
      c.target += line + "\n";
  return c;
}

// [SECTION] the cache -----------------------------------------------------------------------

// The tables below and the statistics. Held only to look up and to publish, never while
// the compiler runs: a slow compile blocks only the threads that want the same source.
std::mutex g_mutex;
std::map<std::string, std::weak_ptr<KernelLibrary>> g_loaded;
std::map<std::string, std::shared_future<std::shared_ptr<KernelLibrary>>> g_building;
CacheStats g_stats;

void count(int64_t CacheStats::*counter) {
  std::lock_guard<std::mutex> lock(g_mutex);
  ++(g_stats.*counter);
}

std::string checksum_of(const std::string& bytes) { return hex64(fnv1a(bytes, 0x5a17ull)); }

// The verified library at dir/key.so, or null when the entry is absent, incomplete,
// corrupted or another source's (counted as rejected unless simply absent).
std::shared_ptr<KernelLibrary> load_verified(const std::string& dir, const std::string& key,
                                             const std::string& source) {
  const std::string base = dir + "/" + key;
  const auto saved_source = read_file(base + ".cpp");
  const auto library = read_file(base + ".so");
  const auto checksum = read_file(base + ".sum");
  if (!saved_source && !library && !checksum) return nullptr;
  if (!saved_source || !library || !checksum || *saved_source != source ||
      checksum_of(*library) != *checksum) {
    count(&CacheStats::rejected);
    return nullptr;
  }
  void* handle = ::dlopen((base + ".so").c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    count(&CacheStats::rejected);
    return nullptr;
  }
  return std::make_shared<KernelLibrary>(handle, base + ".so", key);
}

std::shared_ptr<KernelLibrary> compile_into_cache(const HostCompiler& cxx, const std::string& dir,
                                                  const std::string& key, const std::string& source,
                                                  const std::vector<std::string>& extra_flags) {
  static std::atomic<uint64_t> counter{0};
  const std::string tmp = dir + "/.build-" + std::to_string(::getpid()) + "-" +
                          std::to_string(counter.fetch_add(1)) + "-" + key;
  write_file_atomically(dir, tmp.substr(dir.size() + 1) + ".cpp", source);
  std::vector<std::string> argv = {cxx.path};
  for (const std::string& f : split_words(cxx.flags)) argv.push_back(f);
  for (const std::string& f : extra_flags) argv.push_back(f);
  for (const std::string& f :
       {std::string("-fPIC"), std::string("-shared"), std::string("-o"), tmp + ".so", tmp + ".cpp"})
    argv.push_back(f);
  const ProcessResult built = run_process(argv);
  ::unlink((tmp + ".cpp").c_str());
  if (built.status != 0) {
    ::unlink((tmp + ".so").c_str());
    std::string command;
    for (const std::string& a : argv) command += (command.empty() ? "" : " ") + a;
    GLASS_CHECK(false, "compiler: the generated kernel did not compile (", cxx.path, " exited ",
                built.status, ")\n$ ", command, "\n", built.output, "--- generated source ---\n",
                numbered(source));
  }
  const auto library = read_file(tmp + ".so");
  GLASS_CHECK(library.has_value(), "compiler: ", cxx.path, " wrote no ", tmp, ".so");
  // The checksum and the source go in first, the library last: an entry with a library is
  // complete (and load_verified checks all three anyway).
  write_file_atomically(dir, key + ".sum", checksum_of(*library));
  write_file_atomically(dir, key + ".cpp", source);
  GLASS_CHECK(::rename((tmp + ".so").c_str(), (dir + "/" + key + ".so").c_str()) == 0,
              "compiler cache: cannot install ", dir, "/", key, ".so: ", std::strerror(errno));
  const std::string path = dir + "/" + key + ".so";
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  GLASS_CHECK(handle != nullptr, "compiler: cannot load ", path, ": ", ::dlerror());
  return std::make_shared<KernelLibrary>(handle, path, key);
}

}  // namespace

const HostCompiler& host_compiler() {
  static const HostCompiler compiler = find_host_compiler();
  return compiler;
}

std::string cache_dir() {
  if (const char* env = std::getenv("GLASS_CACHE_DIR"); env && *env) return env;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/glasstorch";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/glasstorch";
  return "/tmp/glasstorch-cache-" + std::to_string(::getuid());
}

KernelLibrary::KernelLibrary(void* handle, std::string path, std::string key)
    : handle_(handle), path_(std::move(path)), key_(std::move(key)) {}

KernelLibrary::~KernelLibrary() { ::dlclose(handle_); }

void* KernelLibrary::symbol(const std::string& name) const {
  void* address = ::dlsym(handle_, name.c_str());
  GLASS_CHECK(address != nullptr, "compiler: no symbol '", name, "' in ", path_);
  return address;
}

CacheStats cache_stats() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_stats;
}

void reset_cache_stats() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_stats = CacheStats{};
}

void forget_loaded_kernels() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_loaded.clear();
}

std::string write_cache_files(const std::string& folder,
                              const std::vector<std::pair<std::string, std::string>>& files) {
  const std::string root = cache_dir() + "/" + folder;
  make_private_dirs(cache_dir());
  for (const auto& [relative, text] : files) {
    const std::string path = root + "/" + relative;
    const std::string dir = path.substr(0, path.rfind('/'));
    make_private_dirs(dir);
    if (read_file(path) != text) write_file_atomically(dir, path.substr(dir.size() + 1), text);
  }
  return root;
}

std::shared_ptr<KernelLibrary> load_or_compile(const std::string& source) {
  return load_or_compile(source, {}, "");
}

std::string load_or_build(const std::string& source, const std::string& key_material,
                          const std::string& extension, const std::function<std::string()>& build) {
  const std::string material = source + '\0' + extension + '\0' + key_material;
  const std::string key = cache_key(material);
  // What <key>.<ext>.src holds: all that decided the bytes, so even two keys colliding are
  // told apart.
  const std::string stamp = source + '\0' + key_material;
  const auto warn_once = [&extension](const std::string& why) {
    static std::once_flag warned;
    std::call_once(warned, [&] {
      std::cerr << "glass::compile: ." << extension << " files are not cached on disk: " << why
                << "\n";
    });
  };
  std::string dir;
  try {
    dir = cache_dir() + "/kernels";
    make_private_dirs(cache_dir());
    make_private_dirs(dir);
  } catch (const Error& e) {  // a folder others may write to is never read: build instead
    warn_once(e.what());
    std::string built = build();
    count(&CacheStats::compiled);
    return built;
  }
  const std::string name = key + "." + extension;
  const auto saved_stamp = read_file(dir + "/" + name + ".src");
  const auto bytes = read_file(dir + "/" + name);
  const auto checksum = read_file(dir + "/" + name + ".sum");
  if (saved_stamp && bytes && checksum && *saved_stamp == stamp &&
      checksum_of(*bytes) == *checksum) {
    count(&CacheStats::from_disk);
    return *bytes;
  }
  if (saved_stamp || bytes || checksum) count(&CacheStats::rejected);
  std::string built = build();
  count(&CacheStats::compiled);
  try {
    // As compile_into_cache: the checksum and the stamp first, the bytes last.
    write_file_atomically(dir, name + ".sum", checksum_of(built));
    write_file_atomically(dir, name + ".src", stamp);
    write_file_atomically(dir, name, built);
  } catch (const Error& e) {  // a full disk: the bytes are good, only not kept (nor half kept)
    for (const char* part : {".sum", ".src", ""}) ::unlink((dir + "/" + name + part).c_str());
    warn_once(e.what());
  }
  return built;
}

std::shared_ptr<KernelLibrary> load_or_compile(const std::string& source,
                                               const std::vector<std::string>& extra_flags,
                                               const std::string& key_material) {
  const HostCompiler& cxx = host_compiler();
  if (!cxx.available()) {
    const char* asked = std::getenv("GLASS_CXX");
    GLASS_CHECK(false, "compiler: no C++ compiler found (tried ",
                asked && *asked ? std::string("GLASS_CXX=") + asked
                                : std::string(GLASS_BUILD_CXX) + " and c++ on PATH",
                ")");
  }
  std::string material =
      source + '\0' + cxx.path + '\0' + cxx.version + '\0' + cxx.flags + '\0' + cxx.target;
  for (const std::string& f : extra_flags) material += '\0' + f;
  if (!key_material.empty()) material += '\0' + key_material;
  const std::string key = cache_key(material);

  std::unique_lock<std::mutex> lock(g_mutex);
  if (auto it = g_loaded.find(key); it != g_loaded.end()) {
    if (auto alive = it->second.lock()) {
      ++g_stats.in_process;
      return alive;
    }
  }
  if (auto it = g_building.find(key); it != g_building.end()) {
    // Another thread is loading or compiling this very source: wait for its library.
    std::shared_future<std::shared_ptr<KernelLibrary>> building = it->second;
    lock.unlock();
    auto library = building.get();
    count(&CacheStats::in_process);
    return library;
  }
  std::promise<std::shared_ptr<KernelLibrary>> promise;
  g_building[key] = promise.get_future().share();
  lock.unlock();

  std::shared_ptr<KernelLibrary> library;
  try {
    const std::string dir = cache_dir() + "/kernels";
    make_private_dirs(cache_dir());
    make_private_dirs(dir);
    library = load_verified(dir, key, source);
    if (library) {
      count(&CacheStats::from_disk);
    } else {
      library = compile_into_cache(cxx, dir, key, source, extra_flags);
      count(&CacheStats::compiled);
    }
  } catch (...) {
    lock.lock();
    g_building.erase(key);
    promise.set_exception(std::current_exception());
    throw;
  }
  lock.lock();
  g_loaded[key] = library;
  g_building.erase(key);
  promise.set_value(library);
  return library;
}

}  // namespace glass::compiler
