// lessons/03_broadcasting/main.cpp — lesson 03 as a program: how tensors of different
// shapes meet in one elementwise op (broadcasting, stride 0, TensorIterator, dtypes).
//
// The lesson_03_output test runs this program and compares its stdout with the blocks
// quoted in README.md, so the text cannot drift from the code: change one, re-run, and
// update the other (`check_lesson_output --update` rewrites the README's blocks).
#include <glass/glass.h>

#include <functional>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

using glass::IntArrayRef;
using glass::Tensor;

std::string str(IntArrayRef a) {
  std::ostringstream os;
  os << a;
  return os.str();
}

const char* yes_no(bool b) { return b ? "yes" : "no"; }

void section(const char* title) { std::cout << "== " << title << " ==\n"; }

void print_error(const std::function<void()>& f) {
  try {
    f();
    std::cout << "   (no error)\n";
  } catch (const glass::Error& e) {
    std::cout << "   glass::Error: " << e.what() << "\n";
  }
}

// What TensorIterator made of `a op b`: the loop shape (innermost dim first) and each
// operand's byte strides over it. The kernel sees nothing else.
void show_iteration(const char* name, const Tensor& a, const Tensor& b) {
  glass::TensorIterator it =
      glass::TensorIteratorConfig("add").add_output(Tensor()).add_input(a).add_input(b).build();
  std::cout << name << "\n";
  std::cout << "   loop shape " << std::setw(10) << std::left << str(it.shape())
            << " byte strides: out " << std::setw(9) << str(it.strides(0)) << " a " << std::setw(9)
            << str(it.strides(1)) << " b " << str(it.strides(2)) << "\n";
  std::cout << "   result sizes " << it.output().sizes() << ", strides " << it.output().strides()
            << "\n";
}

void show_dtype(const char* name, const Tensor& r) {
  std::cout << std::left << std::setw(48) << name << " -> " << std::setw(7)
            << glass::to_string(r.dtype()) << r << "\n";
}

}  // namespace

