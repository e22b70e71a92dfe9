// autograd/functions.h — the backward formulas, and their registration with core.
//
// Every differentiable op of core gets an Autograd-key handler (core/dispatcher.h): it
// runs the op below autograd, then records a FormulaNode whose formula computes the
// vector-Jacobian product with ordinary (differentiable) tensor ops — so running a
// backward pass with grad mode on (create_graph) records a graph of the backward too.
// The formulas live in one table in functions.cpp, each next to its forward.
#pragma once

namespace glass::autograd {

// Installs the Autograd handlers on core's ops. Idempotent; called before any graph is
// recorded (see tensor_methods.cpp).
void register_autograd_handlers();

}  // namespace glass::autograd
