// lessons/06_training/exercises/exercises.h — the functions you write in lesson 06.
//
// Write them in student.cpp; solution.cpp is the reference that CI grades. To test your
// own file:
//   cmake -B build -DGLASS_EXERCISES=student && cmake --build build && ctest --test-dir build -L
//   exercises
// Use what lessons 01 to 06 teach: tensor ops and views, reductions (amax, amin, sum,
// mean), comparisons and broadcasting, where, NoGradGuard, in-place ops (add_, mul_, sub_,
// copy_), .grad(), nn modules (Sequential, its forward, train()/eval()), F::cross_entropy,
// an optimizer's zero_grad()/step(), and iterating a DataLoader. Not argmax, argmin,
// max(dim), min(dim) or the device's arg-reduce kernel (kernels_for()) in exercise 1
// (finding each row's first maximum is the exercise),
// no optimizer of glass::optim in exercise 2 (the tests compare you with optim::SGD), and
// in exercise 4 neither glass::optim nor the clipping functions (nn::utils::clip_grad_norm_,
// clip_grad_value_ and their pieces, distributed's clip_grad_norm_): the tests read your
// compiled file and fail with "exercise N must not call X" when you call one.
#pragma once

#include <glass/glass.h>

#include <cstdint>
#include <vector>

namespace glass::lesson06 {

// Exercise 1 — accuracy from logits.
// logits: (N, C) floating point, one row of class scores per example (any strides: the
// tests pass transposed views); labels: (N) int64, each in [0, C). N >= 1.
// Returns the fraction of rows whose predicted class equals the label, in [0, 1]. The
// predicted class is the index of the row's largest score; when several scores tie for
// the largest, the *lowest* such index is the prediction (argmax's rule, and PyTorch's).
// Throws glass::Error when logits is not 2-D or labels' length differs from N. Must not
// record a graph, even when logits requires grad.
double accuracy(const Tensor& logits, const Tensor& labels);

// Exercise 2 — one step of SGD with momentum, by hand (what optim::SGD does).
// params: leaves that require grad; buffers: the momentum buffers, one per parameter
// (buffers.size() == params.size()), an undefined Tensor() until that parameter's first
// update. For every parameter p whose p.grad() is defined (skip the others, and leave
// their buffer alone):
//     g   = p.grad() + weight_decay * p
//     buf = g                          on p's first update (a copy: not g itself)
//     buf = momentum * buf + g         on later updates
//     p   = p - lr * buf               in place: p stays the same tensor
// Everything under NoGradGuard: the update must not become part of any graph.
void sgd_momentum_step(const std::vector<Tensor>& params, std::vector<Tensor>& buffers, double lr,
                       double momentum, double weight_decay = 0);

// Exercise 3 — one epoch of training.
// model maps a batch (B, ...) to logits (B, C); every batch of loader has data (B, ...) and
// target (B) int64. Puts the model in training mode, then runs one epoch of the loader
// (one `for (data::Example& batch : loader)` loop) and, for every batch:
//     optimizer.zero_grad() → logits = model(batch.data) →
//     loss = F::cross_entropy(logits, batch.target) → loss.backward() → optimizer.step()
// Returns the mean loss per *example* over the epoch: sum over batches of
// loss.item() * B, divided by the number of examples (so a short last batch counts for
// what it holds), each batch's loss taken before its step.
double train_one_epoch(nn::Sequential& model, data::DataLoader& loader,
                       optim::Optimizer& optimizer);

// Exercise 4 — a learning-rate schedule, and one SGD step with gradients clipped by their
// global norm (what a transformer's training loop does around a plain optimizer step).
//
// The schedule: linear warmup to the peak `lr`, then cosine decay to `min_lr`.
// Requires 0 <= warmup < total.
struct Schedule {
  double lr;       // the peak learning rate, reached at the end of the warmup
  int64_t warmup;  // how many steps the warmup lasts (0: none)
  int64_t total;   // the step at which the decay ends; from there on, min_lr
  double min_lr;   // where the decay ends
};

// The learning rate of step `step`, counted from 0 (the number of steps taken before it):
//     step <  warmup:          lr * (step + 1) / warmup
//     warmup <= step < total:  min_lr + (lr - min_lr) * (1 + cos(pi * t)) / 2,
//                              where t = (step - warmup) / (total - warmup), in [0, 1)
//     step >= total:           min_lr
// So step 0 already moves (by lr / warmup), step warmup - 1 and step warmup both use the
// peak lr, and the decay reaches min_lr at step `total`. With lr 0.1, warmup 4, total 12,
// min_lr 0.01: steps 0, 1, 2, 3, 4 give 0.025, 0.05, 0.075, 0.1, 0.1; step 8 (t = 1/2)
// gives 0.055; step 12 and later 0.01. Throws glass::Error when step < 0, warmup < 0 or
// total <= warmup.
double scheduled_lr(int64_t step, const Schedule& schedule);

// One step, in this order, for the parameters p in params whose p.grad() is defined (the
// others take no part: they count for nothing in the norm and do not move):
//     norm = sqrt(sum over those p of sum(p.grad()^2))   — all gradients as one vector
//     coef = max_norm / (norm + 1e-6)
//     if coef < 1: p.grad() *= coef, in place, for every p   — the same factor for all
//     p -= scheduled_lr(step, schedule) * p.grad(), in place: p stays the same tensor
// max_norm > 0. Returns norm, taken before clipping (what clip_grad_norm_ returns: worth
// logging, as a sudden jump in it is the first sign of a diverging run). The gradients are
// left clipped, as torch.nn.utils.clip_grad_norm_ leaves them. Everything under
// NoGradGuard: nothing here may become part of a graph.
double clipped_scheduled_sgd_step(const std::vector<Tensor>& params, double max_norm, int64_t step,
                                  const Schedule& schedule);

}  // namespace glass::lesson06
