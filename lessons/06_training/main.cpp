// lessons/06_training/main.cpp — lesson 06 as a program: training a real network. It
// builds the Fashion-MNIST classifier MLP 784-512-512-10 from nn modules (a Module
// subclass, and the same network as a Sequential), shows what Linear's default
// initialisation does to the size of the activations, takes cross-entropy apart into
// log_softmax + nll_loss, dissects one training step (zero_grad → forward → loss →
// backward → step) tensor by tensor, compares Adam with SGD + momentum on gradients of
// very different sizes, shuffles with a seeded DataLoader, trains for 5 epochs (test
// accuracy ≥ 87% on the full 10k test set), and saves a safetensors checkpoint that a
// fresh model reloads to the same accuracy.
//
// stdout is deterministic — the same bytes for any GLASS_NUM_THREADS on a given build —
// and the lesson_06_output test compares it with the blocks quoted in README.md. What is
// not deterministic (wall time, samples per second) goes to stderr, on the same progress
// line. Needs Debian's dataset-fashion-mnist in /usr/share/datasets/fashion-mnist.
//
// [SECTION] helpers   [SECTION] the model   [SECTION] evaluation   [SECTION] main
#include <glass/glass.h>

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

using glass::Tensor;
namespace nn = glass::nn;
namespace optim = glass::optim;
namespace data = glass::data;
namespace F = glass::nn::functional;

// [SECTION] helpers ----------------------------------------------------------------------

const char* yes_no(bool b) { return b ? "yes" : "no"; }

void section(const char* title) { std::cout << "== " << title << " ==\n"; }

// v with `decimals` digits after the point; a value that rounds to zero prints as 0, never -0.
std::string fixed(double v, int decimals) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(decimals)
     << (std::abs(v) < 0.5 * std::pow(10, -decimals) ? 0.0 : v);
  return os.str();
}

// 669706 -> "669,706"
std::string grouped(int64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string shape_str(const Tensor& t) {
  std::string s = "[";
  for (int64_t d = 0; d < t.dim(); ++d) s += (d ? ", " : "") + std::to_string(t.size(d));
  return s + "]";
}

// The values of a small tensor, 4 decimals: "[a, b, c]".
std::string vec(const Tensor& t) {
  Tensor c = t.detach().to(glass::kDouble).contiguous();
  std::string s = "[";
  for (int64_t i = 0; i < c.numel(); ++i) s += (i ? ", " : "") + fixed(c.data_ptr<double>()[i], 4);
  return s + "]";
}

// The values of a small integer tensor: "[9, 0, 3]".
std::string ints(const Tensor& t) {
  Tensor c = t.to(glass::kLong).contiguous();
  std::string s = "[";
  for (int64_t i = 0; i < c.numel(); ++i)
    s += (i ? ", " : "") + std::to_string(c.data_ptr<int64_t>()[i]);
  return s + "]";
}

// Mean and standard deviation (population) of every element of a float32 tensor, summed in
// double by one plain loop: the same bits whatever the thread count (README section 7,
// "Reproducible to the bit").
std::pair<double, double> mean_std(const Tensor& t) {
  Tensor c = t.detach().contiguous();
  const float* p = c.data_ptr<float>();
  double sum = 0, sq = 0;
  for (int64_t i = 0; i < c.numel(); ++i) sum += p[i];
  const double mean = sum / static_cast<double>(c.numel());
  for (int64_t i = 0; i < c.numel(); ++i) sq += (p[i] - mean) * (p[i] - mean);
  return {mean, std::sqrt(sq / static_cast<double>(c.numel()))};
}

// labels (B) int64 -> (B, classes) float32 rows of 0 with a 1 at the label: a broadcast
// comparison of (1, classes) with (B, 1) (lesson 03).
Tensor one_hot(const Tensor& labels, int64_t classes) {
  return (glass::arange(classes).unsqueeze(0) == labels.unsqueeze(1)).to(glass::kFloat);
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  return (a.detach() - b.detach()).abs().max().item<double>();
}

bool bitwise_equal(const Tensor& a, const Tensor& b) {  // on any devices (--device cuda)
  return a.sizes() == b.sizes() &&
         (a.detach().cpu() != b.detach().cpu()).sum().item<int64_t>() == 0;
}

// [SECTION] the model --------------------------------------------------------------------

// The network as a Module subclass, libtorch's usual way: each layer is a member *and* a
// registered submodule. Registration is what makes parameters(), named_parameters(),
// train()/eval(), zero_grad() and checkpoints see the layer; the member is only a handle.
struct MLPImpl : nn::Module {
  MLPImpl(int64_t in, int64_t hidden, int64_t classes) : Module("MLP") {
    fc1 = register_module("fc1", nn::Linear(in, hidden));
    fc2 = register_module("fc2", nn::Linear(hidden, hidden));
    fc3 = register_module("fc3", nn::Linear(hidden, classes));
  }
  // x: (B, 784) -> logits (B, 10)
  Tensor forward(const Tensor& x) const {
    Tensor h = fc1(x).relu();  // (B, 512)
    h = fc2(h).relu();         // (B, 512)
    return fc3(h);             // (B, 10): unnormalised scores, one per class
  }
  nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};
};
GLASS_MODULE(MLP);

