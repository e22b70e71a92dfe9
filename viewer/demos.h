// viewer/demos.h — the lessons' models, by name, ready to be drawn.
//
// `glass-dot --demo NAME` (and the GUI's `--demo NAME`) draw one of these, so the lessons'
// figures are made from the same code the lessons run. Each demo builds its model and
// inputs from a fixed seed — the same graph, values and gradients on every run — and
// returns a forward to run, kept apart so that a ForwardRecorder sees the forward only,
// not the model's construction.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"
#include "viewer/snapshot.h"

namespace glass::nn {
class Module;
}

namespace glass::viz {

// What a demo's build() returns: the model (if any), its named inputs, and its forward.
struct DemoRun {
  std::shared_ptr<nn::Module> module;                 // null for demos without a module
  std::vector<std::pair<std::string, Tensor>> names;  // inputs the figure labels
  std::function<Tensor()> forward;                    // returns a one-element root
  std::string root_name = "loss";
};

struct Demo {
  std::string name;
  std::string description;  // one line, for --list
  std::function<DemoRun()> build;
};

const std::vector<Demo>& demos();
// The demo with this name; otherwise a glass::Error listing the valid names.
const Demo& find_demo(const std::string& name);

struct CaptureOptions {
  bool forward = false;   // record the forward graph (ForwardRecorder) instead of reading
                          // the backward graph from the root
  bool gradients = true;  // run backward under a GradientRecorder (statistics per node)
};

// Builds the demo (after manual_seed(0): the global generator is reseeded), runs its
// forward and returns its graph as a snapshot (with module membership when the demo has a
// module, and gradient statistics unless turned off).
Snapshot capture(const Demo& demo, const CaptureOptions& options = {});

}  // namespace glass::viz
