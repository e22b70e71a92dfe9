#!/usr/bin/env python3
# bench/torchscript_chain.py — TorchScript's fuser on the seed chain, beside PyTorch's eager
# mode in the same run: the reference for bench_compile's "seed chain" rows (glass::compile
# against glass eager), as issue 13 asks where Debian's python3-torch is installed.
#
#   /usr/bin/python3 bench/torchscript_chain.py [--threads N] [--repeats R]
#
# The chain ((a*b + a) * 0.5 - b).relu().sigmoid() on 16M float32, as bench_compile. TorchScript's
# CPU fuser (NNC, the TensorExpr fuser of PyTorch 1.13) is off by default on the CPU; it is
# turned on here, and the script reads the optimized graph to say whether it really holds a
# fusion group. NNC generates CPU code through LLVM; a torch built without LLVM (Debian's
# 1.13.1 is) cannot fuse on the CPU at all, and then the script says so and times the
# scripted chain unfused. Not a build or test dependency: without torch it says so and exits 0.
import argparse
import sys
import time


def best_of(fn, repeats):
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--numel", type=int, default=1 << 24)
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        print("torchscript_chain: no torch module (apt install python3-torch); nothing to measure")
        return 0

    torch.set_num_threads(args.threads)
    torch._C._jit_override_can_fuse_on_cpu(True)
    torch._C._jit_set_texpr_fuser_enabled(True)

    def chain(a, b):
        return ((a * b + a) * 0.5 - b).relu().sigmoid()

    scripted = torch.jit.script(chain)
    a = torch.empty(args.numel).uniform_(-1, 1)
    b = torch.empty(args.numel).uniform_(-1, 1)
    why_unfused = ""
    with torch.no_grad():
        try:
            for _ in range(3):  # the profiling executor specializes after two runs
                scripted(a, b)
        except RuntimeError as e:  # "LLVM Backend not found": no CPU code generator
            why_unfused = f"NNC cannot generate CPU code in this torch ({e})"
            torch._C._jit_set_texpr_fuser_enabled(False)
            scripted = torch.jit.script(chain)
            for _ in range(3):
                scripted(a, b)
        graph = str(torch.jit.last_executed_optimized_graph())
        fused = "prim::TensorExprGroup" in graph or "prim::FusionGroup" in graph
        if not fused and not why_unfused:
            why_unfused = "the optimized graph holds no fusion group"
        torch.testing.assert_close(scripted(a, b), chain(a, b))
        eager = best_of(lambda: chain(a, b), args.repeats)
        script = best_of(lambda: scripted(a, b), args.repeats)
        copy = best_of(lambda: a.clone(), args.repeats)
    mib = args.numel * 4 / 2**20
    print(f"torch {torch.__version__}, {args.threads} threads, {args.numel} float32 "
          f"({mib:.0f} MiB per array), best of {args.repeats}")
    print(f"  eager chain            {eager * 1e3:8.2f} ms")
    label = "TorchScript (fused)  " if fused else "TorchScript (unfused)"
    print(f"  {label}  {script * 1e3:8.2f} ms   {eager / script:5.2f}x eager")
    print(f"  a.clone() (2 arrays)   {copy * 1e3:8.2f} ms   "
          f"the scripted chain moves 3 arrays at {1.5 * copy / script:4.2f}x clone's bandwidth")
    if why_unfused:
        print(f"  not fused: {why_unfused}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
