// lessons/03_broadcasting/exercises/solution.cpp — the reference answers to lesson 03's
// exercises (the build uses them unless GLASS_EXERCISES=student). Try your own in
// student.cpp before reading these.
#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "exercises.h"

namespace glass::lesson03 {
namespace {

std::string str(IntArrayRef s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

// Bool 0, integers 1, floating 2.
int category(ScalarType t) {
  if (t == kBool) return 0;
  return t == kFloat || t == kDouble ? 2 : 1;
}

// The larger of two dtypes on the chain Bool < Int32 < Int64 < Float32 < Float64, which
// is the order of ScalarType's values; Undefined stands for "no operand in this tier".
ScalarType larger(ScalarType a, ScalarType b) {
  if (a == ScalarType::Undefined) return b;
  if (b == ScalarType::Undefined) return a;
  return static_cast<int>(a) > static_cast<int>(b) ? a : b;
}

// A higher tier keeps its dtype unless the lower one's category is higher.
ScalarType over(ScalarType higher, ScalarType lower) {
  if (higher == ScalarType::Undefined) return lower;
  if (lower == ScalarType::Undefined) return higher;
  return category(lower) > category(higher) ? lower : higher;
}

}  // namespace

Shape broadcast_shape(IntArrayRef a, IntArrayRef b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  // k counts positions from the right, which is how the two shapes line up.
  for (size_t k = 0; k < n; ++k) {
    int64_t sa = k < a.size() ? a[a.size() - 1 - k] : 1;
    int64_t sb = k < b.size() ? b[b.size() - 1 - k] : 1;
    if (sa != sb && sa != 1 && sb != 1)
      throw Error("broadcast_shape(): shapes " + str(a) + " and " + str(b) +
                  " do not broadcast: " + std::to_string(sa) + " vs " + std::to_string(sb) +
                  " in dim " + std::to_string(n - 1 - k) + " of the result");
    out[n - 1 - k] = sa == 1 ? sb : sa;
  }
  return out;
}

Shape broadcast_strides(const Tensor& t, IntArrayRef shape) {
  int64_t n = static_cast<int64_t>(shape.size());
  if (t.dim() > n)
    throw Error("broadcast_strides(): a tensor of sizes " + str(t.sizes()) +
                " has more dims than the target shape " + str(shape));
  Shape strides(n, 0);  // new leading dims read the same elements again: stride 0
  for (int64_t d = 0; d < t.dim(); ++d) {
    int64_t target = d + (n - t.dim());  // right-aligned position in `shape`
    if (t.size(d) == shape[target]) {
      strides[target] = t.stride(d);
    } else if (t.size(d) != 1) {
      throw Error("broadcast_strides(): sizes " + str(t.sizes()) + " cannot broadcast to " +
                  str(shape));
    }
  }
  return strides;
}

Tensor broadcast_add(const Tensor& a, const Tensor& b) {
  if (a.dtype() != kFloat || b.dtype() != kFloat)
    throw Error("broadcast_add(): expects Float tensors");
  Shape shape = broadcast_shape(a.sizes(), b.sizes());
  Shape sa = broadcast_strides(a, shape), sb = broadcast_strides(b, shape);
  Tensor out = empty(shape, kFloat);
  const auto* pa = static_cast<const float*>(a.storage().data());
  const auto* pb = static_cast<const float*>(b.storage().data());
  auto* po = static_cast<float*>(out.data_ptr());
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t k = 0; k < out.numel(); ++k) {
    // With stride 0 on broadcast dims, both reads use the result's index unchanged.
    po[k] = pa[storage_index(shape, sa, a.storage_offset(), index)] +
            pb[storage_index(shape, sb, b.storage_offset(), index)];
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

ScalarType result_type(const std::vector<Operand>& operands) {
  if (operands.empty()) throw Error("result_type(): needs at least one operand");
  ScalarType dims = ScalarType::Undefined, zero_dim = ScalarType::Undefined,
             number = ScalarType::Undefined;
  for (const Operand& o : operands) {
    switch (o.tier) {
      case Tier::Dims: dims = larger(dims, o.dtype); break;
      case Tier::ZeroDim: zero_dim = larger(zero_dim, o.dtype); break;
      case Tier::Number:
        // 2.5 is a double, yet t * 2.5 on a Long t is Float: the default dtype.
        number = larger(number, category(o.dtype) == 2 ? get_default_dtype() : o.dtype);
        break;
    }
  }
  return over(dims, over(zero_dim, number));
}

}  // namespace glass::lesson03
