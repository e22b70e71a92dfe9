// distributed/launcher/options.cpp — glassrun's options, torchrun's spelling.
//
// Both "--nproc-per-node 4" and "--nproc_per_node=4" are accepted (torchrun accepts both),
// so a torchrun command line works with the program name changed.
#include "distributed/launcher/options.h"

#include <cerrno>
#include <cstdlib>
#include <optional>

#include "core/error.h"
#include "distributed/env.h"

namespace glass::distributed::launcher {
namespace {

int int_in_range(const std::string& option, const std::string& text, long long lo, long long hi) {
  const auto value = parse_int(text);
  GLASS_CHECK(value.has_value() && *value >= lo && *value <= hi, "glassrun: ", option, " '", text,
              "' is not an integer in ", lo, "..", hi);
  return static_cast<int>(*value);
}

// "--nproc_per_node" -> "--nproc-per-node".
std::string canonical(std::string name) {
  for (size_t i = 2; i < name.size(); ++i)
    if (name[i] == '_') name[i] = '-';
  return name;
}

}  // namespace

const char* usage_text() {
  return "usage: glassrun [--nproc-per-node N] [--nnodes M --node-rank R --master-addr A\n"
         "                --master-port P] [--timeout S] [--grace S] program [args...]\n"
         "\n"
         "Starts N ranks of `program` on this node, like torchrun. Each rank gets MASTER_ADDR,\n"
         "MASTER_PORT, RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK and\n"
         "GLASS_NUM_THREADS = max(1, cores / N); init_process_group(\"env://\") reads them.\n"
         "Every line a rank prints is prefixed with \"[rank R] \". Ctrl-C and SIGTERM are passed\n"
         "on to every rank; when one rank fails, the others are stopped and glassrun exits with\n"
         "the failed rank's status (128 + signal when it was killed).\n"
         "\n"
         "  --nproc-per-node N  ranks on this node (default 1)\n"
         "  --nnodes M          nodes in the job (default 1)\n"
         "  --node-rank R       this node's index, 0..M-1 (default 0)\n"
         "  --master-addr A     the host of node 0, where the store runs (default 127.0.0.1)\n"
         "  --master-port P     node 0: the port to serve the store on (default 0: any free\n"
         "                      port, printed as \"glassrun: store at A:P\"); other nodes:\n"
         "                      the port to reach it (required)\n"
         "  --timeout S         seconds to wait for the store and the other nodes (default 300)\n"
         "  --grace S           seconds between SIGTERM and SIGKILL when stopping ranks\n"
         "                      (default 5)\n"
         "  -h, --help          this text\n";
}

LaunchOptions parse_options(const std::vector<std::string>& args) {
  LaunchOptions opts;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg == "-h" || arg == "--help") {
      opts.help = true;
      return opts;
    }
    if (arg.rfind("--", 0) != 0) break;  // the program

    // "--name=value" or "--name value".
    std::string name = arg;
    std::optional<std::string> value;
    if (const auto eq = arg.find('='); eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    }
    name = canonical(name);
    auto take_value = [&]() -> std::string {
      if (value.has_value()) return *value;
      GLASS_CHECK(i + 1 < args.size(), "glassrun: ", name, " needs a value");
      return args[++i];
    };

    if (name == "--nproc-per-node") {
      opts.nproc_per_node = int_in_range(name, take_value(), 1, 4096);
    } else if (name == "--nnodes") {
      opts.nnodes = int_in_range(name, take_value(), 1, 1 << 20);
    } else if (name == "--node-rank") {
      opts.node_rank = int_in_range(name, take_value(), 0, 1 << 20);
    } else if (name == "--master-addr") {
      opts.master_addr = take_value();
      GLASS_CHECK(!opts.master_addr.empty(), "glassrun: --master-addr is empty");
    } else if (name == "--master-port") {
      opts.master_port = static_cast<uint16_t>(int_in_range(name, take_value(), 0, 65535));
      opts.master_port_given = true;
    } else if (name == "--timeout") {
      opts.timeout_s = int_in_range(name, take_value(), 1, 1 << 24);
    } else if (name == "--grace") {
      opts.grace_s = int_in_range(name, take_value(), 0, 3600);
    } else {
      GLASS_CHECK(false, "glassrun: unknown option ", arg, " (see glassrun --help)");
    }
  }
  opts.command.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());

  GLASS_CHECK(!opts.command.empty(), "glassrun: no program to run (see glassrun --help)");
  GLASS_CHECK(opts.node_rank < opts.nnodes, "glassrun: --node-rank ", opts.node_rank,
              " is not less than --nnodes ", opts.nnodes);
  GLASS_CHECK(opts.node_rank == 0 || (opts.master_port_given && opts.master_port != 0),
              "glassrun: node ", opts.node_rank,
              " needs --master-port (the port node 0 printed as \"glassrun: store at A:P\")");
  GLASS_CHECK(static_cast<long long>(opts.nnodes) * opts.nproc_per_node <= 1'000'000,
              "glassrun: --nnodes ", opts.nnodes, " x --nproc-per-node ", opts.nproc_per_node,
              " ranks is too many");
  return opts;
}

}  // namespace glass::distributed::launcher
