// cuda/sim/tls.h — GLASS_SIM_TLS, the TLS model of the simulator's thread-locals (threadIdx,
// blockIdx, the kernel watch, a shared array's storage).
//
// local-exec: read with one instruction (%fs:offset) instead of a __tls_get_addr call, which
// in position-independent code would cost more than an elementwise kernel's whole body
// (c = a + b on 16M floats: 2x faster). The simulator is linked only into executables, where
// local-exec links. Not initial-exec there: GCC 12 with AVX-512 can load an initial-exec
// offset with `lea` + `vmovq`, a sequence binutils 2.40 cannot relax when it links the
// executable ("TLS transition ... failed").
//
// The one exception is a kernel the compiler generates at run time (compiler/cuda_codegen.cpp):
// it is a shared object dlopen()ed into the executable, built with -DGLASS_SIM_KERNEL_DSO, and
// reaches the executable's thread-locals initial-exec (one load of the offset from its GOT;
// a shared object's accesses are never relaxed, so the sequence above is no problem there).
// Such a kernel declares no thread-local of its own (no GLASS_SHARED array): one defined
// initial-exec in a dlopen()ed object takes glibc's small static TLS reserve for good.
// Invariant: every declaration of a simulator thread-local uses this macro.
#pragma once

#ifdef GLASS_SIM_KERNEL_DSO
#define GLASS_SIM_TLS __attribute__((tls_model("initial-exec")))
#else
#define GLASS_SIM_TLS __attribute__((tls_model("local-exec")))
#endif
