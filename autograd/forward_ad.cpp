// autograd/forward_ad.cpp — dual levels and where tangents are kept.
//
// A tangent lives in the tensor's AutogradMeta (fw_grad), and TensorImpl's
// has_forward_grad flag tells the dispatcher to send ops on it through the Autograd key.
// Every tensor given a tangent is listed (weakly) so that leaving the level can strip it.
#include "autograd/forward_ad.h"

#include <memory>
#include <mutex>
#include <vector>

#include "autograd/formula.h"
#include "autograd/variable.h"
#include "core/error.h"
#include "core/ops/views.h"

namespace glass::autograd {
namespace {

struct LevelState {
  std::mutex mutex;
  bool active = false;
  std::vector<std::weak_ptr<TensorImpl>> duals;
};
LevelState& level_state() {
  static LevelState state;
  return state;
}

}  // namespace

Tensor tangent_of(const Tensor& t) {
  if (!t.defined() || !t.unsafeGetTensorImpl()->has_forward_grad()) return Tensor();
  AutogradMeta* m = get_meta(t);
  return m ? m->fw_grad : Tensor();
}

// Attaches `tangent` to `t` (called by record() for op outputs and by make_dual).
void set_tangent(const Tensor& t, const Tensor& tangent) {
  LevelState& s = level_state();
  std::lock_guard<std::mutex> lock(s.mutex);
  GLASS_INTERNAL_ASSERT(s.active, "set_tangent outside a dual level");
  materialize_meta(t).fw_grad = tangent;
  t.unsafeGetTensorImpl()->set_has_forward_grad(true);
  s.duals.push_back(t.impl_ptr());
}

namespace forward_ad {

DualLevel::DualLevel() {
  LevelState& s = level_state();
  std::lock_guard<std::mutex> lock(s.mutex);
  GLASS_CHECK(!s.active,
              "forward_ad::DualLevel: a dual level is already active; nested levels are not "
              "supported (compute nested derivatives with reverse mode, or one level at a time)");
  s.active = true;
}

DualLevel::~DualLevel() {
  LevelState& s = level_state();
  std::lock_guard<std::mutex> lock(s.mutex);
  for (const auto& weak : s.duals) {
    if (auto impl = weak.lock()) {
      impl->set_has_forward_grad(false);
      if (auto* m = static_cast<AutogradMeta*>(impl->autograd_meta())) m->fw_grad = Tensor();
    }
  }
  s.duals.clear();
  s.active = false;
}

bool DualLevel::active() {
  LevelState& s = level_state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.active;
}

Tensor make_dual(const Tensor& primal, const Tensor& tangent) {
  GLASS_CHECK(DualLevel::active(),
              "make_dual(): no dual level is active; create a "
              "glass::autograd::forward_ad::DualLevel guard first");
  GLASS_CHECK(primal.defined() && tangent.defined(), "make_dual(): expected defined tensors");
  GLASS_CHECK(primal.is_floating_point(), "make_dual(): expected a floating-point primal, got ",
              to_string(primal.dtype()));
  GLASS_CHECK(tangent.sizes() == primal.sizes(), "make_dual(): the tangent has shape ",
              tangent.sizes(), " but the primal has shape ", primal.sizes(), "; they must match");
  GLASS_CHECK(tangent.dtype() == primal.dtype(), "make_dual(): the tangent has dtype ",
              to_string(tangent.dtype()), " but the primal has dtype ", to_string(primal.dtype()),
              "; convert it with .to(", to_string(primal.dtype()), ")");
  GLASS_CHECK(tangent_of(primal).defined() == false,
              "make_dual(): the primal already carries a tangent (it is a dual tensor); use "
              "unpack_dual(x).primal");
  Tensor dual = primal.detach();
  if (primal.requires_grad()) dual = ops::alias(primal);  // keep reverse-mode history
  set_tangent(dual, tangent);
  return dual;
}

UnpackedDual unpack_dual(const Tensor& t) {
  GLASS_CHECK(t.defined(), "unpack_dual(): expected a defined tensor");
  return {t.detach(), tangent_of(t)};
}

}  // namespace forward_ad
}  // namespace glass::autograd
