// distributed/launcher/spawn.cpp — fork/exec with the care a multi-threaded parent needs.
//
// glassrun has threads (the TCPStore server), and after fork() only async-signal-safe calls
// are allowed in the child: every string is prepared before fork, the program path is
// resolved in the parent, and the child calls only setpgid, prctl, dup2, open, close_range,
// execve, write and _exit.
#include "distributed/launcher/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/error.h"
#include "distributed/launcher/signals.h"

namespace glass::distributed::launcher {
namespace {

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  pointers.reserve(strings.size() + 1);
  for (const std::string& s : strings) pointers.push_back(const_cast<char*>(s.c_str()));
  pointers.push_back(nullptr);
  return pointers;
}

// Everything the child does before exec. Async-signal-safe calls only; never returns.
[[noreturn]] void exec_child(pid_t parent, const char* path, char* const argv[], char* const envp[],
                             int out_w, int err_w, int error_w) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  // The parent may have died before prctl: then nothing would ever kill us.
  if (::getppid() != parent) ::_exit(127);
  reset_signals_in_child();
  const int null_fd = ::open("/dev/null", O_RDONLY);
  if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
  ::dup2(out_w, STDOUT_FILENO);
  ::dup2(err_w, STDERR_FILENO);
  // Other ranks' pipe ends, the store's sockets: none of them is this rank's business.
  ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
  ::execve(path, argv, envp);
  const int error = errno;
  [[maybe_unused]] const ssize_t n = ::write(error_w, &error, sizeof(error));
  ::_exit(127);
}

}  // namespace

std::string resolve_program(const std::string& program) {
  GLASS_CHECK(!program.empty(), "glassrun: the program name is empty");
  if (program.find('/') != std::string::npos) {
    GLASS_CHECK(is_executable_file(program), "glassrun: program '", program,
                "' is not an executable file");
    return program;
  }
  const char* path_env = std::getenv("PATH");
  const std::string path_list = path_env != nullptr ? path_env : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= path_list.size()) {
    size_t end = path_list.find(':', start);
    if (end == std::string::npos) end = path_list.size();
    const std::string dir = end > start ? path_list.substr(start, end - start) : ".";
    const std::string candidate = dir + "/" + program;
    if (is_executable_file(candidate)) return candidate;
    start = end + 1;
  }
  GLASS_CHECK(false, "glassrun: program '", program, "' not found in PATH");
  return {};
}

SpawnedRank spawn_rank(const std::string& path, const std::vector<std::string>& argv,
                       const std::vector<std::string>& env) {
  int out_pipe[2], err_pipe[2], error_pipe[2];
  GLASS_CHECK(::pipe2(out_pipe, O_CLOEXEC) == 0, "glassrun: pipe2: ", std::strerror(errno));
  GLASS_CHECK(::pipe2(err_pipe, O_CLOEXEC) == 0, "glassrun: pipe2: ", std::strerror(errno));
  GLASS_CHECK(::pipe2(error_pipe, O_CLOEXEC) == 0, "glassrun: pipe2: ", std::strerror(errno));
  std::vector<char*> c_argv = c_strings(argv);
  std::vector<char*> c_env = c_strings(env);

  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0)
    exec_child(parent, path.c_str(), c_argv.data(), c_env.data(), out_pipe[1], err_pipe[1],
               error_pipe[1]);
  const int fork_errno = errno;
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  ::close(error_pipe[1]);
  if (pid < 0) {
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    ::close(error_pipe[0]);
    GLASS_CHECK(false, "glassrun: fork: ", std::strerror(fork_errno));
  }
  // Also here, not only in the child: a signal forwarded right after fork must find the
  // group (the shells' way of closing that race).
  ::setpgid(pid, pid);

  // exec closes the error pipe (close-on-exec): EOF means the program is running.
  int exec_errno = 0;
  ssize_t n;
  do {
    n = ::read(error_pipe[0], &exec_errno, sizeof(exec_errno));
  } while (n < 0 && errno == EINTR);
  ::close(error_pipe[0]);
  if (n == sizeof(exec_errno)) {
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    // The child has exited (127) or is about to; reap it so no zombie is left.
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    GLASS_CHECK(false, "glassrun: cannot run '", path, "': ", std::strerror(exec_errno));
  }
  return SpawnedRank{pid, out_pipe[0], err_pipe[0]};
}

}  // namespace glass::distributed::launcher
