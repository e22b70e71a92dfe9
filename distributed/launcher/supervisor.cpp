// distributed/launcher/supervisor.cpp — see supervisor.h.
#include "distributed/launcher/supervisor.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <utility>

#include "distributed/launcher/signals.h"

namespace glass::distributed::launcher {
namespace {

using Clock = std::chrono::steady_clock;

// Once every rank has exited, how long to keep reading pipes that something the ranks
// started (and left running) may still hold open.
constexpr std::chrono::milliseconds kDrainAfterExit{1000};

void say(const std::string& line) {
  const std::string text = "glassrun: " + line + "\n";
  [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, text.data(), text.size());
}

std::string signal_name(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev != nullptr ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

// Until the earliest of the deadlines that are set; -1 (no timeout) when none is.
int poll_timeout_ms(std::initializer_list<std::optional<Clock::time_point>> deadlines) {
  std::optional<Clock::time_point> first;
  for (const auto& d : deadlines)
    if (d && (!first || *d < *first)) first = d;
  if (!first) return -1;
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(*first - Clock::now());
  return static_cast<int>(std::max<int64_t>(0, left.count()));
}

}  // namespace

int exit_code_of(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

Supervisor::~Supervisor() {
  for (Rank& r : ranks_) {
    if (!r.exited) {
      ::kill(-r.pid, SIGKILL);
      while (::waitpid(r.pid, nullptr, 0) < 0 && errno == EINTR) {
      }
    }
    for (int fd : r.fds)
      if (fd >= 0) ::close(fd);
  }
}

void Supervisor::add(int rank, const SpawnedRank& spawned) {
  Rank r{rank, spawned.pid, {spawned.stdout_fd, spawned.stderr_fd}, {}, false};
  const std::string prefix = "[rank " + std::to_string(rank) + "] ";
  r.out[0] = std::make_unique<LinePrefixer>(prefix, STDOUT_FILENO);
  r.out[1] = std::make_unique<LinePrefixer>(prefix, STDERR_FILENO);
  ranks_.push_back(std::move(r));
}

bool Supervisor::all_exited() const {
  return std::all_of(ranks_.begin(), ranks_.end(), [](const Rank& r) { return r.exited; });
}

bool Supervisor::all_closed() const {
  return std::all_of(ranks_.begin(), ranks_.end(),
                     [](const Rank& r) { return r.fds[0] < 0 && r.fds[1] < 0; });
}

void Supervisor::stop_all(int sig) {
  // The negative pid signals the rank's whole process group: anything it started, too.
  for (const Rank& r : ranks_)
    if (!r.exited) ::kill(-r.pid, sig);
}

void Supervisor::stop_all_with_grace(int sig) {
  stop_all(sig);
  stop_signal_ = sig;
  if (!kill_at_) kill_at_ = Clock::now() + grace_;
}

void Supervisor::share_failures(ReportFailure report, CheckFailure check,
                                std::chrono::milliseconds every) {
  report_failure_ = std::move(report);
  check_failure_ = std::move(check);
  check_every_ = every;
  next_check_ = Clock::now() + every;
}

void Supervisor::check_remote_failure() {
  if (!next_check_ || Clock::now() < *next_check_) return;
  next_check_.reset();
  // Once this node's job has a status (a failure or a signal), there is nothing to learn.
  if (result_.has_value() || all_exited()) return;
  const std::optional<RemoteFailure> failure = check_failure_();
  if (!failure) {
    next_check_ = Clock::now() + check_every_;
    return;
  }
  result_ = failure->status;
  say(failure->what + "; stopped this node's ranks");
  stop_all_with_grace(SIGTERM);
}

void Supervisor::close_output() {
  for (Rank& r : ranks_) {
    for (int which = 0; which < 2; ++which) {
      if (r.fds[which] < 0) continue;
      r.out[which]->finish();
      ::close(r.fds[which]);
      r.fds[which] = -1;
    }
  }
}

void Supervisor::reap_killed() {
  for (Rank& r : ranks_) {
    if (r.exited) continue;
    while (::waitpid(r.pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    r.exited = true;
  }
}

void Supervisor::reap() {
  for (Rank& r : ranks_) {
    if (r.exited) continue;
    int status = 0;
    pid_t done;
    do {
      done = ::waitpid(r.pid, &status, WNOHANG);
    } while (done < 0 && errno == EINTR);
    if (done == r.pid) {
      r.exited = true;
      on_exit(r, status);
    }
  }
}

void Supervisor::on_exit(Rank& rank, int wait_status) {
  const int code = exit_code_of(wait_status);
  if (code == 0 || result_.has_value()) return;  // success, or a rank we stopped ourselves
  result_ = code;
  const bool others_running =
      std::any_of(ranks_.begin(), ranks_.end(), [](const Rank& r) { return !r.exited; });
  std::string how = WIFSIGNALED(wait_status) ? "was killed by " + signal_name(WTERMSIG(wait_status))
                                             : "exited with status " + std::to_string(code);
  say("rank " + std::to_string(rank.rank) + " (pid " + std::to_string(rank.pid) + ") " + how +
      (others_running ? "; stopped the other ranks" : ""));
  if (others_running) stop_all_with_grace(SIGTERM);
  if (report_failure_) report_failure_(rank.rank, code);
}

void Supervisor::on_signal(int sig) {
  if (!result_.has_value()) {
    result_ = 128 + sig;
    say("got " + signal_name(sig) + "; passing it on to every rank");
  }
  stop_all_with_grace(sig);
}

void Supervisor::read_output(Rank& rank, int which) {
  char buffer[64 * 1024];
  const ssize_t n = ::read(rank.fds[which], buffer, sizeof(buffer));
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n > 0) {
    rank.out[which]->feed(buffer, static_cast<size_t>(n));
    return;
  }
  // EOF (or an error, which ends the stream just the same).
  rank.out[which]->finish();
  ::close(rank.fds[which]);
  rank.fds[which] = -1;
}

int Supervisor::run() {
  std::optional<Clock::time_point> drain_until;
  for (;;) {
    reap();
    if (all_exited()) {
      if (all_closed()) break;
      if (!drain_until) drain_until = Clock::now() + kDrainAfterExit;
      if (Clock::now() >= *drain_until) {
        // Something a rank started still holds its output open: stop it and give up reading.
        for (Rank& r : ranks_) ::kill(-r.pid, SIGKILL);
        close_output();
        break;
      }
    }
    if (kill_at_ && Clock::now() >= *kill_at_) {
      say("ranks still running " + std::to_string(grace_.count()) + " s after " +
          signal_name(stop_signal_) + "; sending SIGKILL");
      stop_all(SIGKILL);
      kill_at_.reset();
    }
    if (check_failure_) check_remote_failure();

    // pollfds[0] is the signal pipe; then each open output pipe, remembered in `owners`.
    std::vector<pollfd> pollfds{{signal_pipe_fd(), POLLIN, 0}};
    std::vector<std::pair<Rank*, int>> owners;
    for (Rank& r : ranks_)
      for (int which = 0; which < 2; ++which)
        if (r.fds[which] >= 0) {
          pollfds.push_back({r.fds[which], POLLIN, 0});
          owners.emplace_back(&r, which);
        }
    const int ready = ::poll(pollfds.data(), pollfds.size(),
                             poll_timeout_ms({kill_at_, drain_until, next_check_}));
    if (ready < 0) {
      if (errno == EINTR) continue;
      // Any other failure (no memory, too many descriptors) would repeat on every turn, so
      // it is said once and ends the job here: kill, reap, give up the output.
      say(std::string("poll: ") + std::strerror(errno) + "; killing every rank");
      result_ = result_.value_or(1);
      stop_all(SIGKILL);
      reap_killed();
      close_output();
      break;
    }
    if (pollfds[0].revents != 0)
      for (int sig : drain_signals())
        if (sig != SIGCHLD) on_signal(sig);  // SIGCHLD: reap() at the top of the loop
    for (size_t i = 1; i < pollfds.size(); ++i)
      if (pollfds[i].revents != 0) read_output(*owners[i - 1].first, owners[i - 1].second);
  }
  return result_.value_or(0);
}

}  // namespace glass::distributed::launcher
