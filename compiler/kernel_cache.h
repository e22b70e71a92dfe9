// compiler/kernel_cache.h — generated C++ in, a loaded shared object out, each source
// compiled once per machine.
//
// The last stage of the compiler (Inductor's "code cache"): the code generator writes a
// kernel as C++ source; load_or_compile hands it to the host C++ compiler (-O3, the flags
// eager mode's kernels were built with, -shared), keeps the shared object on disk under
// cache_dir(), named by a hash of the source, the compiler's version, the flags and the
// CPU that -march=native resolved to, and loads it with dlopen. Later calls — in this
// process or any later one — skip the compiler:
//
//   auto lib = compiler::load_or_compile(source);          // ~1 s the first time, ~1 ms after
//   auto* fn = lib->function<void(char**, const int64_t*, int64_t)>("glass_kernel");
//
// Invariants: a cache entry is used only if its saved source equals the source asked for
// and the shared object's bytes match the checksum written beside it (a truncated or
// corrupted entry, or a hash collision, is rebuilt, never loaded); entries appear
// atomically (written under a temporary name, then renamed), so processes sharing the
// cache never see half a file; a failed compilation is an error that shows the compiler's
// message and the numbered source.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace glass::compiler {

// The C++ compiler kernels are built with: $GLASS_CXX if set, else the compiler the
// project was built with, else `c++` on PATH. Found once per process.
struct HostCompiler {
  std::string path;     // empty when there is none: callers interpret instead
  std::string version;  // the first line of `--version`
  std::string flags;    // what every kernel is compiled with
  std::string target;   // what -march=native means on this CPU (part of the cache key)
  bool available() const { return !path.empty(); }
};
const HostCompiler& host_compiler();

// $GLASS_CACHE_DIR, else $XDG_CACHE_HOME/glasstorch, else ~/.cache/glasstorch; kernels live
// in its kernels/ folder, created (0700) on first use. A folder another user owns, or that
// others may write to, is refused: whoever can write there runs code in this process.
std::string cache_dir();

// One loaded shared object; dlclose()d when the last holder lets go.
class KernelLibrary {
 public:
  KernelLibrary(void* handle, std::string path, std::string key);
  ~KernelLibrary();
  KernelLibrary(const KernelLibrary&) = delete;
  KernelLibrary& operator=(const KernelLibrary&) = delete;

  // The address of an extern "C" symbol; an error naming it and the library if absent.
  void* symbol(const std::string& name) const;
  template <class Fn>
  Fn* function(const std::string& name) const {
    return reinterpret_cast<Fn*>(symbol(name));
  }
  const std::string& path() const { return path_; }
  const std::string& key() const { return key_; }  // the cache key, 32 hex digits

 private:
  void* handle_;
  std::string path_, key_;
};

// How each call to load_or_compile was answered, since the process started (or the last
// reset): what the tests and the benchmark check the cache with.
struct CacheStats {
  int64_t compiled = 0;    // ran the compiler
  int64_t from_disk = 0;   // loaded a verified entry from cache_dir()
  int64_t in_process = 0;  // already loaded by this process
  int64_t rejected = 0;    // entries found corrupted or colliding, then rebuilt
};
CacheStats cache_stats();
void reset_cache_stats();

// The library built from `source`. Throws glass::Error when no compiler is available
// (check host_compiler().available() first) or when compilation fails. Thread-safe; the
// compiler runs outside any lock, and threads asking for the same source wait for one
// build.
std::shared_ptr<KernelLibrary> load_or_compile(const std::string& source);
// The same with more compiler flags (include folders, defines), and `key_material`: what
// else decides the result and must be part of the cache key (e.g. the contents of the
// headers the source includes, which the source's text does not show).
std::shared_ptr<KernelLibrary> load_or_compile(const std::string& source,
                                               const std::vector<std::string>& extra_flags,
                                               const std::string& key_material);

// The bytes another compiler makes from `source` (NVRTC's CUBIN for a GPU), cached on disk
// as a library is: under cache_dir()/kernels as <key>.<extension> beside the source and key
// material (<key>.<extension>.src) and a checksum (<key>.<extension>.sum), used only when all
// three are there and agree. `key_material`: everything else that decides the bytes (the
// compiler's version and options, the target architecture, the headers). `build` runs when no
// verified entry exists; what it returns is written atomically and returned. A cache folder
// that cannot be used (others may write to it) or written (a full disk) costs only the
// caching: the bytes are built and returned, with one warning. Counted in cache_stats()
// (compiled, from_disk, rejected). Thread-safe; two threads missing at once may both build
// (either's entry is kept), so callers cache the result in process as well.
std::string load_or_build(const std::string& source, const std::string& key_material,
                          const std::string& extension, const std::function<std::string()>& build);

// Writes `files` (relative path, contents) under cache_dir()/`folder`, each file only if
// absent or different, atomically; returns the folder's path. What a kernel's headers are
// materialized with (cuda_pointwise.h).
std::string write_cache_files(const std::string& folder,
                              const std::vector<std::pair<std::string, std::string>>& files);

// Runs `argv` (argv[0] looked up on PATH) with stdin empty; returns its exit status (-1 when
// it could not start or was killed) and what it printed on stdout and stderr together.
struct ProcessResult {
  int status = -1;
  std::string output;
};
ProcessResult run_process(const std::vector<std::string>& argv);

// Forgets the libraries this process loaded (they stay loaded while held), so the next
// load_or_compile of a source goes to the disk cache: for tests and the benchmark.
void forget_loaded_kernels();

}  // namespace glass::compiler
