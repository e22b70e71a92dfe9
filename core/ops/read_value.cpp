// core/ops/read_value.cpp — item and print as dispatched ops (see read_value.h).
#include "core/ops/read_value.h"

#include "core/dispatcher.h"

namespace glass {
namespace {

Scalar item_native(const Tensor& self) {
  GLASS_CHECK(self.numel() == 1, "item(): a Tensor with ", self.numel(),
              " elements cannot be converted to a Scalar (shape ", self.sizes(),
              "); item() needs exactly one element");
  Tensor c = self.is_cpu() ? self : self.cpu();  // the sync point: waits for the device
  return dispatch_dtype(self.dtype(), "item", [&]<class T>() -> Scalar {
    return Scalar(*static_cast<const T*>(c.data_ptr()));
  });
}

void print_native(const Tensor&) {}

}  // namespace

namespace ops {
Op<Scalar(const Tensor&)> item("item", &item_native, kReadsValueOp);
Op<void(const Tensor&)> print("print", &print_native, kReadsValueOp);
namespace {
const bool registered = dispatch::register_ops({&item, &print});
}  // namespace
}  // namespace ops

}  // namespace glass
