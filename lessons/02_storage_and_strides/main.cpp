// lessons/02_storage_and_strides/main.cpp — lesson 02 as a program: a tensor is
// (storage, sizes, strides, offset, dtype), and every view only rewrites that metadata.
//
// The lesson_02_output test runs this program and compares its stdout with the blocks
// quoted in README.md, so the text cannot drift from the code: change one, re-run, and
// update the other (`check_lesson_output --update` rewrites the README's blocks).
#include <glass/glass.h>

#include <cstdint>
#include <functional>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
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

// The element t[i0][i1]..., reached by select(), which is itself a view: nothing is copied
// until item() reads the one value.
int64_t element(const Tensor& t, IntArrayRef index) {
  Tensor e = t;
  for (int64_t i : index) e = e.select(0, i);
  return e.item<int64_t>();
}

// "offset + i0*s0 + i1*s1 + ... = addr", spelled out with the tensor's own numbers.
std::string formula(const Tensor& t, IntArrayRef index) {
  std::ostringstream os;
  os << t.storage_offset();
  for (size_t d = 0; d < index.size(); ++d) os << " + " << index[d] << "*" << t.stride(d);
  os << " = " << glass::storage_index(t, index);
  return os.str();
}

void print_error(const std::function<void()>& f) {
  try {
    f();
    std::cout << "   (no error)\n";
  } catch (const glass::Error& e) {
    std::cout << "   glass::Error: " << e.what() << "\n";
  }
}

int64_t allocations() { return glass::cpu_memory_stats().num_allocs; }

}  // namespace

