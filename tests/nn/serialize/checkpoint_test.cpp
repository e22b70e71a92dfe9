// tests/nn/serialize/checkpoint_test.cpp — save(module) / load(module): values come back
// into the very same tensors, and a load that cannot succeed changes nothing.
#include "nn/serialize/checkpoint.h"

#include <map>
#include <string>
#include <vector>

#include "core/fake_cuda.h"
#include "core/test_util.h"
#include "nn/serialize/safetensors.h"
#include "nn/serialize/temp_dir.h"

namespace glass {
namespace {

using namespace std::string_literals;
using testing::read_bytes;
using testing::ScratchDir;
using testing::write_bytes;

// Two parameters and a buffer.
class Affine : public nn::Module {
 public:
  Affine(int64_t in, int64_t out) : Module("Affine") {
    weight = register_parameter("weight", randn({out, in}));
    bias = register_parameter("bias", randn({out}));
    calls = register_buffer("calls", scalar_tensor(0, kInt64));
  }
  Tensor weight, bias, calls;
};

// A submodule, for dotted names, and a buffer of its own.
class Net : public nn::Module {
 public:
  Net() : Module("Net") {
    fc = register_module("fc", std::make_shared<Affine>(2, 3));
    mask = register_buffer("mask", tensor({true, false, true}));
  }
  std::shared_ptr<Affine> fc;
  Tensor mask;
};

// Any set of parameters under any names: for modules that disagree with a checkpoint.
class Bag : public nn::Module {
 public:
  explicit Bag(const nn::NamedTensors& parameters) : Module("Bag") {
    for (const auto& [name, t] : parameters) register_parameter(name, t);
  }
};

std::map<std::string, std::vector<double>> snapshot(const nn::Module& m) {
  std::map<std::string, std::vector<double>> out;
  for (const auto& [name, t] : m.state_dict()) out[name] = testing::values(t);
  return out;
}

void scramble(const nn::Module& m) {
  NoGradGuard no_grad;
  for (auto [name, t] : m.state_dict()) t.fill_(t.dtype() == kBool ? 0 : 42);
}

TEST(Checkpoint, RoundTripRestoresValuesIntoTheSameTensors) {
  manual_seed(0);
  ScratchDir dir("checkpoint");
  const std::string path = dir.path("net.safetensors");
  Net net;
  const auto saved = snapshot(net);
  save(net, path);

  scramble(net);
  ASSERT_NE(snapshot(net), saved);
  const nn::NamedTensors before = net.state_dict();
  const Tensor held = net.fc->weight;  // as an optimizer holds it
  const IncompatibleKeys keys = load(net, path);

  EXPECT_TRUE(keys.missing_keys.empty());
  EXPECT_TRUE(keys.unexpected_keys.empty());
  EXPECT_EQ(snapshot(net), saved);
  const nn::NamedTensors after = net.state_dict();
  ASSERT_EQ(after.size(), before.size());
  for (size_t i = 0; i < after.size(); ++i) {
    EXPECT_EQ(after[i].second.unsafeGetTensorImpl(), before[i].second.unsafeGetTensorImpl())
        << after[i].first << " was replaced instead of loaded in place";
  }
  EXPECT_TRUE(held.is_same(net.fc->weight));
  EXPECT_EQ(testing::values(held), saved.at("fc.weight"));
  // Still trainable leaves: the copy recorded no graph.
  EXPECT_TRUE(net.fc->weight.requires_grad());
  EXPECT_TRUE(net.fc->weight.is_leaf());
  (net.fc->weight * 2).sum().backward();
  EXPECT_EQ(testing::values(net.fc->weight.grad()), std::vector<double>(6, 2.0));
}

TEST(Checkpoint, SavesTheStateDictUnderDottedNames) {
  manual_seed(1);
  ScratchDir dir("checkpoint");
  Net net;
  save(net, dir.path("net.safetensors"), {{"epoch", "3"}});
  const SafetensorsFile file = read_safetensors(dir.path("net.safetensors"));
  std::map<std::string, Tensor> loaded(file.tensors.begin(), file.tensors.end());
  ASSERT_EQ(loaded.size(), 4u);
  for (const auto& [name, t] : net.state_dict()) {
    ASSERT_EQ(loaded.count(name), 1u) << name;
    EXPECT_EQ(loaded.at(name).dtype(), t.dtype());
    EXPECT_EQ(testing::values(loaded.at(name)), testing::values(t)) << name;
  }
  EXPECT_EQ(file.metadata.at("epoch"), "3");

  manual_seed(2);  // a second, differently initialised net takes the first one's values
  Net other;
  load(other, dir.path("net.safetensors"));
  EXPECT_EQ(snapshot(other), snapshot(net));
}

TEST(Checkpoint, MismatchesAreListedByNameAndNothingIsLoaded) {
  ScratchDir dir("checkpoint");
  const std::string path = dir.path("model.safetensors");
  save({{"fc1.weight", ones({2, 3})}, {"fc1.bias", ones({2})}, {"fc3.weight", ones({2, 2})}}, path);
  auto fc1 =
      std::make_shared<Bag>(nn::NamedTensors{{"weight", zeros({4, 3})}, {"bias", zeros({2})}});
  auto fc2 = std::make_shared<Bag>(nn::NamedTensors{{"bias", zeros({2})}});
  Bag model({});
  model.register_module("fc1", fc1);
  model.register_module("fc2", fc2);
  const auto values_before = snapshot(model);
  const uint32_t version_before = fc1->named_parameters()[1].second._version();

  try {
    load(model, path);
    FAIL() << "expected glass::Error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "load(" + path +
                  "): 1 missing key: fc2.bias; 1 unexpected key: fc3.weight; shape mismatch for "
                  "fc1.weight: checkpoint [2, 3], model [4, 3]. Nothing was loaded; the module "
                  "is unchanged. Pass strict = false to load only the keys both have.");
  }
  // fc1.bias matched, but was not loaded either: all or nothing.
  EXPECT_EQ(snapshot(model), values_before);
  EXPECT_EQ(fc1->named_parameters()[1].second._version(), version_before);

  // Not strict: missing and unexpected keys are fine, a shape mismatch still is not.
  EXPECT_GLASS_ERROR(load(model, path, /*strict=*/false), "shape mismatch for fc1.weight");
  EXPECT_EQ(snapshot(model), values_before);
}

TEST(Checkpoint, PluralsAndDtypeMismatches) {
  ScratchDir dir("checkpoint");
  const std::string path = dir.path("model.safetensors");
  save({{"w", ones({2}, kFloat64)}, {"x", ones({1})}, {"y", ones({1})}}, path);
  Bag model({{"w", zeros({2})}, {"a", zeros({1})}, {"b", zeros({1})}});
  EXPECT_GLASS_ERROR(load(model, path), "2 missing keys: a, b", "2 unexpected keys: x, y",
                     "dtype mismatch for w: checkpoint Double, model Float");
  EXPECT_EQ(testing::values(model.state_dict()[0].second), (std::vector<double>{0, 0}));
}

TEST(Checkpoint, NonStrictLoadsTheCommonKeysAndReportsTheRest) {
  ScratchDir dir("checkpoint");
  const std::string path = dir.path("model.safetensors");
  save({{"w", full({2}, 5.0)}, {"extra", ones({1})}}, path);
  Bag model({{"w", zeros({2})}, {"new", zeros({3})}});
  const IncompatibleKeys keys = load(model, path, /*strict=*/false);
  EXPECT_EQ(keys.missing_keys, (std::vector<std::string>{"new"}));
  EXPECT_EQ(keys.unexpected_keys, (std::vector<std::string>{"extra"}));
  const auto loaded = snapshot(model);
  EXPECT_EQ(loaded.at("w"), (std::vector<double>{5, 5}));
  EXPECT_EQ(loaded.at("new"), (std::vector<double>{0, 0, 0}));
}

TEST(Checkpoint, AFailedReadLeavesTheModuleUnchanged) {
  // Names and shapes match, but the last tensor in the file (a BOOL buffer) is corrupt:
  // the error comes after the float parameters were read, and they must not be copied.
  manual_seed(3);
  ScratchDir dir("checkpoint");
  const std::string path = dir.path("net.safetensors");
  Net net;
  save(net, path);
  std::string bytes = read_bytes(path);
  ASSERT_EQ(bytes.back(), '\x01');  // mask = {1, 0, 1}, written last
  bytes.back() = '\x07';
  write_bytes(path, bytes);

  scramble(net);
  const auto before = snapshot(net);
  EXPECT_GLASS_ERROR(load(net, path), path.c_str(), "tensor 'mask'", "must be 0 or 1");
  EXPECT_EQ(snapshot(net), before);
}

// A model on a device saves like one on the CPU (its tensors are copied to the host), and
// a checkpoint loads into a device model in place. The device is the fake CUDA backend.
TEST(Checkpoint, DeviceModulesSaveAndLoadInPlace) {
  testing::FakeCuda cuda;
  manual_seed(2);
  ScratchDir dir("checkpoint");
  const std::string path = dir.path("device.safetensors");
  Net net;
  const auto saved = snapshot(net);
  net.to(Device(kCUDA, 1));
  save(net, path);  // device tensors: copied to the host, no error
  Net cpu_copy;
  load(cpu_copy, path);
  EXPECT_EQ(snapshot(cpu_copy), saved);

  scramble(net);
  const Tensor held = net.fc->weight;
  load(net, path);  // file (CPU) -> the module's tensors on cuda:1
  EXPECT_TRUE(held.is_same(net.fc->weight));
  EXPECT_EQ(net.fc->weight.device(), Device(kCUDA, 1));
  EXPECT_EQ(net.mask.device(), Device(kCUDA, 1));
  EXPECT_EQ(snapshot(net), saved);  // values() reads the fake device's host memory
}

}  // namespace
}  // namespace glass
