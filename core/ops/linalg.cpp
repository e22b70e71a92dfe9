// core/ops/linalg.cpp — matmul and its strict forms (see linalg.h).
#include "core/ops/linalg.h"

#include "core/device_kernels.h"
#include "core/ops/factories.h"
#include "core/ops/pointwise.h"
#include "core/ops/views.h"
#include "core/shape.h"

namespace glass {
namespace {

std::string shape_str(const Tensor& t) {
  std::string s;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (d) s += 'x';
    s += std::to_string(t.size(d));
  }
  return s;
}

void check_pair(const Tensor& a, const Tensor& b, const char* op) {
  GLASS_CHECK(a.defined() && b.defined(), op, "(): expected defined tensors");
  GLASS_CHECK(a.dtype() == b.dtype(), op,
              "(): expected both operands to have the same dtype, but got ", to_string(a.dtype()),
              " and ", to_string(b.dtype()), " (convert one with .to())");
  GLASS_CHECK(a.dtype() != kBool, op, "(): not implemented for 'Bool'");
  GLASS_CHECK(a.device() == b.device(), op,
              "(): expected both operands on the same device, but got ", a.device(), " and ",
              b.device());
}

Tensor bmm_native(const Tensor& a, const Tensor& b) {
  check_pair(a, b, "bmm");
  GLASS_CHECK(a.dim() == 3 && b.dim() == 3, "bmm(): expected 3-D tensors, got ", a.dim(), "-D and ",
              b.dim(), "-D (use matmul for broadcasting)");
  GLASS_CHECK(a.size(0) == b.size(0), "bmm(): batch sizes differ: ", a.sizes(), " and ", b.sizes());
  GLASS_CHECK(a.size(2) == b.size(1), "bmm(): batch1 and batch2 shapes cannot be multiplied (",
              shape_str(a), " and ", shape_str(b), ")");
  Tensor out = empty({a.size(0), a.size(1), b.size(2)}, a.options());
  kernels_for(a.device()).bmm(a, b, out, 0, 1);
  return out;
}

Tensor mm_native(const Tensor& a, const Tensor& b) {
  check_pair(a, b, "mm");
  GLASS_CHECK(a.dim() == 2 && b.dim() == 2, "mm(): expected 2-D tensors, got ", a.dim(), "-D and ",
              b.dim(), "-D (use matmul for other ranks)");
  GLASS_CHECK(a.size(1) == b.size(0), "mm(): mat1 and mat2 shapes cannot be multiplied (",
              shape_str(a), " and ", shape_str(b), ")");
  Tensor out = empty({a.size(0), b.size(1)}, a.options());
  kernels_for(a.device()).bmm(a.unsqueeze(0), b.unsqueeze(0), out.unsqueeze(0), 0, 1);
  return out;
}

Tensor addmm_native(const Tensor& self, const Tensor& m1, const Tensor& m2, const Scalar& beta,
                    const Scalar& alpha) {
  check_pair(m1, m2, "addmm");
  GLASS_CHECK(self.defined(), "addmm(): expected a defined self");
  GLASS_CHECK(m1.dim() == 2 && m2.dim() == 2, "addmm(): expected 2-D matrices, got ", m1.dim(),
              "-D and ", m2.dim(), "-D");
  GLASS_CHECK(m1.size(1) == m2.size(0), "addmm(): mat1 and mat2 shapes cannot be multiplied (",
              shape_str(m1), " and ", shape_str(m2), ")");
  GLASS_CHECK(self.device() == m1.device(), "addmm(): expected self on the matrices' device, ",
              m1.device(), ", but it is on ", self.device());
  GLASS_CHECK(self.dtype() == m1.dtype(), "addmm(): expected self to have dtype ",
              to_string(m1.dtype()), ", got ", to_string(self.dtype()));
  Shape mn = {m1.size(0), m2.size(1)};
  GLASS_CHECK(is_expandable_to(self.sizes(), mn), "addmm(): self of shape ", self.sizes(),
              " cannot be broadcast to the product's shape ", IntArrayRef(mn));
  Tensor out = empty(mn, m1.options());
  if (beta.toDouble() != 0) detail::copy_into(out, self.expand(mn));
  kernels_for(m1.device()).bmm(m1.unsqueeze(0), m2.unsqueeze(0), out.unsqueeze(0), beta, alpha);
  return out;
}

}  // namespace

