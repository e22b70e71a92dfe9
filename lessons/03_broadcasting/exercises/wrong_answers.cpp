// lessons/03_broadcasting/exercises/wrong_answers.cpp — the deliberately wrong answers of
// wrong_answers.h: each passes its exercise's value checks by calling the library function
// the exercise is about, or breaks one rule of the contract, and exercises_test.cpp asserts
// the grader rejects it.
#include "wrong_answers.h"

#include <algorithm>

namespace glass::lesson03::wrong {

Shape broadcast_shape_by_library(IntArrayRef a, IntArrayRef b) { return broadcast_shapes(a, b); }

Shape broadcast_strides_by_expand(const Tensor& t, IntArrayRef shape) {
  return t.expand(shape).strides().vec();
}

Tensor broadcast_add_by_plus(const Tensor& a, const Tensor& b) {
  if (a.dtype() != kFloat || b.dtype() != kFloat)
    throw Error("broadcast_add(): expects Float tensors");
  return a + b;
}

namespace {

int category(ScalarType t) { return t == kBool ? 0 : (t == kFloat || t == kDouble ? 2 : 1); }

// The tiered rule, with `count_number` deciding what a floating Number counts as and
// `overrides` whether a lower tier's dtype replaces a higher one's.
template <class CountNumber, class Overrides>
ScalarType tiered(const std::vector<Operand>& operands, CountNumber count_number,
                  Overrides overrides) {
  if (operands.empty()) throw Error("result_type(): needs at least one operand");
  ScalarType tiers[3] = {ScalarType::Undefined, ScalarType::Undefined, ScalarType::Undefined};
  for (const Operand& o : operands) {
    ScalarType t = o.tier == Tier::Number ? count_number(o.dtype) : o.dtype;
    ScalarType& tier = tiers[static_cast<int>(o.tier)];
    if (tier == ScalarType::Undefined || static_cast<int>(t) > static_cast<int>(tier)) tier = t;
  }
  // From the Number tier (2) up to Dims (0): `out` is what the lower tiers gave.
  ScalarType out = ScalarType::Undefined;
  for (int k = 2; k >= 0; --k) {
    if (tiers[k] == ScalarType::Undefined) continue;
    if (out == ScalarType::Undefined || !overrides(out, tiers[k])) out = tiers[k];
  }
  return out;
}

ScalarType default_for_floats(ScalarType t) { return category(t) == 2 ? get_default_dtype() : t; }

}  // namespace

ScalarType result_type_by_library(const std::vector<Operand>& operands) {
  std::vector<Tensor> tensors;
  for (const Operand& o : operands) {
    Tensor t = o.tier == Tier::Dims ? empty({2}, o.dtype) : empty({}, o.dtype);
    if (o.tier == Tier::Number) t.unsafeGetTensorImpl()->set_wrapped_number(true);
    tensors.push_back(t);
  }
  if (tensors.empty()) throw Error("result_type(): needs at least one operand");
  return glass::result_type(tensors);
}

ScalarType result_type_ignoring_tiers(const std::vector<Operand>& operands) {
  if (operands.empty()) throw Error("result_type(): needs at least one operand");
  ScalarType out = ScalarType::Undefined;
  for (const Operand& o : operands)
    out = promote_types(out, o.tier == Tier::Number ? default_for_floats(o.dtype) : o.dtype);
  return out;
}

ScalarType result_type_number_keeps_its_dtype(const std::vector<Operand>& operands) {
  return tiered(
      operands, [](ScalarType t) { return t; },
      [](ScalarType lower, ScalarType higher) { return category(lower) > category(higher); });
}

ScalarType result_type_by_dtype_not_category(const std::vector<Operand>& operands) {
  return tiered(operands, default_for_floats, [](ScalarType lower, ScalarType higher) {
    return static_cast<int>(lower) > static_cast<int>(higher);
  });
}

}  // namespace glass::lesson03::wrong