int main() {
  section("1. the rule: align on the right, sizes equal or 1");
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> pairs = {
      {{2, 3}, {3}}, {{3, 1}, {1, 4}}, {{5, 1, 4}, {3, 1}},       {{}, {2, 3}},
      {{4, 1}, {4}}, {{2, 3}, {4}},    {{2, 3, 4}, {3, 1, 1, 4}},
  };
  for (const auto& [a, b] : pairs) {
    std::cout << std::left << std::setw(10) << str(a) << " and " << std::setw(13) << str(b);
    try {
      glass::Shape out = glass::broadcast_shapes(a, b);
      std::cout << "-> " << IntArrayRef(out) << "\n";
    } catch (const glass::Error& e) {
      std::cout << "-> glass::Error: " << e.what() << "\n";
    }
  }

  section("2. broadcasting in an op");
  Tensor x = glass::arange(6, glass::kFloat).view({2, 3});
  Tensor row = glass::tensor({10., 20., 30.});
  std::cout << "x = arange(6, kFloat).view({2, 3}); row = tensor({10., 20., 30.})\n";
  std::cout << "x + row:\n" << x + row << "\n";
  Tensor col = glass::arange(1, 4).view({3, 1});
  Tensor line = glass::arange(1, 5);
  std::cout << "arange(1, 4).view({3, 1}) * arange(1, 5):  [3, 1] * [4] -> [3, 4]\n"
            << col * line << "\n";
  std::cout << "x + arange(4):\n";
  print_error([&] { x + glass::arange(4); });

  section("3. expand: a broadcast is a view with stride 0");
  Tensor re = row.expand({2, 3});
  std::cout << "re = row.expand({2, 3}): sizes " << re.sizes() << ", strides " << re.strides()
            << ", is_alias_of(row) " << yes_no(re.is_alias_of(row)) << "\n";
  std::cout << "storage element of [0][2]: " << glass::storage_index(re, {0, 2})
            << ", of [1][2]: " << glass::storage_index(re, {1, 2}) << "\n";
  Tensor ce = col.expand({3, 4});
  std::cout << "arange(1, 4).view({3, 1}).expand({3, 4}): strides " << ce.strides() << "\n"
            << ce << "\n";
  std::vector<Tensor> both = glass::broadcast_tensors({col, line});
  std::cout << "broadcast_tensors({[3, 1], [4]}): strides " << both[0].strides() << " and "
            << both[1].strides() << ", sizes " << both[0].sizes() << "\n";
  std::cout << "re.add_(1), writing through the stride-0 view:\n";
  print_error([&] { re.add_(1); });

  section("4. TensorIterator: stride 0 for broadcast operands, then coalesce");
  Tensor a3 = glass::arange(24, glass::kFloat).view({2, 3, 4});
  show_iteration("[2, 3] + [3]", x, row);
  show_iteration("[3, 1] + [1, 4]", col.to(glass::kFloat), line.to(glass::kFloat).view({1, 4}));
  show_iteration("[2, 3, 4] + [2, 3, 4], both contiguous", a3, a3);
  show_iteration("[2, 3, 4] + 0-dim", a3, glass::scalar_tensor(1.0));
  Tensor xt = glass::arange(6, glass::kFloat).view({3, 2}).t();
  show_iteration("xt + xt, xt = arange(6, kFloat).view({3, 2}).t()", xt, xt);

  section("5. type promotion: which dtype the result gets");
  Tensor li = glass::arange(3);
  Tensor fl = glass::arange(3, glass::kFloat);
  show_dtype("arange(3) * 2            (Long, int)", li * 2);
  show_dtype("arange(3) * 2.5          (Long, double)", li * 2.5);
  show_dtype("arange(3, kFloat) * 2.5  (Float, double)", fl * 2.5);
  show_dtype("arange(3, kFloat) * scalar_tensor(2.5, kDouble)",
             fl * glass::scalar_tensor(2.5, glass::kDouble));
  show_dtype("arange(3) * scalar_tensor(2.5, kDouble)",
             li * glass::scalar_tensor(2.5, glass::kDouble));
  show_dtype("arange(3, kFloat) + arange(3, kDouble)", fl + glass::arange(3, glass::kDouble));
  show_dtype("arange(3, kInt) + scalar_tensor(1)",
             glass::arange(3, glass::kInt) + glass::scalar_tensor(1));
  show_dtype("(arange(3) > 0) + 1", (li > 0) + 1);
  show_dtype("arange(3) / 2            (true division)", li / 2);
  std::cout << "result_type(arange(3), 2.5) = " << glass::result_type(li, 2.5) << "\n";
  std::cout << "li = arange(3); li.mul_(2.5):\n";
  print_error([&] { li.mul_(2.5); });

  section("6. in-place ops keep their tensor's shape");
  Tensor acc = glass::zeros({2, 3});
  acc.add_(row);
  std::cout << "acc = zeros({2, 3}); acc.add_(row)  ([2, 3] += [3] is fine):\n" << acc << "\n";
  std::cout << "r = zeros({3}); r.add_(x)  ([3] += [2, 3] would need a bigger r):\n";
  print_error([&] {
    Tensor r = glass::zeros({3});
    r.add_(x);
  });

  section("7. MyReLU's backward: masking with a broadcast comparison");
  Tensor input = glass::tensor({{-1.5, 0.5, 2.0}, {3.0, -0.5, -2.0}});
  Tensor grad_output = glass::arange(1, 7, glass::kFloat).view({2, 3});
  Tensor mask = input < 0;  // the 0 is a 0-dim operand: stride 0 against every element
  std::cout << "input:\n" << input << "\ngrad_output:\n" << grad_output << "\n";
  std::cout << "input < 0:\n" << mask << "\n";
  Tensor grad_input = grad_output.clone();
  grad_input.index_put_({input < 0}, 0);
  std::cout << "grad_input = grad_output.clone(); grad_input.index_put_({input < 0}, 0):\n"
            << grad_input << "\n";
  std::cout << "same as grad_output * (input >= 0), where Float * Bool -> Float:\n"
            << grad_output * (input >= 0) << "\n";
  return 0;
}
