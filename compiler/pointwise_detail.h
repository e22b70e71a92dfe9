// compiler/pointwise_detail.h — what the three parts of a pointwise group share: the IR
// (pointwise_ir.cpp), the C++ generator (cpp_codegen.cpp) and the runner
// (pointwise_run.cpp). Private to compiler/.
#pragma once

#include <string>
#include <vector>

#include "compiler/pointwise.h"
#include "core/tensor_iterator.h"

namespace glass::compiler::detail {

using Step = PointwiseProgram::Step;
using Kind = Step::Kind;

// The C++ type of a dtype in generated code; an error naming the dtype for one a group
// cannot hold.
const char* c_type(ScalarType t);

// eq, ne, lt, le, gt, ge (not logical_and / logical_or, which core also files as
// comparisons since they too produce bool).
bool is_comparison_op(BinaryOp op);

// What a step looks like to eager's ops: an empty tensor of its dtype (0-dim for a 0-dim
// input), or the wrapped number a number becomes.
Tensor stand_in(const PointwiseProgram& p, const Step& s);

// The dtype a binary step's operands are converted to before the op: their common dtype
// (a comparison then produces bool).
ScalarType compute_dtype(const PointwiseProgram& p, const Step& s);

// Which steps the output depends on (an input the output ignores is not even read).
std::vector<bool> live_steps(const PointwiseProgram& p);

// What the C++ and CUDA generators share (cpp_codegen.cpp): a C++ literal that converts to
// exactly `v` (hexadecimal floating point; inf and NaN named), and step i's value converted
// to `to`, as TensorIterator converts an operand (a number becomes a literal of that type).
std::string literal(double v);
std::string literal(const Scalar& v);
std::string operand(const PointwiseProgram& p, int i, ScalarType to);

// Checks a call against the program it was built for: the input count, each input's dtype
// and 0-dim-ness (pointwise_run.cpp). `who` names the caller in the messages.
void check_call(const PointwiseProgram& p, TensorList inputs, const char* who);

// TensorIterator over a group's live inputs with a new output of the program's dtype, as
// any eager elementwise kernel's: what both runners' kernels loop over (pointwise_run.cpp).
TensorIterator elementwise_iterator(const PointwiseProgram& p, const std::vector<int>& live_inputs,
                                    TensorList inputs);

}  // namespace glass::compiler::detail
