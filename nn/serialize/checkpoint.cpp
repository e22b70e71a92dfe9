// nn/serialize/checkpoint.cpp — a Module's state_dict to and from safetensors.
//
// load() works in three phases so that it is all-or-nothing: (1) compare the file's
// header with the module and report every problem at once, (2) read every tensor it will
// copy — reading can still fail (an I/O error, a BOOL byte of 2) — and only then (3) copy,
// which cannot fail: shapes and dtypes already match.
#include "nn/serialize/checkpoint.h"

#include <set>
#include <utility>

#include "core/error.h"
#include "core/grad_mode.h"
#include "nn/serialize/safetensors.h"

namespace glass {

namespace {

std::string join(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? separator : "") + parts[i];
  return out;
}

// "1 missing key: a" / "2 missing keys: a, b"
std::string listing(const std::vector<std::string>& names, const char* what) {
  return detail::str_cat(names.size(), " ", what, names.size() == 1 ? "" : "s", ": ",
                         join(names, ", "));
}

}  // namespace

void save(const nn::Module& module, const std::string& path,
          const std::map<std::string, std::string>& metadata) {
  save(module.state_dict(), path, metadata);
}

IncompatibleKeys load(nn::Module& module, const std::string& path, bool strict) {
  const SafetensorsReader reader(path, "load");
  const nn::NamedTensors targets = module.state_dict();

  // (1) Compare names, shapes and dtypes; collect every problem before reporting.
  IncompatibleKeys keys;
  std::vector<std::string> mismatches;
  std::set<std::string> model_names;
  for (const auto& [name, target] : targets) {
    model_names.insert(name);
    const safetensors::TensorEntry* entry = reader.find(name);
    if (entry == nullptr) {
      keys.missing_keys.push_back(name);
      continue;
    }
    if (entry->shape != target.sizes()) {
      mismatches.push_back(detail::str_cat("shape mismatch for ", name, ": checkpoint ",
                                           IntArrayRef(entry->shape), ", model ", target.sizes()));
    }
    if (entry->dtype != target.dtype()) {
      mismatches.push_back(detail::str_cat("dtype mismatch for ", name, ": checkpoint ",
                                           entry->dtype, ", model ", target.dtype()));
    }
  }
  for (const auto& entry : reader.entries()) {
    if (model_names.count(entry.name) == 0) keys.unexpected_keys.push_back(entry.name);
  }

  std::vector<std::string> problems;
  const bool key_problems = strict && (!keys.missing_keys.empty() || !keys.unexpected_keys.empty());
  if (strict && !keys.missing_keys.empty()) {
    problems.push_back(listing(keys.missing_keys, "missing key"));
  }
  if (strict && !keys.unexpected_keys.empty()) {
    problems.push_back(listing(keys.unexpected_keys, "unexpected key"));
  }
  problems.insert(problems.end(), mismatches.begin(), mismatches.end());
  GLASS_CHECK(problems.empty(), reader.context(), ": ", join(problems, "; "),
              ". Nothing was loaded; the module is unchanged.",
              key_problems ? " Pass strict = false to load only the keys both have." : "");

  // (2) Read everything first, (3) then copy in place.
  std::vector<std::pair<Tensor, Tensor>> copies;  // (the module's tensor, the file's values)
  for (const auto& [name, target] : targets) {
    if (reader.find(name) != nullptr) copies.emplace_back(target, reader.read(name));
  }
  NoGradGuard no_grad;  // parameters are leaves that require grad: no in-place autograd
  for (auto& [target, values] : copies) target.copy_(values);
  return keys;
}

}  // namespace glass
