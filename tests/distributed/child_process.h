// tests/distributed/child_process.h — one program started by a test, its stdout and stderr
// captured apart, for tests that run ranks (or glassrun) as real processes.
//
// Invariants: every read and wait is bounded by a deadline the caller gives; a child that
// is still running when its ChildProcess is destroyed is killed (SIGKILL) and reaped, and a
// child dies with the test process too (PR_SET_PDEATHSIG), so a failed or crashed test
// leaves nothing behind.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <map>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace glass::test {

// Variables torchrun/glassrun set: a child gets none of the test's own, only those given.
inline const std::vector<std::string>& rendezvous_variables() {
  static const std::vector<std::string> names = {"RANK",
                                                 "WORLD_SIZE",
                                                 "LOCAL_RANK",
                                                 "LOCAL_WORLD_SIZE",
                                                 "GROUP_RANK",
                                                 "MASTER_ADDR",
                                                 "MASTER_PORT",
                                                 "GLASS_USE_AGENT_STORE",
                                                 "TORCHELASTIC_USE_AGENT_STORE",
                                                 "GLASS_DISTRIBUTED_DEBUG"};
  return names;
}

class ChildProcess {
 public:
  using Clock = std::chrono::steady_clock;
  using Env = std::map<std::string, std::string>;

  // argv[0] is the program's path. `env`: set on top of this process's environment, less
  // the rendezvous variables above.
  explicit ChildProcess(std::vector<std::string> argv, const Env& env = {}) {
    // Everything the child needs is built before fork(): between fork and exec a child of a
    // multi-threaded process may only make async-signal-safe calls.
    std::vector<std::string> env_strings;
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string entry(*e);
      const std::string name = entry.substr(0, entry.find('='));
      bool dropped = env.count(name) > 0;
      for (const std::string& v : rendezvous_variables()) dropped = dropped || v == name;
      if (!dropped) env_strings.push_back(entry);
    }
    for (const auto& [name, value] : env) env_strings.push_back(name + "=" + value);
    std::vector<char*> c_argv, c_env;
    for (std::string& a : argv) c_argv.push_back(a.data());
    c_argv.push_back(nullptr);
    for (std::string& e : env_strings) c_env.push_back(e.data());
    c_env.push_back(nullptr);

    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0)
      throw std::runtime_error("pipe2 failed");
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(127);  // the test died before prctl took hold
      ::dup2(out[1], STDOUT_FILENO);
      ::dup2(err[1], STDERR_FILENO);
      ::execve(c_argv[0], c_argv.data(), c_env.data());
      ::_exit(127);
    }
    ::close(out[1]);
    ::close(err[1]);
    streams_[0].fd = out[0];
    streams_[1].fd = err[0];
  }

  ~ChildProcess() {
    if (!status_.has_value() && pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    for (Stream& s : streams_)
      if (s.fd >= 0) ::close(s.fd);
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  const std::string& out() const { return streams_[0].text; }
  const std::string& err() const { return streams_[1].text; }
  std::string output() const { return "stdout:\n" + out() + "stderr:\n" + err(); }

  // Reads until stdout (stderr) matches `pattern` (true), or the deadline or EOF (false).
  bool read_out_until(const std::regex& pattern, Clock::time_point deadline) {
    return read_until(streams_[0], pattern, deadline);
  }
  bool read_err_until(const std::regex& pattern, Clock::time_point deadline) {
    return read_until(streams_[1], pattern, deadline);
  }

  // Reads both streams to EOF and reaps the child: its exit code (128 + signal when a
  // signal ended it), or nullopt when the deadline came first.
  std::optional<int> finish(Clock::time_point deadline) {
    while (read_some(deadline)) {
    }
    for (;;) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        return status_;
      }
      if (Clock::now() >= deadline) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));  // polling a child's exit
    }
  }
  std::optional<int> finish(std::chrono::milliseconds limit) {
    return finish(Clock::now() + limit);
  }

 private:
  struct Stream {
    int fd = -1;
    bool eof = false;
    std::string text;
  };

  bool read_until(const Stream& stream, const std::regex& pattern, Clock::time_point deadline) {
    while (!std::regex_search(stream.text, pattern))
      if (!read_some(deadline)) return false;
    return true;
  }

  // One poll of both pipes and a read of what is ready; false once both are at EOF or the
  // deadline has passed.
  bool read_some(Clock::time_point deadline) {
    pollfd fds[2];
    nfds_t n = 0;
    Stream* of[2];
    for (Stream& s : streams_) {
      if (s.eof) continue;
      fds[n] = {s.fd, POLLIN, 0};
      of[n++] = &s;
    }
    if (n == 0) return false;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0 || ::poll(fds, n, static_cast<int>(left)) <= 0) return false;
    for (nfds_t i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      char buffer[4096];
      const ssize_t got = ::read(fds[i].fd, buffer, sizeof(buffer));
      if (got <= 0)
        of[i]->eof = true;
      else
        of[i]->text.append(buffer, static_cast<size_t>(got));
    }
    return true;
  }

  pid_t pid_ = -1;
  Stream streams_[2];
  std::optional<int> status_;
};

// The lines of `text` (without their '\n'); a last line without one counts too.
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

}  // namespace glass::test
