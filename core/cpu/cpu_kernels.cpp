// core/cpu/cpu_kernels.cpp — the CPU backend's kernel table.
#include "core/cpu/cpu_kernels.h"

namespace glass::cpu {

const DeviceKernels* cpu_kernels() {
  static const DeviceKernels table{
      .copy = copy_kernel,
      .cross_device_copy = nullptr,  // the CPU never initiates one; cuda/ does
      .fill = fill_kernel,
      .unary = unary_kernel,
      .binary = binary_kernel,
      .clamp = clamp_kernel,
      .where = where_kernel,
      .masked_fill = masked_fill_kernel,
      .reduce = reduce_kernel,
      .arg_reduce = arg_reduce_kernel,
      .softmax = softmax_kernel,
      .bmm = bmm_kernel,
      .index = index_kernel,
      .index_put = index_put_kernel,
      .nonzero = nonzero_kernel,
      .uniform = uniform_kernel,
      .normal = normal_kernel,
      .random_int = random_int_kernel,
  };
  return &table;
}

}  // namespace glass::cpu
