// autograd/view_functions.cpp — backward formulas of views, joins and indexing.
//
// Views and gathers move elements without changing them, so their Jacobians are 0/1
// matrices: the backward formula sends each gradient element back to the place its value
// came from (summing where one place fed several outputs), and the forward-mode rule
// applies the same op to the tangent. Views recorded here also remember their base, for
// Note [In-place ops in a graph] (inplace_functions.cpp).
//
// [SECTION] views   [SECTION] views through positions   [SECTION] joins and indexing
// [SECTION] registration
#include <algorithm>

#include "autograd/formula.h"
#include "autograd/functions.h"
#include "autograd/variable.h"
#include "core/ops/factories.h"
#include "core/ops/indexing.h"
#include "core/ops/join.h"
#include "core/ops/pointwise.h"
#include "core/ops/reduce.h"
#include "core/ops/views.h"

namespace glass::autograd {
namespace {

using F = FormulaNode;
constexpr DispatchKey K = DispatchKey::Autograd;

// y is a view of x that joined the graph: y keeps x's root base, and a non-leaf base keeps
// a weak list of its views (pruned as they die) so that an in-place write to it can refuse
// while they are alive.
const Tensor& as_view(const Tensor& y, const Tensor& x) {
  AutogradMeta* ym = get_meta(y);
  if (!ym || !ym->grad_fn) return y;  // forward mode only: no graph to keep right
  AutogradMeta* xm = get_meta(x);
  Tensor base = xm && xm->view_base.defined() ? xm->view_base : x;
  ym->view_base = base;
  AutogradMeta* bm = get_meta(base);
  if (bm && bm->grad_fn) {
    auto& views = bm->views;
    std::erase_if(views, [](const std::weak_ptr<TensorImpl>& v) { return v.expired(); });
    views.push_back(y.impl_ptr());
  }
  return y;
}

// [SECTION] views ----------------------------------------------------------------------------

// Shape changes that keep every element once (view, squeeze, unsqueeze): reshape back.
Tensor reshape_back(const char* name, const Tensor& y, const Tensor& x) {
  record(
      name, {x}, y, {},
      [](const F& n, const Tensor& g) -> tensor_list { return {g.reshape(n.shapes[0])}; },
      [](const F&, const JvpArgs& j) { return j.tangents[0].reshape(j.out.sizes()); });
  return as_view(y, x);
}

// Ops whose gradient is the incoming one: clone, casts, aliases — and expand, whose
// broadcast is summed back by FormulaNode (Note [sum_to]); record() fits the tangent to
// the output's shape and dtype, so identity serves as their forward-mode rule too.
Tensor pass_through(const char* name, const Tensor& y, const Tensor& x) {
  record(
      name, {x}, y, {}, [](const F&, const Tensor& g) -> tensor_list { return {g}; },
      [](const F&, const JvpArgs& j) { return j.tangents[0]; });
  return y;
}

Tensor view_autograd(const Tensor& x, IntArrayRef size) {
  return reshape_back("ViewBackward0", ops::view.redispatch(K, x, size), x);
}
Tensor squeeze_autograd(const Tensor& x, std::optional<int64_t> dim) {
  return reshape_back("SqueezeBackward0", ops::squeeze.redispatch(K, x, dim), x);
}
Tensor unsqueeze_autograd(const Tensor& x, int64_t dim) {
  return reshape_back("UnsqueezeBackward0", ops::unsqueeze.redispatch(K, x, dim), x);
}
Tensor expand_autograd(const Tensor& x, IntArrayRef size) {
  return as_view(pass_through("ExpandBackward0", ops::expand.redispatch(K, x, size), x), x);
}
Tensor alias_autograd(const Tensor& x) {
  return as_view(pass_through("AliasBackward0", ops::alias.redispatch(K, x), x), x);
}
Tensor clone_autograd(const Tensor& x) {
  return pass_through("CloneBackward0", ops::clone.redispatch(K, x), x);
}
// The gradient of a cast or a move between devices is the incoming one, cast back and
// moved back to x's device by FormulaNode.
Tensor to_copy_autograd(const Tensor& x, ScalarType dtype, Device device, bool non_blocking) {
  Tensor y = ops::to_copy.redispatch(K, x, dtype, device, non_blocking);
  return y.is_floating_point() ? pass_through("ToCopyBackward0", y, x) : y;
}

Tensor transpose_autograd(const Tensor& x, int64_t d0, int64_t d1) {
  Tensor y = ops::transpose.redispatch(K, x, d0, d1);
  record(
      "TransposeBackward0", {x}, y, {},
      [](const F& n, const Tensor& g) -> tensor_list {
        return {g.transpose(n.ints[0], n.ints[1])};
      },
      [](const F& n, const JvpArgs& j) { return j.tangents[0].transpose(n.ints[0], n.ints[1]); },
      [&](F& n) {
        n.ints = {d0, d1};
      });
  return as_view(y, x);
}

// t() records its own node, as PyTorch does; below 2 dims it is an alias, and so is g.t().
Tensor t_autograd(const Tensor& x) {
  Tensor y = ops::t.redispatch(K, x);
  record(
      "TBackward0", {x}, y, {}, [](const F&, const Tensor& g) -> tensor_list { return {g.t()}; },
      [](const F&, const JvpArgs& j) { return j.tangents[0].t(); });
  return as_view(y, x);
}

// A permute node's ints = {inverse permutation..., the permutation...}.
Shape permutation(const F& n, bool forward) {
  size_t k = n.ints.size() / 2;
  return Shape(n.ints.begin() + (forward ? k : 0), n.ints.begin() + (forward ? 2 * k : k));
}

Tensor permute_autograd(const Tensor& x, IntArrayRef dims) {
  Tensor y = ops::permute.redispatch(K, x, dims);
  record(
      "PermuteBackward0", {x}, y, {},
      [](const F& n, const Tensor& g) -> tensor_list { return {g.permute(permutation(n, false))}; },
      [](const F& n, const JvpArgs& j) { return j.tangents[0].permute(permutation(n, true)); },
      [&](F& n) {
        size_t k = dims.size();
        n.ints.assign(2 * k, 0);
        for (size_t i = 0; i < k; ++i) {
          int64_t d = wrap_dim(dims[i], x.dim(), "permute");
          n.ints[d] = static_cast<int64_t>(i);
          n.ints[k + i] = d;
        }
      });
  return as_view(y, x);
}

// Places g (the gradient of x.slice(dim, start, ..., step)) into zeros of x's shape with
// differentiable ops only: interleave with zeros for step > 1, then pad with cat.
Tensor slice_backward(const Tensor& g, IntArrayRef shape, int64_t dim, int64_t start,
                      int64_t step) {
  Tensor core = g;
  int64_t n = shape[dim];
  if (step > 1 && g.size(dim) > 0) {
    std::vector<Tensor> parts{g.unsqueeze(dim + 1)};
    for (int64_t k = 1; k < step; ++k) parts.push_back(zeros_like(g).unsqueeze(dim + 1));
    core = cat(parts, dim + 1).flatten(dim, dim + 1);
    core = core.narrow(dim, 0, std::min(core.size(dim), n - start));
  }
  auto zeros_of_length = [&](int64_t len) {
    Shape s = g.sizes().vec();
    s[dim] = len;
    return zeros(s, g.options());
  };
  std::vector<Tensor> pieces;
  if (start > 0) pieces.push_back(zeros_of_length(start));
  pieces.push_back(core);
  int64_t after = n - start - core.size(dim);
  if (after > 0) pieces.push_back(zeros_of_length(after));
  return pieces.size() == 1 ? core : cat(pieces, dim);
}

Tensor slice_autograd(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  Tensor y = ops::slice.redispatch(K, x, dim, start, end, step);
  record(
      "SliceBackward0", {x}, y, {},
      [](const F& n, const Tensor& g) -> tensor_list {
        return {slice_backward(g, n.shapes[0], n.ints[0], n.ints[1], n.ints[2])};
      },
      [](const F& n, const JvpArgs& j) {
        int64_t d = n.ints[0], s = n.ints[1], step = n.ints[2], len = j.out.size(d);
        return j.tangents[0].slice(d, s, len == 0 ? s : s + (len - 1) * step + 1, step);
      },
      [&](F& n) {
        int64_t d = wrap_dim(dim, x.dim(), "slice"), size = x.size(d);
        int64_t s = start < 0 ? start + size : start;  // the start slice() actually used
        n.ints = {d, std::clamp<int64_t>(s, 0, size), step};
      });
  return as_view(y, x);
}

Tensor select_autograd(const Tensor& x, int64_t dim, int64_t index) {
  Tensor y = ops::select.redispatch(K, x, dim, index);
  record(
      "SelectBackward0", {x}, y, {},
      [](const F& n, const Tensor& g) -> tensor_list {
        return {slice_backward(g.unsqueeze(n.ints[0]), n.shapes[0], n.ints[0], n.ints[1], 1)};
      },
      [](const F& n, const JvpArgs& j) { return j.tangents[0].select(n.ints[0], n.ints[1]); },
      [&](F& n) {
        int64_t d = wrap_dim(dim, x.dim(), "select");
        n.ints = {d, index < 0 ? index + x.size(d) : index};
      });
  return as_view(y, x);
}

// [SECTION] views through positions ---------------------------------------------------------
//
// Note [Backward of a view through positions]
// Any view picks elements of its input. Apply the same view to a tensor holding each
// element's position (0, 1, 2, ... in x's shape) and you learn, for every output element,
// where it came from; the backward then adds each gradient element into that position.
// Overlapping views (unfold with step < size) add several gradients into one position,
// which is the sum the chain rule asks for. One formula serves diagonal and unfold.
Tensor scatter_to_positions(const Tensor& g, const Tensor& positions, int64_t numel) {
  Tensor flat = zeros({numel}, g.options());
  flat.index_put_({positions.reshape({-1})}, g.reshape({-1}), /*accumulate=*/true);
  return flat;
}

template <Tensor (*View)(const F& n, const Tensor& x)>
tensor_list view_backward_by_positions(const F& n, const Tensor& g) {
  IntArrayRef shape = n.shapes[0];
  int64_t numel = 1;
  for (int64_t s : shape) numel *= s;
  Tensor positions = View(n, arange(numel, TensorOptions(kInt64).device(g.device())).view(shape));
  return {scatter_to_positions(g, positions, numel).view(shape)};
}

template <Tensor (*View)(const F& n, const Tensor& x)>
Tensor view_jvp(const F& n, const JvpArgs& j) {
  return View(n, j.tangents[0]);
}

Tensor diagonal_of(const F& n, const Tensor& x) {
  return x.diagonal(n.ints[0], n.ints[1], n.ints[2]);
}
Tensor unfold_of(const F& n, const Tensor& x) { return x.unfold(n.ints[0], n.ints[1], n.ints[2]); }

Tensor diagonal_autograd(const Tensor& x, int64_t offset, int64_t d1, int64_t d2) {
  Tensor y = ops::diagonal.redispatch(K, x, offset, d1, d2);
  record("DiagonalBackward0", {x}, y, {}, view_backward_by_positions<diagonal_of>,
         view_jvp<diagonal_of>, [&](F& n) {
           n.ints = {offset, d1, d2};
         });
  return as_view(y, x);
}

Tensor unfold_autograd(const Tensor& x, int64_t dim, int64_t size, int64_t step) {
  Tensor y = ops::unfold.redispatch(K, x, dim, size, step);
  record("UnfoldBackward0", {x}, y, {}, view_backward_by_positions<unfold_of>, view_jvp<unfold_of>,
         [&](F& n) {
           n.ints = {dim, size, step};
         });
  return as_view(y, x);
}

// as_strided addresses the storage directly, so its positions are storage slots: the
// gradient is summed into the slots the output read, then read back through x's own
// geometry. If x itself reads a slot more than once (an expanded x), the slot's gradient
// is shared evenly among those reads, as PyTorch does. ints = {storage numel, x's ndim,
// x's sizes, x's strides, x's offset, then the same for the output}.
struct Geometry {
  Shape sizes, strides;
  int64_t offset;
};
Geometry geometry_at(const F& n, size_t& i) {
  int64_t nd = n.ints[i++];
  Geometry gm;
  gm.sizes.assign(n.ints.begin() + i, n.ints.begin() + i + nd);
  gm.strides.assign(n.ints.begin() + i + nd, n.ints.begin() + i + 2 * nd);
  i += 2 * nd;
  gm.offset = n.ints[i++];
  return gm;
}
void push_geometry(F& n, IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  n.ints.push_back(static_cast<int64_t>(sizes.size()));
  n.ints.insert(n.ints.end(), sizes.begin(), sizes.end());
  n.ints.insert(n.ints.end(), strides.begin(), strides.end());
  n.ints.push_back(offset);
}

tensor_list as_strided_backward(const F& n, const Tensor& g) {
  size_t i = 1;
  Geometry in = geometry_at(n, i), out = geometry_at(n, i);
  int64_t slots = n.ints[0];
  TensorOptions index_options = TensorOptions(kInt64).device(g.device());  // beside g
  Tensor slot = arange(slots, index_options);
  Tensor slot_of_out = slot.as_strided(out.sizes, out.strides, out.offset);
  Tensor slot_of_in = slot.as_strided(in.sizes, in.strides, in.offset);
  Tensor per_slot = scatter_to_positions(g, slot_of_out, slots);
  Tensor gx = per_slot.index({slot_of_in});
  Tensor reads = scatter_to_positions(ones(in.sizes, index_options), slot_of_in, slots);
  // Divide even where every slot is read once (x / 1 is exact): asking reads.amax() first
  // would read a device value on the host, a sync point in every backward.
  return {gx / reads.index({slot_of_in})};
}

Tensor as_strided_autograd(const Tensor& x, IntArrayRef size, IntArrayRef stride, int64_t offset) {
  Tensor y = ops::as_strided.redispatch(K, x, size, stride, offset);
  record("AsStridedBackward0", {x}, y, {}, as_strided_backward, nullptr, [&](F& n) {
    int64_t slots =
        static_cast<int64_t>(x.unsafeGetTensorImpl()->storage().nbytes() / element_size(x.dtype()));
    n.ints = {slots};
    push_geometry(n, x.sizes(), x.strides(), x.storage_offset());
    push_geometry(n, y.sizes(), y.strides(), y.storage_offset());
  });
  return as_view(y, x);
}

// [SECTION] joins and indexing ---------------------------------------------------------------

Tensor cat_autograd(TensorList tensors, int64_t dim) {
  Tensor y = ops::cat.redispatch(K, tensors, dim);
  record(
      "CatBackward0", tensors, y, {},
      [](const F& n, const Tensor& g) -> tensor_list {
        tensor_list out;
        int64_t d = n.ints[0], offset = 0;
        for (const DimVector& s : n.shapes) {
          bool legacy_empty = s.size() == 1 && s[0] == 0 && g.dim() != 1;  // skipped by cat
          int64_t len = legacy_empty ? 0 : s[d];
          out.push_back(legacy_empty ? Tensor() : g.narrow(d, offset, len));
          offset += len;
        }
        return out;
      },
      [](const F& n, const JvpArgs& j) {  // the tangents, joined the same way (0 where none)
        std::vector<Tensor> parts;
        for (size_t i = 0; i < j.inputs.size(); ++i) parts.push_back(j.tangent_or_zeros(i));
        return cat(parts, n.ints[0]);
      },
      [&](F& n) { n.ints = {wrap_dim(dim, y.dim(), "cat")}; });
  return y;
}

// The gradient of x.gather(dim, index): each element goes back to the place it was read
// from; places read twice get both.
Tensor gather_autograd(const Tensor& x, int64_t dim, const Tensor& index) {
  Tensor y = ops::gather.redispatch(K, x, dim, index);
  record(
      "GatherBackward0", {x}, y, {{index}},
      [](const F& n, const Tensor& g) -> tensor_list {
        return {zeros(n.shapes[0], g.options()).scatter_add(n.ints[0], n.get(0), g)};
      },
      [](const F& n, const JvpArgs& j) { return j.tangents[0].gather(n.ints[0], n.get(0)); },
      [&](F& n) { n.ints = {wrap_dim(dim, x.dim(), "gather")}; });
  return y;
}

// Advanced indexing (index_select, masks, integer arrays): scatter back, accumulating.
Tensor index_autograd(const Tensor& x, TensorList indices) {
  Tensor y = ops::index.redispatch(K, x, indices);
  record(
      "IndexBackward0", {x}, y, saves_of(indices),
      [](const F& n, const Tensor& g) -> tensor_list {
        Tensor gx = zeros(n.shapes[0], g.options());
        gx.index_put_(n.get_all(), g, /*accumulate=*/true);
        return {gx};
      },
      [](const F& n, const JvpArgs& j) { return j.tangents[0].index(n.get_all()); });
  return y;
}

// t with the reduced dim put back (ints = {dim, keepdim}).
Tensor keep(const F& n, const Tensor& t) { return n.ints[1] ? t : t.unsqueeze(n.ints[0]); }

// max(dim) / min(dim): the gradient goes to the element the index output names.
std::tuple<Tensor, Tensor> max_dim_autograd(const Tensor& x, int64_t dim, bool keepdim,
                                            bool is_max) {
  auto [values, indices] = ops::max_dim.redispatch(K, x, dim, keepdim, is_max);
  if (!values.is_floating_point()) return {values, indices};
  record(
      is_max ? "MaxBackward0" : "MinBackward0", {x}, values, {{indices}},
      [](const F& n, const Tensor& g) -> tensor_list {
        return {
            zeros(n.shapes[0], g.options()).scatter_add(n.ints[0], keep(n, n.get(0)), keep(n, g))};
      },
      [](const F& n, const JvpArgs& j) {
        Tensor t = j.tangents[0].gather(n.ints[0], keep(n, n.get(0)));
        return n.ints[1] ? t : t.squeeze(n.ints[0]);
      },
      [&](F& n) {
        n.ints = {wrap_dim(dim, x.dim(), "max"), keepdim};
      });
  return {values, indices};
}

}  // namespace

// [SECTION] registration --------------------------------------------------------------------

void register_view_handlers() {
  ops::to_copy.register_handler(K, &to_copy_autograd);
  ops::view.register_handler(K, &view_autograd);
  ops::transpose.register_handler(K, &transpose_autograd);
  ops::t.register_handler(K, &t_autograd);
  ops::permute.register_handler(K, &permute_autograd);
  ops::expand.register_handler(K, &expand_autograd);
  ops::squeeze.register_handler(K, &squeeze_autograd);
  ops::unsqueeze.register_handler(K, &unsqueeze_autograd);
  ops::slice.register_handler(K, &slice_autograd);
  ops::select.register_handler(K, &select_autograd);
  ops::alias.register_handler(K, &alias_autograd);
  ops::clone.register_handler(K, &clone_autograd);
  ops::diagonal.register_handler(K, &diagonal_autograd);
  ops::unfold.register_handler(K, &unfold_autograd);
  ops::as_strided.register_handler(K, &as_strided_autograd);
  ops::cat.register_handler(K, &cat_autograd);
  ops::gather.register_handler(K, &gather_autograd);
  ops::index.register_handler(K, &index_autograd);
  ops::max_dim.register_handler(K, &max_dim_autograd);
  // Not differentiable (integer results): pass through.
  ops::nonzero.register_handler(K, [](const Tensor& x) { return ops::nonzero.redispatch(K, x); });
}

}  // namespace glass::autograd
