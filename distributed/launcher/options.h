// distributed/launcher/options.h — glassrun's command line, parsed and checked.
//
// Invariant: parse_options() returns options that are consistent (node_rank < nnodes, a
// master port where a node must connect, a program to run) or throws one line that names
// the option and what is wrong with it; glassrun prints that line and the usage hint.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace glass::distributed::launcher {

struct LaunchOptions {
  int nproc_per_node = 1;
  int nnodes = 1;
  int node_rank = 0;
  std::string master_addr = "127.0.0.1";
  // Node 0 binds it (0: any free port, printed and exported); other nodes connect to it.
  uint16_t master_port = 0;
  bool master_port_given = false;
  // How long to wait for the store (connecting, and node 0 waiting for the other nodes to
  // finish before it takes the store down).
  int timeout_s = 300;
  // After one rank fails (or Ctrl-C), how long the others get between SIGTERM and SIGKILL.
  int grace_s = 5;
  bool help = false;
  std::vector<std::string> command;  // the program and its arguments
};

// argv without the program name. Options stop at the first word that is not one (or at
// "--"); everything after it is the command.
LaunchOptions parse_options(const std::vector<std::string>& args);

const char* usage_text();

}  // namespace glass::distributed::launcher
