// core/print.cpp — formatting tensors like torch._tensor_str (see print.h).
#include "core/print.h"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <vector>

#include "core/dispatcher.h"
#include "core/ops/read_value.h"
#include "core/ops/views.h"

namespace glass {
namespace {

constexpr int64_t kThreshold = 1000;  // PyTorch's print options
constexpr int64_t kEdgeItems = 3;
constexpr int64_t kLineWidth = 80;

GradFnNameHook g_grad_fn_hook = nullptr;

// Reads element i (row-major) of a tensor as double, for formatting.
double element(const Tensor& t, IntArrayRef index) {
  int64_t off = storage_index(t.sizes(), t.strides(), 0, index);
  return dispatch_dtype(t.dtype(), "print", [&]<class T>() {
    return static_cast<double>(static_cast<const T*>(t.data_ptr())[off]);
  });
}

// One formatter for all printed values, so columns line up.
class Formatter {
 public:
  Formatter(ScalarType dtype, const std::vector<double>& values) : dtype_(dtype) {
    if (dtype == kBool) {
      width_ = 4;
      for (double v : values) width_ = std::max(width_, v != 0 ? 4 : 5);
      return;
    }
    if (!is_floating_type(dtype)) {
      for (double v : values) width_ = std::max(width_, static_cast<int>(fmt_int(v).size()));
      return;
    }
    std::vector<double> finite;
    int_mode_ = true;
    for (double v : values) {
      if (!std::isfinite(v)) continue;
      if (v != 0) finite.push_back(std::abs(v));
      if (std::ceil(v) != v) int_mode_ = false;
    }
    if (!finite.empty()) {
      double mx = *std::max_element(finite.begin(), finite.end());
      double mn = *std::min_element(finite.begin(), finite.end());
      sci_mode_ = mx / mn > 1000.0 || mx > 1e8 || (!int_mode_ && mn < 1e-4);
    }
    for (double v : values) width_ = std::max(width_, static_cast<int>(raw(v).size()));
  }

  int width() const { return width_; }

  std::string operator()(double v) const {
    std::string s = raw(v);
    return std::string(std::max<int>(0, width_ - static_cast<int>(s.size())), ' ') + s;
  }

 private:
  static std::string fmt_int(double v) { return std::to_string(static_cast<int64_t>(v)); }

  std::string raw(double v) const {
    if (dtype_ == kBool) return v != 0 ? "True" : "False";
    if (!is_floating_type(dtype_)) return fmt_int(v);
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[64];
    if (sci_mode_)
      std::snprintf(buf, sizeof buf, "%.4e", v);
    else if (int_mode_)
      std::snprintf(buf, sizeof buf, "%.0f.", v);
    else
      std::snprintf(buf, sizeof buf, "%.4f", v);
    return buf;
  }

  ScalarType dtype_;
  bool int_mode_ = false, sci_mode_ = false;
  int width_ = 1;
};

// Collects the values that will be printed (the edges only, when summarising).
void collect(const Tensor& t, std::vector<int64_t>& idx, bool summarize, std::vector<double>& out) {
  size_t d = idx.size();
  if (static_cast<int64_t>(d) == t.dim()) {
    out.push_back(element(t, idx));
    return;
  }
  int64_t n = t.size(static_cast<int64_t>(d));
  for (int64_t i = 0; i < n; ++i) {
    if (summarize && n > 2 * kEdgeItems && i == kEdgeItems) i = n - kEdgeItems;
    idx.push_back(i);
    collect(t, idx, summarize, out);
    idx.pop_back();
  }
}

std::string format_dims(const Tensor& t, std::vector<int64_t>& idx, int64_t indent, bool summarize,
                        const Formatter& fmt) {
  int64_t d = static_cast<int64_t>(idx.size());
  int64_t n = t.size(d);
  int64_t remaining = t.dim() - d;
  std::vector<std::string> items;
  for (int64_t i = 0; i < n; ++i) {
    if (summarize && n > 2 * kEdgeItems && i == kEdgeItems) {
      items.push_back(remaining == 1 ? " ..." : "...");
      i = n - kEdgeItems;
    }
    idx.push_back(i);
    items.push_back(remaining == 1 ? fmt(element(t, idx))
                                   : format_dims(t, idx, indent + 1, summarize, fmt));
    idx.pop_back();
  }
  std::string out = "[";
  if (remaining == 1) {
    // Wrap long rows at the line width, as PyTorch does.
    int64_t per_line = std::max<int64_t>(1, (kLineWidth - indent) / (fmt.width() + 2));
    for (size_t i = 0; i < items.size(); ++i) {
      if (i > 0) out += (i % per_line == 0) ? ",\n" + std::string(indent + 1, ' ') : ", ";
      out += items[i];
    }
  } else {
    std::string sep = "," + std::string(remaining - 1, '\n') + std::string(indent + 1, ' ');
    for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  }
  return out + "]";
}

}  // namespace

void set_grad_fn_name_hook(GradFnNameHook hook) { g_grad_fn_hook = hook; }

std::string to_string(const Tensor& t) {
  if (!t.defined()) return "[ Tensor (undefined) ]";
  ops::print(t);
  Tensor c = t.is_cpu() ? t : t.to(Device(kCPU));
  const int64_t indent = 7;  // strlen("tensor(")
  std::string body;
  std::vector<std::string> suffixes;
  if (c.numel() == 0) {
    body = "[]";
    if (!(c.dim() == 1 && c.size(0) == 0)) {
      std::string s = "size=(";
      for (int64_t d = 0; d < c.dim(); ++d) {
        if (d) s += ", ";
        s += std::to_string(c.size(d));
      }
      suffixes.push_back(s + (c.dim() == 1 ? ",)" : ")"));
    }
  } else {
    bool summarize = c.numel() > kThreshold;
    std::vector<int64_t> idx;
    std::vector<double> values;
    collect(c, idx, summarize, values);
    Formatter fmt(c.dtype(), values);
    body = c.dim() == 0 ? fmt(values[0]) : format_dims(c, idx, indent, summarize, fmt);
    if (c.dim() == 0) {  // a scalar prints without padding
      size_t first = body.find_first_not_of(' ');
      body = body.substr(first);
    }
  }
  if (!t.is_cpu()) suffixes.insert(suffixes.begin(), "device='" + t.device().str() + "'");
  bool default_dtype = t.dtype() == get_default_dtype() || t.dtype() == kBool ||
                       (t.dtype() == kInt64 && t.numel() > 0);
  if (!default_dtype) suffixes.push_back(std::string("dtype=torch.") + dtype_name(t.dtype()));
  std::string grad_fn = g_grad_fn_hook ? g_grad_fn_hook(t) : "";
  if (!grad_fn.empty())
    suffixes.push_back("grad_fn=<" + grad_fn + ">");
  else if (t.requires_grad())
    suffixes.push_back("requires_grad=True");
  std::string out = "tensor(" + body;
  for (const std::string& s : suffixes) out += ", " + s;
  return out + ")";
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << to_string(t); }

}  // namespace glass
