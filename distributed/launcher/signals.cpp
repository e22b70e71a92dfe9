// distributed/launcher/signals.cpp — see signals.h.
#include "distributed/launcher/signals.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace glass::distributed::launcher {
namespace {

int g_pipe[2] = {-1, -1};
constexpr int kHandled[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD};

void on_signal(int sig) {
  const int saved_errno = errno;  // a handler must not change errno under the main code
  const unsigned char byte = static_cast<unsigned char>(sig);
  // Non-blocking: if the pipe is full, enough wake-ups are already queued.
  [[maybe_unused]] const ssize_t n = ::write(g_pipe[1], &byte, 1);
  errno = saved_errno;
}

}  // namespace

void install_signal_pipe() {
  GLASS_CHECK(::pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) == 0,
              "glassrun: pipe2: ", std::strerror(errno));
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int sig : kHandled) ::sigaction(sig, &action, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
}

int signal_pipe_fd() { return g_pipe[0]; }

std::vector<int> drain_signals() {
  std::vector<int> signals;
  unsigned char buffer[64];
  for (;;) {
    const ssize_t n = ::read(g_pipe[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    signals.insert(signals.end(), buffer, buffer + n);
  }
  return signals;
}

void reset_signals_in_child() {
  for (int sig : kHandled) ::signal(sig, SIG_DFL);
  ::signal(SIGPIPE, SIG_DFL);
  sigset_t empty;
  sigemptyset(&empty);
  ::sigprocmask(SIG_SETMASK, &empty, nullptr);
}

}  // namespace glass::distributed::launcher
