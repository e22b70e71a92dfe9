// compiler/graph.h — the graph IR a trace records: values and the op calls between them.
//
// A Value is one tensor the traced function saw: a graph input, a constant (a tensor from
// outside the function, held by handle and read live at each call), or the result of a node.
// A Node is one boxed op call (core/dispatcher.h, Note [Boxed ops]): the op, its arguments
// (a value, a list of values, or a constant IValue such as a dim or a number), and the values
// it produced. Every tensor carries the sizes, strides, dtype and device it had in the trace.
//
// An op that writes in place (its schema has Tensor(a!)) produces a new value for the
// written tensor: before and after the write are different values of one storage, so a pass
// can tell a read before a write from a read after it. Nodes stay in the order they ran,
// which is the order a replay runs them in; passes may remove or merge nodes and never move
// one across a write.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/dispatcher.h"
#include "core/ivalue.h"
#include "core/tensor.h"

namespace glass::compiler {

struct TensorMeta {
  std::vector<int64_t> sizes, strides;
  int64_t storage_offset = 0;
  ScalarType dtype = ScalarType::Undefined;
  Device device{kCPU};
  bool requires_grad = false;
  bool has_forward_grad = false;  // carries a forward-mode tangent
  static TensorMeta of(const Tensor& t);
  bool operator==(const TensorMeta&) const = default;
};

// For each tensor, the first earlier one sharing its storage, or -1; and, apart, the first
// earlier one that is the very same tensor (a trace makes one value of the two, so a graph
// traced on such a call is only right for calls with the same pattern). Undefined tensors
// share nothing.
std::vector<int> alias_pattern(const std::vector<Tensor>& tensors);

struct Value {
  enum class Kind : uint8_t { Input, Constant, NodeOutput };
  Kind kind = Kind::NodeOutput;
  TensorMeta meta;
  int input = -1;                  // Input: which tensor of the call
  int node = -1;                   // NodeOutput: the node that made it
  Tensor constant;                 // Constant: the tensor itself
  int written = -1;                // a write's result: the value it wrote over
  bool is_wrapped_number = false;  // a Constant that is eager's 0-dim x * 0.5
  bool folded = false;             // a Constant computed at compile time from tensors made inside
};

// One argument of a node.
struct Arg {
  enum class Kind : uint8_t { Value, ValueList, Constant };
  Kind kind = Kind::Constant;
  int value = -1;           // Value
  std::vector<int> values;  // ValueList (a TensorList argument)
  IValue constant;          // Constant
};

struct Node {
  const BoxedOp* op = nullptr;
  std::vector<Arg> args;
  std::vector<int> outputs;  // the values of the op's results, in order
  std::vector<int> writes;   // for each written argument, the new value (Value::written)
  bool grad_enabled = true;  // grad mode when it ran (a NoGradGuard inside the function)
  bool mutates() const { return !writes.empty(); }
};

// Why a trace stopped being a graph: the op that read a value back (item, print).
struct GraphBreak {
  std::string op;
  std::string message;
  int value = -1;  // the value it read back (-1: none the trace knew)
};

class Graph {
 public:
  std::vector<Value> values;
  std::vector<Node> nodes;
  std::vector<int> inputs;   // the value of each input tensor, in call order
  std::vector<int> outputs;  // the values the function returned

  int add_value(Value v);
  // The value a node argument names, or -1 for a constant argument.
  static std::vector<int> values_read(const Node& n);

  // For each value, the nodes that read it.
  std::vector<std::vector<int>> uses() const;
  // For each value, whether some node reads it (the return is not counted).
  std::vector<bool> read_by_nodes() const;
  // The value whose storage a value is: itself, or for a view or a write, that of the
  // tensor it views or wrote over.
  int root(int v) const;
  // Drops the nodes marked dead, keeping the others' order (values stay; Value::node is
  // renumbered).
  void remove_nodes(const std::vector<bool>& dead);
  // Makes every reader of `from` (and the outputs) read `to` instead.
  void replace_uses(int from, int to);

  // One line per node, as "%4 = binary(mul, %0, %1) : float32[8, 3]"; what
  // GLASS_COMPILE_DEBUG prints and the tests read.
  std::string to_string() const;
  // The DOT name to_dot gives what made value v: "n<node>" for a node's result, else "v<v>".
  std::string dot_name(int v) const;
  // Graphviz DOT: inputs and constants as boxes, nodes as ellipses, writes in bold; each
  // list of node indices in `clusters` (a fused group) drawn as one box around its nodes.
  std::string to_dot(const std::string& title = "graph",
                     const std::vector<std::vector<int>>& clusters = {}) const;
};

// "%3" for a value; constants print as "const%3".
std::string value_name(const Graph& g, int v);

}  // namespace glass::compiler