// The same network as a Sequential: layers named by position, "0", "1", ... Built with
// push_back, one layer per statement, so that the layers draw their starting values in
// order: the arguments of one call, as in Sequential(Linear(..), ReLU(), Linear(..)), are
// evaluated in an order C++ leaves to the compiler (g++ goes right to left).
nn::Sequential mlp_sequential(int64_t in, int64_t hidden, int64_t classes) {
  nn::Sequential seq;
  seq->push_back(nn::Linear(in, hidden));
  seq->push_back(nn::ReLU());
  seq->push_back(nn::Linear(hidden, hidden));
  seq->push_back(nn::ReLU());
  seq->push_back(nn::Linear(hidden, classes));
  return seq;
}

// The pixel statistics of the training set, rounded to 4 decimals (section 6 measures
// them). Fixed constants, not the measured doubles: the inputs must not depend on how a
// reduction happened to be split.
constexpr double kPixelMean = 0.2860;
constexpr double kPixelStd = 0.3530;

Tensor normalize(const Tensor& images) { return (images - kPixelMean) / kPixelStd; }

// [SECTION] evaluation -------------------------------------------------------------------

struct Evaluation {
  int64_t correct = 0;
  int64_t total = 0;
  double loss = 0;                              // mean cross-entropy per sample
  std::vector<std::vector<int64_t>> confusion;  // [true class][predicted class]: counts
  double accuracy() const {
    return 100.0 * static_cast<double>(correct) / static_cast<double>(total);
  }
};

