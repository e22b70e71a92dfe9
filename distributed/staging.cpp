// distributed/staging.cpp — the contiguous, on-device copies a transport needs.
//
// Invariant: every copy here runs with grad mode off (a parameter's .grad or a leaf that
// requires grad is written in place, which autograd would otherwise refuse).
#include "distributed/staging.h"

#include "core/grad_mode.h"
#include "core/ops/factories.h"

namespace glass::distributed {

bool transport_can_take(const Tensor& t, Device device) {
  return t.is_contiguous() && t.device() == device;
}

Tensor stage_in(const Tensor& t, Device device) {
  if (transport_can_take(t, device)) return t;
  NoGradGuard no_grad;
  Tensor wire = empty(t.sizes(), TensorOptions(t.dtype()).device(device));
  wire.copy_(t);
  return wire;
}

Tensor stage_out_buffer(const Tensor& t, Device device) {
  if (transport_can_take(t, device)) return t;
  return empty(t.sizes(), TensorOptions(t.dtype()).device(device));
}

void unstage(const Tensor& user, const Tensor& wire) {
  if (user.is_same(wire)) return;
  NoGradGuard no_grad;
  Tensor target = user;
  target.copy_(wire);
}

bool is_supported_dtype(ScalarType t) {
  return t == ScalarType::Float32 || t == ScalarType::Float64 || t == ScalarType::Int32 ||
         t == ScalarType::Int64;
}

}  // namespace glass::distributed