int main() {
  // arange writes 0, 1, 2, ... into a fresh storage, so in x and in every view of x the
  // value of an element *is* its storage index: the printout checks the arithmetic.
  Tensor x = glass::arange(12).view({3, 4});

  section("1. a tensor is metadata over a storage");
  std::cout << "x = arange(12).view({3, 4})\n" << x << "\n";
  std::cout << "dtype " << x.dtype() << " (" << x.element_size() << " bytes per element)"
            << ", sizes " << x.sizes() << ", strides " << x.strides() << ", storage_offset "
            << x.storage_offset() << "\n";
  std::cout << "storage: " << x.storage().nbytes()
            << " bytes = " << x.storage().nbytes() / x.element_size() << " elements\n";

  section("2. the address formula, by hand");
  struct Case {
    const char* name;
    Tensor t;
    std::vector<int64_t> index;
  };
  const std::vector<Case> cases = {
      {"x[1][2]", x, {1, 2}},
      {"x.t()[1][2]", x.t(), {1, 2}},
      {"x.slice(0, 0, 3, 2)[1][2]", x.slice(0, 0, 3, 2), {1, 2}},
      {"x.slice(1, 1, 4, 2)[2][1]", x.slice(1, 1, 4, 2), {2, 1}},
  };
  for (const Case& c : cases) {
    std::cout << std::left << std::setw(27) << c.name << " strides " << std::setw(7)
              << str(c.t.strides()) << " offset " << c.t.storage_offset()
              << "   addr = " << std::setw(19) << formula(c.t, c.index) << "  value "
              << element(c.t, c.index) << "\n";
  }
  // The same element found through raw pointers: strides count elements, bytes come last.
  Tensor e = x.t().select(0, 1).select(0, 2);
  auto bytes =
      static_cast<const char*>(e.data_ptr()) - static_cast<const char*>(x.storage().data());
  std::cout << "x.t()[1][2] lives " << bytes
            << " bytes into the storage = " << bytes / x.element_size() << " elements * "
            << x.element_size() << " bytes\n";

  section("3. views rewrite only (sizes, strides, offset)");
  Tensor y = glass::arange(24).view({2, 3, 4});
  int64_t before = allocations();
  const std::vector<std::pair<const char*, Tensor>> views = {
      {"x", x},
      {"x.transpose(0, 1)", x.transpose(0, 1)},
      {"y.permute({2, 0, 1})", y.permute({2, 0, 1})},
      {"x.unsqueeze(0).expand({2, 3, 4})", x.unsqueeze(0).expand({2, 3, 4})},
      {"x.slice(0, 0, 3, 2)", x.slice(0, 0, 3, 2)},
      {"x.slice(1, 1, 4, 2)", x.slice(1, 1, 4, 2)},
      {"x.select(0, 1)", x.select(0, 1)},
      {"x.select(1, 2)", x.select(1, 2)},
      {"x.unsqueeze(1)", x.unsqueeze(1)},
      {"x.narrow(1, 1, 2)", x.narrow(1, 1, 2)},
      {"x.diagonal()", x.diagonal()},
      {"x.diagonal(1)", x.diagonal(1)},
      {"x.as_strided({2, 2}, {1, 6}, 3)", x.as_strided({2, 2}, {1, 6}, 3)},
  };
  int64_t after = allocations();
  std::cout << std::left << std::setw(34) << "view" << std::setw(11) << "sizes" << std::setw(12)
            << "strides" << std::setw(7) << "offset"
            << "contiguous\n";
  for (const auto& [name, v] : views) {
    std::cout << std::setw(34) << name << std::setw(11) << str(v.sizes()) << std::setw(12)
              << str(v.strides()) << std::setw(7) << v.storage_offset() << yes_no(v.is_contiguous())
              << "\n";
  }

  section("4. zero cost: same storage, no allocation");
  bool all_alias = true;
  for (const auto& [name, v] : views) {
    const Tensor& base = std::string(name).starts_with("y") ? y : x;  // each row names its base
    all_alias = all_alias && v.is_alias_of(base);
  }
  std::cout << "views made: " << views.size() - 1 << ", allocations they made: " << after - before
            << ", every view is_alias_of its base: " << yes_no(all_alias) << "\n";
  std::cout << "x.diagonal(1) reads storage elements " << x.diagonal(1) << "\n";
  std::cout << "x.unsqueeze(0).expand({2, 3, 4})[1][2][3] and [0][2][3] are both storage element "
            << glass::storage_index(x.unsqueeze(0).expand({2, 3, 4}), {1, 2, 3}) << "\n";

  section("5. contiguous(), view() and reshape()");
  std::cout << "x.is_contiguous(): " << yes_no(x.is_contiguous())
            << " -> x.contiguous() is x itself: " << yes_no(x.contiguous().is_same(x)) << "\n";
  Tensor t = x.t();
  before = allocations();
  Tensor tc = t.contiguous();
  after = allocations();
  std::cout << "t = x.t(): is_contiguous() " << yes_no(t.is_contiguous()) << "\n";
  std::cout << "t.contiguous(): sizes " << tc.sizes() << ", strides " << tc.strides()
            << ", is_alias_of(x) " << yes_no(tc.is_alias_of(x)) << ", allocations "
            << after - before << "\n";
  std::cout << "its storage, in memory order: " << tc.view({12}) << "\n";
  std::cout << "t.view({12}):\n";
  print_error([&] { t.view({12}); });
  Tensor r = t.reshape({12});
  std::cout << "t.reshape({12}) copies: is_alias_of(x) " << yes_no(r.is_alias_of(x)) << ", " << r
            << "\n";
  Tensor r2 = x.reshape({2, 6});
  std::cout << "x.reshape({2, 6}) is a view: is_alias_of(x) " << yes_no(r2.is_alias_of(x))
            << ", strides " << r2.strides() << "\n";
  Tensor rows = x.slice(0, 0, 3, 2);
  std::cout << "rows = x.slice(0, 0, 3, 2): sizes " << rows.sizes() << ", strides "
            << rows.strides() << "\n";
  std::cout << "rows.view({2, 2, 2}) works (each row stays in one piece): strides "
            << rows.view({2, 2, 2}).strides() << "\n";
  std::cout << "rows.view({8}):\n";
  print_error([&] { rows.view({8}); });

  section("6. one version counter per storage");
  Tensor v = x.select(0, 1);
  Tensor copy = x.clone();
  std::cout << "v = x.select(0, 1); copy = x.clone()\n";
  uint32_t copy_version = copy._version();
  std::cout << "before v.add_(100): x._version() " << x._version() << ", v._version() "
            << v._version() << "\n";
  v.add_(100);
  std::cout << "after  v.add_(100): x._version() " << x._version() << ", v._version() "
            << v._version()
            << ", copy._version() changed: " << yes_no(copy._version() != copy_version) << "\n";
  std::cout << "x now:\n" << x << "\n";
  // Row 1 and column 2 meet in storage element 6: a write through one is read through the other.
  Tensor col = x.select(1, 2);
  std::cout << "col = x.select(1, 2): " << col << ", col._version() " << col._version() << "\n";
  x.select(0, 1).fill_(0);
  std::cout << "after x.select(0, 1).fill_(0): col " << col << ", col._version() " << col._version()
            << "\n";

  section("7. where storage comes from: the caching allocator");
  bool was_caching = glass::cpu_caching_enabled();
  glass::cpu_set_caching_enabled(true);
  glass::cpu_empty_cache();
  glass::MemoryStats s0 = glass::cpu_memory_stats();
  const void* first_address = nullptr;
  glass::MemoryStats s1;
  {
    Tensor a = glass::empty({256, 1024}, glass::kFloat);
    first_address = a.data_ptr();
    s1 = glass::cpu_memory_stats();
    std::cout << "a = empty({256, 1024}, kFloat): " << a.nbytes() << " bytes; allocated_bytes +"
              << s1.allocated_bytes - s0.allocated_bytes << ", cache hits +"
              << s1.num_cache_hits - s0.num_cache_hits << "\n";
  }
  // The last handle to a's storage is gone: the block goes to the free list, not the OS.
  glass::MemoryStats s2 = glass::cpu_memory_stats();
  std::cout << "a released: allocated_bytes " << s2.allocated_bytes - s1.allocated_bytes
            << ", cached_bytes +" << s2.cached_bytes - s1.cached_bytes << "\n";
  Tensor b = glass::empty({1024, 256}, glass::kFloat);
  glass::MemoryStats s3 = glass::cpu_memory_stats();
  std::cout << "b = empty({1024, 256}, kFloat): cache hits +"
            << s3.num_cache_hits - s2.num_cache_hits
            << ", same block as a: " << yes_no(b.data_ptr() == first_address) << "\n";
  glass::cpu_set_caching_enabled(was_caching);
  return 0;
}