// Runs the model over every batch of `loader` in evaluation mode with no graph recorded.
Evaluation evaluate(MLPImpl& model, data::DataLoader& loader) {
  model.eval();                // inference behaviour for Dropout and the like (none here)
  glass::NoGradGuard no_grad;  // no graph: nothing is saved for a backward that never comes
  Evaluation e;
  e.confusion.assign(10, std::vector<int64_t>(10, 0));
  const glass::Device device = model.parameters()[0].device();  // where the model lives
  for (data::Example& batch : loader) {
    const Tensor target = batch.target.to(device);
    Tensor logits = model.forward(batch.data.to(device));  // (B, 10)
    Tensor predicted = logits.argmax(1).cpu();             // (B): the highest score wins
    e.loss += F::cross_entropy(logits, target, {}, -100, F::Reduction::Sum).item<double>();
    Tensor labels = batch.target.contiguous();
    for (int64_t i = 0; i < labels.numel(); ++i)
      e.confusion[labels.data_ptr<int64_t>()[i]][predicted.data_ptr<int64_t>()[i]] += 1;
    e.total += labels.numel();
  }
  for (size_t c = 0; c < 10; ++c) e.correct += e.confusion[c][c];
  e.loss /= static_cast<double>(e.total);
  return e;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

// [SECTION] main --------------------------------------------------------------------------

int main(int argc, char** argv) {
  // `--device cuda` trains section 7 on the GPU (the simulated one where there is none);
  // every other section, and the default run that README.md quotes, stays on the CPU.
  glass::Device device(glass::kCPU);
  if (argc == 3 && std::string(argv[1]) == "--device" && std::string(argv[2]) == "cuda") {
    if (!glass::cuda::is_available()) glass::cuda::use_simulator();
    device = glass::Device(glass::kCUDA, 0);
  } else if (argc != 1) {
    std::cerr << "usage: " << argv[0] << " [--device cuda]\n";
    return 2;
  }
  // The data first: both splits into memory (float32 in [0, 1], int64 labels).
  auto load_start = std::chrono::steady_clock::now();
  data::FashionMNIST train_set;  // /usr/share/datasets/fashion-mnist, 60000 images
  data::FashionMNIST test_set(data::FashionMNIST::kDefaultRoot, data::FashionMNIST::Split::Test);
  std::cerr << "loaded Fashion-MNIST in " << fixed(seconds_since(load_start), 2) << " s\n";

  section("1. a model is a Module: parameters registered by name");
  glass::manual_seed(0);
  MLP model(784, 512, 10);
  std::cout << *model << "\n";
  std::cout << "named_parameters(), depth-first in registration order:\n";
  int64_t total = 0;
  for (const auto& [name, p] : model->named_parameters()) {
    std::cout << "   " << std::left << std::setw(12) << name << std::setw(12) << shape_str(p)
              << std::right << std::setw(9) << grouped(p.numel()) << "  requires_grad "
              << yes_no(p.requires_grad()) << "\n";
    total += p.numel();
  }
  std::cout << "   total " << grouped(total) << " parameters = 784*512 + 512 + 512*512 + 512 + "
            << "512*10 + 10\n";
  std::cout << "model->fc1->weight is named_parameters()[0]: "
            << yes_no(model->fc1->weight.is_same(model->named_parameters()[0].second)) << "\n";
  glass::manual_seed(0);
  nn::Sequential seq = mlp_sequential(784, 512, 10);
  std::cout << "the same network as a Sequential:\n" << *seq << "\n";
  std::cout << "   its names: ";
  for (const auto& [name, p] : seq->named_parameters()) std::cout << name << " ";
  std::cout << "(the ReLUs, \"1\" and \"3\", hold none)\n";
  bool same_init = true;
  auto mine = model->parameters(), theirs = seq->parameters();
  for (size_t i = 0; i < mine.size(); ++i)
    same_init = same_init && bitwise_equal(mine[i], theirs[i]);
  std::cout << "   built after the same manual_seed(0): same starting values, bit for bit: "
            << yes_no(same_init) << "\n";
  model->eval();
  std::cout << "model->eval(): model training " << yes_no(model->is_training()) << ", fc2 training "
            << yes_no(model->fc2->is_training()) << "; model->train(): ";
  model->train();
  std::cout << "fc2 training " << yes_no(model->fc2->is_training()) << "\n";

  section("2. Linear's starting values: Kaiming-uniform, and what they do to activations");
  std::cout
      << "layer  fan_in  bound 1/sqrt(fan_in)  weight min   max      std     (bound/sqrt(3))\n";
  for (const auto& [name, layer] : std::vector<std::pair<const char*, nn::Linear>>{
           {"fc1", model->fc1}, {"fc2", model->fc2}, {"fc3", model->fc3}}) {
    const Tensor& w = layer->weight;
    const double bound = 1 / std::sqrt(static_cast<double>(w.size(1)));
    std::cout << std::left << std::setw(7) << name << std::setw(8) << w.size(1) << std::setw(22)
              << fixed(bound, 4) << std::setw(11) << fixed(w.min().item<double>(), 4)
              << std::setw(9) << fixed(w.max().item<double>(), 4) << std::setw(8)
              << fixed(mean_std(w).second, 4) << "(" << fixed(bound / std::sqrt(3.0), 4) << ")\n"
              << std::right;
  }
  {
    // The standard deviation of each layer's output on one batch of 128 normalised images,
    // for the default init and for Kaiming's init for ReLU (gain sqrt(2)).
    Tensor x = normalize(train_set.images().narrow(0, 0, 128));  // (128, 784)
    Tensor y = train_set.labels().narrow(0, 0, 128);             // (128)
    glass::NoGradGuard no_grad;
    auto trace = [&](const MLP& m, const char* label) {
      Tensor z1 = m->fc1(x), z2 = m->fc2(z1.relu()), z3 = m->fc3(z2.relu());
      std::cout << std::left << std::setw(24) << label << std::right << fixed(mean_std(x).second, 4)
                << "   " << fixed(mean_std(z1).second, 4) << "   " << fixed(mean_std(z2).second, 4)
                << "   " << fixed(mean_std(z3).second, 4) << "    "
                << fixed(F::cross_entropy(z3, y).item<double>(), 4) << "\n";
    };
    std::cout << "std of each layer's output on 128 images:\ninit                    x        fc1  "
                 "    fc2      logits    loss\n";
    trace(model, "default, gain sqrt(1/3)");
    glass::manual_seed(0);
    MLP kaiming(784, 512, 10);
    for (const nn::Linear& layer : {kaiming->fc1, kaiming->fc2, kaiming->fc3})
      nn::init::kaiming_uniform_(layer->weight, 0, nn::init::FanMode::FanIn, "relu");
    trace(kaiming, "Kaiming, gain sqrt(2)");
    std::cout << "an untrained classifier should be unsure: ln(10) = " << fixed(std::log(10.0), 4)
              << " is the loss of a uniform guess\n";
  }

  section("3. the loss: cross-entropy = log_softmax + nll_loss");
  {
    Tensor logits = glass::tensor({{2.0, 1.0, 0.1}, {0.5, 2.5, 0.3}}).requires_grad_();  // (2, 3)
    Tensor target = glass::tensor({int64_t{0}, int64_t{2}});                             // (2)
    Tensor log_p = logits.log_softmax(1);
    std::cout << "logits = [[2, 1, 0.1], [0.5, 2.5, 0.3]], target = [0, 2]\n";
    std::cout << "log_softmax(logits, 1) = " << vec(log_p.select(0, 0)) << ", "
              << vec(log_p.select(0, 1)) << "\n";
    std::cout
        << "pick -log p[n, target[n]]: "
        << fixed(-log_p.select(0, 0).select(0, 0).item<double>(), 4) << " and "
        << fixed(-log_p.select(0, 1).select(0, 2).item<double>(), 4) << ", mean "
        << fixed(
               -(log_p.select(0, 0).select(0, 0) + log_p.select(0, 1).select(0, 2)).item<double>() /
                   2,
               4)
        << "\n";
    Tensor loss = F::cross_entropy(logits, target);
    std::cout << "F::nll_loss(log_softmax)   = "
              << fixed(F::nll_loss(log_p, target).item<double>(), 4)
              << "\nF::cross_entropy(logits)   = " << fixed(loss.item<double>(), 4) << "\n";
    loss.backward();
    Tensor by_hand = (logits.detach().softmax(1) - glass::tensor({{1., 0., 0.}, {0., 0., 1.}})) / 2;
    std::cout << "its gradient: (softmax - one_hot(target)) / N = " << vec(by_hand.select(0, 0))
              << ", " << vec(by_hand.select(0, 1)) << "\n";
    std::cout << "   equals logits.grad() from backward(): "
              << yes_no(max_abs_diff(logits.grad(), by_hand) < 1e-6) << "\n";
    Tensor big = glass::tensor({{1000.0, 0.0, -1000.0}});
    std::cout << "logits = [[1000, 0, -1000]], target = [1]:\n";
    std::cout << "   naive log(exp(x) / sum(exp(x))) = "
              << vec((big.exp() / big.exp().sum({1}, true)).log().select(0, 0)) << "\n";
    std::cout << "   log_softmax = x - max - log(sum(exp(x - max))) = "
              << vec(big.log_softmax(1).select(0, 0)) << "\n";
    std::cout << "   F::cross_entropy = "
              << fixed(F::cross_entropy(big, glass::tensor({int64_t{1}})).item<double>(), 4)
              << "\n";
  }

  section("4. one training step, tensor by tensor");
  {
    glass::manual_seed(0);
    MLP m(784, 512, 10);
    optim::Adam adam(m->parameters(), optim::AdamOptions(1e-3));
    Tensor x = normalize(train_set.images().narrow(0, 0, 128));  // the first 128 images
    Tensor y = train_set.labels().narrow(0, 0, 128);
    const Tensor& w = m->fc1->weight;
    adam.zero_grad();
    std::cout << "adam.zero_grad():           fc1.weight.grad() defined "
              << yes_no(w.grad().defined()) << " (set to None, PyTorch 2's default)\n";
    Tensor logits = m->forward(x);
    std::cout << "logits = m->forward(x):     " << shape_str(logits) << ", grad_fn "
              << logits.grad_fn()->name() << "\n";
    Tensor loss = F::cross_entropy(logits, y);
    const double before = loss.item<double>();
    std::cout << "loss = F::cross_entropy:    " << fixed(before, 4) << ", grad_fn "
              << loss.grad_fn()->name() << "\n";
    loss.backward();
    std::cout << "loss.backward():            fc1.weight.grad() defined "
              << yes_no(w.grad().defined()) << ", " << shape_str(w.grad())
              << "; every parameter has one: ";
    bool all = true;
    for (const Tensor& p : m->parameters()) all = all && p.grad().defined();
    std::cout << yes_no(all) << "\n";
    Tensor expected_bias_grad = (logits.detach().softmax(1) - one_hot(y, 10)).mean({0});
    std::cout << "   fc3.bias.grad() = " << vec(m->fc3->bias.grad()) << "\n";
    std::cout << "   = the batch mean of softmax(logits) - one_hot(y): "
              << yes_no(max_abs_diff(m->fc3->bias.grad(), expected_bias_grad) < 1e-6) << "\n";
    Tensor w_before = w.detach().clone();
    const uint32_t version = w._version();
    adam.step();
    std::cout << "adam.step():                fc1.weight updated in place: version " << version
              << " -> " << w._version() << ", still a leaf (grad_fn none: " << yes_no(!w.grad_fn())
              << "), requires_grad " << yes_no(w.requires_grad()) << "\n";
    std::cout << "   largest change of any fc1 weight: " << fixed(max_abs_diff(w, w_before), 6)
              << " (Adam's first step is lr * g / |g| = +-lr per weight)\n";
    {
      glass::NoGradGuard no_grad;
      std::cout << "the same batch after one step: loss " << fixed(before, 4) << " -> "
                << fixed(F::cross_entropy(m->forward(x), y).item<double>(), 4) << "\n";
    }
    adam.zero_grad();
    F::cross_entropy(m->forward(x), y).backward();
    Tensor once = m->fc3->bias.grad().clone();
    F::cross_entropy(m->forward(x), y).backward();  // no zero_grad in between
    std::cout << "two backward() calls without zero_grad(): fc3.bias.grad() / the first one's = "
              << vec((m->fc3->bias.grad() / once).narrow(0, 0, 3)) << "... (gradients add up)\n";
  }

  section("5. Adam and SGD with momentum on gradients of very different sizes");
  {
    // L(p) = 1000 * p[0] + 0.001 * p[1]: a constant gradient g = [1000, 0.001].
    std::cout << "L(p) = 1000 * p0 + 0.001 * p1, so grad = [1000, 0.001] at every step\n";
    std::cout
        << "SGD(lr 0.001, momentum 0.9) and Adam(lr 0.001, betas (0.9, 0.999)), from p = 0:\n";
    std::cout << "step   SGD p0       SGD p1       Adam p0      Adam p1\n";
    Tensor ps = glass::zeros({2}).requires_grad_(), pa = glass::zeros({2}).requires_grad_();
    optim::SGD sgd({ps}, optim::SGDOptions(1e-3).momentum(0.9));
    optim::Adam adam({pa}, optim::AdamOptions(1e-3));
    Tensor coeffs = glass::tensor({1000.0f, 0.001f});
    // The same updates by hand, in double: SGD buf = 0.9 buf + g; Adam m, v and the bias
    // corrections 1 - beta^t (README section 5 derives them).
    double buf[2] = {0, 0}, sgd_p[2] = {0, 0}, m[2] = {0, 0}, v[2] = {0, 0}, adam_p[2] = {0, 0};
    const double g[2] = {1000, 0.001};
    bool agree = true;
    for (int t = 1; t <= 3; ++t) {
      for (auto [opt, p] : {std::pair<optim::Optimizer*, Tensor*>{&sgd, &ps}, {&adam, &pa}}) {
        opt->zero_grad();
        (*p * coeffs).sum().backward();
        opt->step();
      }
      for (int i = 0; i < 2; ++i) {
        buf[i] = t == 1 ? g[i] : 0.9 * buf[i] + g[i];
        sgd_p[i] -= 1e-3 * buf[i];
        m[i] = 0.9 * m[i] + 0.1 * g[i];
        v[i] = 0.999 * v[i] + 0.001 * g[i] * g[i];
        const double m_hat = m[i] / (1 - std::pow(0.9, t)), v_hat = v[i] / (1 - std::pow(0.999, t));
        adam_p[i] -= 1e-3 * m_hat / (std::sqrt(v_hat) + 1e-8);
      }
      for (int i = 0; i < 2; ++i) {
        agree = agree && std::abs(ps.detach().select(0, i).item<double>() - sgd_p[i]) <=
                             1e-5 * std::abs(sgd_p[i]);
        agree = agree && std::abs(pa.detach().select(0, i).item<double>() - adam_p[i]) <=
                             1e-5 * std::abs(adam_p[i]);
      }
      std::ostringstream row;
      row << std::scientific << std::setprecision(3);
      row << std::left << std::setw(7) << t;
      for (double value :
           {ps.detach().select(0, 0).item<double>(), ps.detach().select(0, 1).item<double>(),
            pa.detach().select(0, 0).item<double>(), pa.detach().select(0, 1).item<double>()})
        row << std::setw(13) << value;
      std::string text = row.str();
      std::cout << text.erase(text.find_last_not_of(' ') + 1) << "\n";
    }
    std::cout << "optim::SGD and optim::Adam equal the update equations computed by hand: "
              << yes_no(agree) << "\n";
  }

  section("6. DataLoader: batches, and a new order every epoch");
  {
    auto [mean, std] = mean_std(train_set.images());
    std::cout << "train_set.images(): " << shape_str(train_set.images())
              << " float32 in [0, 1], mean " << fixed(mean, 4) << ", std " << fixed(std, 4)
              << " -> inputs (x - " << fixed(kPixelMean, 4) << ") / " << fixed(kPixelStd, 4)
              << "\n";
    data::TensorDataset train_data(normalize(train_set.images()), train_set.labels());
    data::DataLoader loader(train_data, data::DataLoaderOptions(128).shuffle(true).seed(0));
    std::cout << "DataLoader(batch 128, shuffle, seed 0): " << loader.size()
              << " batches per epoch, the last one of " << 60000 % 128 << "\n";
    // The first 12 labels of the next epoch's first batch (begin() starts an epoch).
    auto first_labels = [](data::DataLoader& l) {
      return ints(l.begin()->target.narrow(0, 0, 12));
    };
    std::cout << "first 12 labels of epoch 0's first batch: " << first_labels(loader) << "\n";
    std::cout << "first 12 labels of epoch 1's first batch: " << first_labels(loader) << "\n";
    data::DataLoader again(train_data, data::DataLoaderOptions(128).shuffle(true).seed(0));
    std::cout << "a new loader with seed 0, epoch 0:          " << first_labels(again)
              << " (the same)\n";
    data::DataLoader in_order(train_data, data::DataLoaderOptions(128));
    std::cout << "without shuffle (file order):               " << first_labels(in_order) << "\n";
  }

  section("7. training: 5 epochs of Adam on the full 60000 images");
  glass::manual_seed(0);
  model = MLP(784, 512, 10);
  model->to(device);  // before the optimizer, so that its state is made on the device
  optim::Adam optimizer(model->parameters(), optim::AdamOptions(1e-3));
  data::DataLoader train_loader(
      data::TensorDataset(normalize(train_set.images()), train_set.labels()),
      data::DataLoaderOptions(128).shuffle(true).seed(0).pin_memory(device.is_cuda()));
  data::DataLoader test_loader(data::TensorDataset(normalize(test_set.images()), test_set.labels()),
                               data::DataLoaderOptions(1000));
  std::cout << "MLP 784-512-512-10, Adam(lr 1e-3, halved after every epoch), batch 128, seed 0\n";
  Evaluation result;
  const int epochs = 5;
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    const double lr = optimizer.param_groups()[0].options().get_lr();
    auto start = std::chrono::steady_clock::now();
    model->train();
    double loss_sum = 0;  // sum over samples of their loss, for the epoch's mean
    int64_t seen = 0;
    for (data::Example& batch : train_loader) {
      const Tensor x = batch.data.to(device, /*non_blocking=*/true);  // no copy on the CPU
      const Tensor y = batch.target.to(device, /*non_blocking=*/true);
      optimizer.zero_grad();                      // 1. forget the last step's gradients
      Tensor logits = model->forward(x);          // 2. forward: (B, 10), records the graph
      Tensor loss = F::cross_entropy(logits, y);  // 3. one number: the batch's mean loss
      loss.backward();                            // 4. .grad() of every parameter
      optimizer.step();                           // 5. update in place, no graph
      loss_sum += loss.item<double>() * static_cast<double>(batch.data.size(0));
      seen += batch.data.size(0);
    }
    const double train_seconds = seconds_since(start);
    result = evaluate(*model, test_loader);
    std::ostringstream line;
    line << "epoch " << epoch << "/" << epochs << "  lr " << std::scientific << std::setprecision(2)
         << lr << "  train loss " << fixed(loss_sum / static_cast<double>(seen), 4)
         << "  test loss " << fixed(result.loss, 4) << "  test accuracy "
         << fixed(result.accuracy(), 2) << "%";
    std::cout << line.str() << "\n";
    std::cerr << line.str() << "  time " << fixed(train_seconds, 2) << " s  "
              << grouped(std::llround(static_cast<double>(seen) / train_seconds)) << " samples/s\n";
    optimizer.param_groups()[0].options().set_lr(lr / 2);  // a step schedule, by hand
  }
  std::cout << "final test accuracy: " << result.correct << " / " << result.total << " = "
            << fixed(result.accuracy(), 2) << "%\n";
  std::cout << "per class (of 1000 test images each), and the class it is most often taken for:\n";
  for (size_t c = 0; c < 10; ++c) {
    const std::vector<int64_t>& row = result.confusion[c];
    size_t worst = c == 0 ? 1 : 0;  // the most frequent wrong prediction
    for (size_t k = 0; k < 10; ++k)
      if (k != c && row[k] > row[worst]) worst = k;
    int64_t n = 0;
    for (int64_t count : row) n += count;
    std::cout << "   " << c << " " << std::left << std::setw(12)
              << data::FashionMNIST::class_names()[c] << std::right << std::setw(6)
              << fixed(100.0 * static_cast<double>(row[c]) / static_cast<double>(n), 1) << "%   "
              << std::left << std::setw(12) << data::FashionMNIST::class_names()[worst]
              << std::right << std::setw(4) << row[worst] << "\n";
  }

  section("8. a checkpoint: save, then load into a fresh model");
  {
    const std::filesystem::path path =
        std::filesystem::temp_directory_path() /
        ("glass_lesson06_" + std::to_string(::getpid()) + ".safetensors");
    // Messages name the file; print "<file>" so that the output does not depend on the path.
    auto without_path = [&](std::string s) {
      for (size_t at; (at = s.find(path.string())) != std::string::npos;)
        s.replace(at, path.string().size(), "<file>");
      return s;
    };
    glass::save(*model, path.string(), {{"format", "pt"}, {"lesson", "06_training"}});
    std::ifstream in(path, std::ios::binary);
    unsigned char len_bytes[8];
    in.read(reinterpret_cast<char*>(len_bytes), 8);
    uint64_t header_len = 0;
    for (int i = 7; i >= 0; --i) header_len = header_len << 8 | len_bytes[i];  // little-endian
    std::string header(header_len, ' ');
    in.read(header.data(), static_cast<std::streamsize>(header_len));
    const auto file_size = static_cast<int64_t>(std::filesystem::file_size(path));
    std::cout << "glass::save(*model, <file>, metadata): " << grouped(file_size) << " bytes\n";
    std::cout << "   [8 bytes]   little-endian u64 N = " << header_len << "\n";
    std::cout << "   [N bytes]   JSON: "
              << header.substr(0, header.find('}', header.find("fc1.bias")) + 1) << ",...}\n";
    std::cout << "   [the rest]  " << grouped(file_size - 8 - static_cast<int64_t>(header_len))
              << " bytes = " << grouped(total) << " float32 values * 4\n";
    glass::SafetensorsReader reader(path.string());
    std::cout << "glass::SafetensorsReader(<file>).entries(), in data order:\n";
    for (const auto& e : reader.entries()) {
      std::string shape = "[";
      for (size_t d = 0; d < e.shape.size(); ++d)
        shape += (d ? ", " : "") + std::to_string(e.shape[d]);
      std::cout << "   " << std::left << std::setw(12) << e.name << std::setw(5)
                << glass::safetensors::dtype_name(e.dtype) << std::setw(12) << shape + "]"
                << std::right << "bytes [" << e.begin << ", " << e.end << ")\n";
    }

    glass::manual_seed(1);
    MLP fresh(784, 512, 10);
    std::cout << "a fresh MLP (seed 1):   test accuracy "
              << fixed(evaluate(*fresh, test_loader).accuracy(), 2) << "%\n";
    glass::load(*fresh, path.string());
    bool identical = true;
    auto saved = model->named_parameters(), loaded = fresh->named_parameters();
    for (size_t i = 0; i < saved.size(); ++i)
      identical = identical && bitwise_equal(saved[i].second, loaded[i].second);
    std::cout << "glass::load(*fresh, <file>): every tensor equal bit for bit " << yes_no(identical)
              << ", test accuracy " << fixed(evaluate(*fresh, test_loader).accuracy(), 2)
              << "% (the trained model: " << fixed(result.accuracy(), 2) << "%)\n";

    glass::manual_seed(2);
    MLP narrow(784, 256, 10);
    Tensor kept = narrow->fc1->weight.detach().clone();
    std::cout << "loading it into an MLP 784-256-10 instead:\n";
    try {
      glass::load(*narrow, path.string());
      std::cout << "   (no error)\n";
    } catch (const glass::Error& e) {
      std::cout << "   glass::Error: " << without_path(e.what()) << "\n";
    }
    std::cout << "   that model's weights are untouched (all-or-nothing): "
              << yes_no(bitwise_equal(narrow->fc1->weight, kept)) << "\n";
    std::filesystem::remove(path);
  }
  return 0;
}
