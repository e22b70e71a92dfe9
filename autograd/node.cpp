// autograd/node.cpp — sequence numbers for Nodes.
#include "autograd/node.h"

#include <atomic>

namespace glass::autograd {
namespace {
std::atomic<uint64_t> g_next_sequence_nr{0};
}

Node::Node() : sequence_nr_(g_next_sequence_nr.fetch_add(1, std::memory_order_relaxed)) {}

}  // namespace glass::autograd
