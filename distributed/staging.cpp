// distributed/staging.cpp — the contiguous, on-device copies a transport needs.
//
// Invariants: every copy here runs with grad mode off (a parameter's .grad or a leaf that
// requires grad is written in place, which autograd would otherwise refuse); a collective
// moves a tensor's version the same whether it was staged or not: not at all.
#include "distributed/staging.h"

#include "core/grad_mode.h"
#include "core/ops/factories.h"
#include "core/ops/pointwise.h"

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
  // The copy back is the transport's write, finished: like the transport writing into
  // `user` directly (the unstaged case), it leaves the version alone. FSDP refills a
  // parameter autograd saved in forward with an all-gather before backward; through a host
  // copy (a CUDA tensor on gloo) a bump would make that saved tensor look modified.
  NoGradGuard no_grad;
  detail::copy_into(user, wire);
}

bool is_supported_dtype(ScalarType t) {
  return t == ScalarType::Float32 || t == ScalarType::Float64 || t == ScalarType::Int32 ||
         t == ScalarType::Int64;
}

}  // namespace glass::distributed
