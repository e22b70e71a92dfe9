// distributed/launcher/signals.h — signals turned into bytes on a pipe (the self-pipe trick).
//
// A signal handler may do almost nothing safely, so glassrun's handlers only write the
// signal's number into a pipe; the supervisor's poll() loop reads it there and does the real
// work (forwarding Ctrl-C, reaping an exited rank) as ordinary code. Invariant: after
// install_signal_pipe(), every SIGINT, SIGTERM, SIGHUP, SIGQUIT and SIGCHLD glassrun
// receives shows up in drain_signals() (SIGCHLDs may coalesce, so the reader reaps every
// child it can each time), and SIGPIPE is ignored (a closed stdout must not kill glassrun
// and, through PR_SET_PDEATHSIG, every rank with it).
#pragma once

#include <csignal>
#include <vector>

namespace glass::distributed::launcher {

// The signals glassrun passes on to every rank.
inline constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

void install_signal_pipe();
int signal_pipe_fd();              // readable when a signal arrived
std::vector<int> drain_signals();  // the signals that arrived since the last call

// For a child between fork and exec: the default dispositions and an empty signal mask
// (ignored signals and the mask survive exec). Async-signal-safe.
void reset_signals_in_child();

}  // namespace glass::distributed::launcher