namespace ops {
Op<Tensor(const Tensor&, const Tensor&)> mm("mm", &mm_native);
Op<Tensor(const Tensor&, const Tensor&)> bmm("bmm", &bmm_native);
Op<Tensor(const Tensor&, const Tensor&, const Tensor&, const Scalar&, const Scalar&)> addmm(
    "addmm", &addmm_native);
namespace {
const bool registered = dispatch::register_ops({&mm, &bmm, &addmm});
}  // namespace
}  // namespace ops

Tensor mm(const Tensor& a, const Tensor& b) { return ops::mm(a, b); }
Tensor bmm(const Tensor& a, const Tensor& b) { return ops::bmm(a, b); }
Tensor addmm(const Tensor& self, const Tensor& m1, const Tensor& m2, const Scalar& beta,
             const Scalar& alpha) {
  return ops::addmm(self, m1, m2, beta, alpha);
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  GLASS_CHECK(a.defined() && b.defined(), "matmul(): expected defined tensors");
  GLASS_CHECK(a.dim() >= 1 && b.dim() >= 1,
              "matmul(): both arguments to matmul need to be at least 1D, "
              "but they are ",
              a.dim(), "D and ", b.dim(), "D (use mul() or * for scalars)");
  int64_t ka = a.size(-1), kb = b.dim() == 1 ? b.size(0) : b.size(-2);
  GLASS_CHECK(ka == kb, "matmul(): shapes cannot be multiplied (", shape_str(a), " and ",
              shape_str(b), "): the last dim of the first (", ka, ") must equal the ",
              (b.dim() == 1 ? "only" : "second-to-last"), " dim of the second (", kb, ")");
  if (a.dim() == 1 && b.dim() == 1) return ops::mm(a.unsqueeze(0), b.unsqueeze(1)).view({});
  if (a.dim() == 2 && b.dim() == 1) return ops::mm(a, b.unsqueeze(1)).squeeze(1);
  if (a.dim() == 1 && b.dim() == 2) return ops::mm(a.unsqueeze(0), b).squeeze(0);
  if (a.dim() == 2 && b.dim() == 2) return ops::mm(a, b);
  if (a.dim() >= 3 && b.dim() <= 2) {
    // (..., M, K) @ (K, N): fold the batch into M and do one mm, as PyTorch does.
    Tensor b2 = b.dim() == 1 ? b.unsqueeze(1) : b;
    Shape out_shape = a.sizes().vec();
    out_shape.back() = b2.size(1);
    Tensor out = ops::mm(a.reshape({-1, ka}), b2).view(out_shape);
    return b.dim() == 1 ? out.squeeze(-1) : out;
  }
  // General case: broadcast the batch dims, then one bmm.
  Tensor a2 = a.dim() == 1 ? a.unsqueeze(0) : a;
  Tensor b2 = b.dim() == 1 ? b.unsqueeze(1) : b;
  IntArrayRef ab = a2.sizes().slice(0, a2.dim() - 2), bb = b2.sizes().slice(0, b2.dim() - 2);
  Shape batch = broadcast_shapes(ab, bb, "matmul");
  int64_t m = a2.size(-2), n = b2.size(-1), nbatch = 1;
  for (int64_t s : batch) nbatch *= s;
  Shape ea = batch, eb = batch;
  ea.insert(ea.end(), {m, ka});
  eb.insert(eb.end(), {kb, n});
  Tensor out =
      ops::bmm(a2.expand(ea).reshape({nbatch, m, ka}), b2.expand(eb).reshape({nbatch, kb, n}));
  Shape out_shape = batch;
  if (a.dim() > 1) out_shape.push_back(m);
  if (b.dim() > 1) out_shape.push_back(n);
  return out.view(out_shape);
}

Tensor Tensor::matmul(const Tensor& other) const { return glass::matmul(*this, other); }
Tensor Tensor::mm(const Tensor& mat2) const { return ops::mm(*this, mat2); }
Tensor Tensor::bmm(const Tensor& mat2) const { return ops::bmm(*this, mat2); }
Tensor Tensor::addmm(const Tensor& m1, const Tensor& m2, const Scalar& beta,
                     const Scalar& alpha) const {
  return ops::addmm(*this, m1, m2, beta, alpha);
}

}  // namespace glass
