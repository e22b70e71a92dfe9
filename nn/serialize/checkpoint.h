// nn/serialize/checkpoint.h — save a Module's state_dict to a safetensors file and load
// it back into the same module.
//
//   glass::save(*model, "model.safetensors");
//   ...
//   glass::load(*model, "model.safetensors");  // values copied into the existing tensors
//
// Invariant: load() is all-or-nothing and keeps tensor identity. It checks every name,
// shape and dtype against the module and reads every tensor before it changes anything,
// so a failed load leaves the module exactly as it was; on success it copies into the
// module's own parameters and buffers in place (under NoGradGuard), so an optimizer or
// anyone else holding those Tensors sees the loaded values.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "nn/module.h"
#include "nn/serialize/safetensors.h"  // save / load of plain named tensors

namespace glass {

// What a non-strict load skipped (PyTorch's load_state_dict returns the same two lists).
struct IncompatibleKeys {
  std::vector<std::string> missing_keys;     // in the module, not in the file
  std::vector<std::string> unexpected_keys;  // in the file, not in the module
};

// module.state_dict() (parameters, then buffers, dotted names) to `path`, atomically.
void save(const nn::Module& module, const std::string& path,
          const std::map<std::string, std::string>& metadata = {});

// Copies the file's tensors into the module's tensors of the same names. strict: every
// missing and every unexpected key is an error (listed by name, all at once); otherwise
// they are skipped and returned. A shape or dtype mismatch is always an error.
IncompatibleKeys load(nn::Module& module, const std::string& path, bool strict = true);

}  // namespace glass
