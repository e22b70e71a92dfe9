// viewer/app/training.cpp — lesson 06's MLP trained one step per call (training.h).
//
// The model is lesson 06's, rebuilt here (as viewer/demos.cpp does) so the app never links
// a lesson. Each step's graph is read with snapshot_with_gradients, which runs backward
// under a GradientRecorder; the optimizer step follows, so the snapshot shows the
// gradients that step used.
#include "viewer/app/training.h"

#include <filesystem>

#include <glass/glass.h>

#include "viewer/recorders.h"

namespace glass::viz::app {

namespace {

// lesson 06: the Fashion-MNIST classifier, 784-512-512-10.
struct MLPImpl : nn::Module {
  MLPImpl() : Module("MLP") {
    fc1 = register_module("fc1", nn::Linear(784, 512));
    fc2 = register_module("fc2", nn::Linear(512, 512));
    fc3 = register_module("fc3", nn::Linear(512, 10));
  }
  // x: (B, 784) -> logits (B, 10)
  Tensor forward(const Tensor& x) const { return fc3(fc2(fc1(x).relu()).relu()); }
  nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};
};

double accuracy(const Tensor& logits, const Tensor& labels) {  // logits (B, 10), labels (B)
  return (logits.argmax(1) == labels).to(ScalarType::Float64).mean().item<double>();
}

}  // namespace

struct Trainer::State {
  TrainerOptions options;
  Tensor train_images, train_labels, test_images, test_labels;
  std::shared_ptr<MLPImpl> model;
  std::unique_ptr<optim::Adam> optimizer;
};

Trainer::Trainer(const TrainerOptions& options) : state_(std::make_unique<State>()) {
  GLASS_CHECK(options.batch_size > 0, "Trainer: batch_size must be positive, got ",
              options.batch_size);
  GLASS_CHECK(std::filesystem::is_directory(options.root), "Trainer: no Fashion-MNIST at '",
              options.root, "' (Debian: apt install dataset-fashion-mnist)");
  State& s = *state_;
  s.options = options;
  data::FashionMNIST train(options.root), test(options.root, data::FashionMNIST::Split::Test);
  s.train_images = train.images();
  s.train_labels = train.labels();
  if (options.train_limit > 0 && options.train_limit < s.train_images.size(0)) {
    s.train_images = s.train_images.narrow(0, 0, options.train_limit);
    s.train_labels = s.train_labels.narrow(0, 0, options.train_limit);
  }
  int64_t n_eval = std::min(options.eval_size, test.images().size(0));
  s.test_images = test.images().narrow(0, 0, n_eval);
  s.test_labels = test.labels().narrow(0, 0, n_eval);
  manual_seed(options.seed);
  s.model = std::make_shared<MLPImpl>();
  s.optimizer = std::make_unique<optim::Adam>(s.model->parameters(), optim::AdamOptions(1e-3));
}

Trainer::~Trainer() = default;

StepResult Trainer::step() {
  State& s = *state_;
  Tensor index = randint(0, s.train_images.size(0), {s.options.batch_size});
  Tensor images = s.train_images.index_select(0, index);  // (B, 784)
  Tensor labels = s.train_labels.index_select(0, index);  // (B)
  s.optimizer->zero_grad();
  Tensor logits = s.model->forward(images);
  Tensor loss = nn::functional::cross_entropy(logits, labels);
  StepResult r;
  r.loss = loss.item<double>();
  r.loss_tensor = loss.detach();
  {
    NoGradGuard no_grad;
    r.batch_accuracy = accuracy(logits, labels);
  }
  r.graph = snapshot_with_gradients(
      loss, {.module = s.model.get(), .names = {{"images", images}, {"loss", loss}}});
  s.optimizer->step();
  ++steps_;
  losses_.push_back(r.loss);
  return r;
}

double Trainer::evaluate() {
  State& s = *state_;
  NoGradGuard no_grad;
  double acc = accuracy(s.model->forward(s.test_images), s.test_labels);
  accuracies_.push_back(acc);
  return acc;
}

std::vector<std::pair<std::string, Tensor>> Trainer::parameters() const {
  return state_->model->named_parameters();
}

std::vector<Trainer::Sample> Trainer::samples(int64_t count) {
  State& s = *state_;
  NoGradGuard no_grad;
  count = std::min(count, s.test_images.size(0));
  Tensor images = s.test_images.narrow(0, 0, count);
  Tensor predicted = s.model->forward(images).argmax(1);
  std::vector<Sample> out;
  for (int64_t i = 0; i < count; ++i) {
    out.push_back({images.select(0, i), s.test_labels.select(0, i).item<int64_t>(),
                   predicted.select(0, i).item<int64_t>()});
  }
  return out;
}

const std::array<std::string, 10>& Trainer::class_names() {
  return data::FashionMNIST::class_names();
}

}  // namespace glass::viz::app
