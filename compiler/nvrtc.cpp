// compiler/nvrtc.cpp — libnvrtc opened with dlopen, and the small standard headers NVRTC is
// given (nvrtc.h). Invariant: only NVRTC's stable C entry points are used, declared here with
// their documented signatures, so nothing of the toolkit is needed to build this file.
#include "compiler/nvrtc.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <sstream>
#include <vector>

#include "compiler/kernel_cache.h"
#include "core/error.h"

namespace glass::compiler {
namespace {

// NVRTC's C API (nvrtc.h): every call returns an nvrtcResult, 0 on success.
using Program = struct NvrtcProgram*;
struct Api {
  void* handle = nullptr;
  std::string why;  // why it was not found
  int major = 0, minor = 0;
  int (*version)(int*, int*) = nullptr;
  int (*create)(Program*, const char*, const char*, int, const char* const*,
                const char* const*) = nullptr;
  int (*destroy)(Program*) = nullptr;
  int (*compile)(Program, int, const char* const*) = nullptr;
  int (*log_size)(Program, size_t*) = nullptr;
  int (*log)(Program, char*) = nullptr;
  int (*cubin_size)(Program, size_t*) = nullptr;
  int (*cubin)(Program, char*) = nullptr;
  const char* (*error_string)(int) = nullptr;
};

// Not named bind: with <functional> included, a call with a std::string argument finds
// std::bind by argument-dependent lookup, which wins overload resolution and binds nothing.
template <class Fn>
void bind_symbol(const Api& api, Fn*& fn, const char* name, std::string& missing) {
  fn = reinterpret_cast<Fn*>(::dlsym(api.handle, name));
  if (!fn) missing += std::string(missing.empty() ? "" : ", ") + name;
}

const Api& api() {
  static const Api loaded = [] {
    Api a;
    std::vector<std::string> names = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"};
    for (const char* home : {std::getenv("CUDA_HOME"), std::getenv("CUDA_PATH")})
      if (home && *home) names.push_back(std::string(home) + "/lib64/libnvrtc.so");
    names.push_back("/usr/local/cuda/lib64/libnvrtc.so");
    for (const std::string& name : names)
      if ((a.handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
    if (!a.handle) {
      a.why = "libnvrtc.so was not found (install the CUDA toolkit, or set CUDA_HOME)";
      return a;
    }
    std::string missing;
    bind_symbol(a, a.version, "nvrtcVersion", missing);
    bind_symbol(a, a.create, "nvrtcCreateProgram", missing);
    bind_symbol(a, a.destroy, "nvrtcDestroyProgram", missing);
    bind_symbol(a, a.compile, "nvrtcCompileProgram", missing);
    bind_symbol(a, a.log_size, "nvrtcGetProgramLogSize", missing);
    bind_symbol(a, a.log, "nvrtcGetProgramLog", missing);
    bind_symbol(a, a.cubin_size, "nvrtcGetCUBINSize", missing);
    bind_symbol(a, a.cubin, "nvrtcGetCUBIN", missing);
    bind_symbol(a, a.error_string, "nvrtcGetErrorString", missing);
    if (!missing.empty()) {
      a.why = "libnvrtc.so lacks " + missing + " (NVRTC 11.1 or newer is needed)";
      return a;
    }
    a.version(&a.major, &a.minor);
    return a;
  }();
  return loaded;
}

// The standard names the kernels' headers use, for a compiler that has no standard
// library. Each is the whole header NVRTC sees under that name.
const char* const kStdHeaderNames[] = {"cstddef", "cstdint", "type_traits", "limits",
                                       "math.h",  "cmath",   "stdint.h"};
const char* const kStdHeaders[] = {
    // cstddef
    "#pragma once\n"
    "typedef decltype(sizeof(0)) size_t;\n"
    "typedef decltype((char*)0 - (char*)0) ptrdiff_t;\n"
    "namespace std { using ::size_t; using ::ptrdiff_t; }\n",
    // cstdint
    "#pragma once\n"
    "typedef signed char int8_t; typedef unsigned char uint8_t;\n"
    "typedef short int16_t; typedef unsigned short uint16_t;\n"
    "typedef int int32_t; typedef unsigned int uint32_t;\n"
    "typedef long long int64_t; typedef unsigned long long uint64_t;\n"
    "typedef unsigned long long uintptr_t;\n"
    "#define INT64_C(c) c##LL\n"
    "namespace std { using ::int8_t; using ::uint8_t; using ::int16_t; using ::uint16_t;\n"
    "  using ::int32_t; using ::uint32_t; using ::int64_t; using ::uint64_t; }\n",
    // type_traits: what the headers ask of it
    "#pragma once\n"
    "namespace std {\n"
    "template <class T, T v> struct integral_constant { static constexpr T value = v; };\n"
    "using true_type = integral_constant<bool, true>;\n"
    "using false_type = integral_constant<bool, false>;\n"
    "template <class A, class B> struct is_same : false_type {};\n"
    "template <class A> struct is_same<A, A> : true_type {};\n"
    "template <class A, class B> inline constexpr bool is_same_v = is_same<A, B>::value;\n"
    "template <class T> struct remove_cv { using type = T; };\n"
    "template <class T> struct remove_cv<const T> { using type = T; };\n"
    "template <class T> struct remove_cv<volatile T> { using type = T; };\n"
    "template <class T> struct remove_cv<const volatile T> { using type = T; };\n"
    "template <class T> using remove_cv_t = typename remove_cv<T>::type;\n"
    "template <class T> struct is_integral_base : false_type {};\n"
    "#define GLASS_INTEGRAL(T) template <> struct is_integral_base<T> : true_type {};\n"
    "GLASS_INTEGRAL(bool) GLASS_INTEGRAL(char) GLASS_INTEGRAL(signed char)\n"
    "GLASS_INTEGRAL(unsigned char) GLASS_INTEGRAL(short) GLASS_INTEGRAL(unsigned short)\n"
    "GLASS_INTEGRAL(int) GLASS_INTEGRAL(unsigned int) GLASS_INTEGRAL(long)\n"
    "GLASS_INTEGRAL(unsigned long) GLASS_INTEGRAL(long long) GLASS_INTEGRAL(unsigned long long)\n"
    "#undef GLASS_INTEGRAL\n"
    "template <class T> struct is_integral : is_integral_base<remove_cv_t<T>> {};\n"
    "template <class T> inline constexpr bool is_integral_v = is_integral<T>::value;\n"
    "template <class T> struct is_floating_point : integral_constant<bool,\n"
    "  is_same_v<remove_cv_t<T>, float> || is_same_v<remove_cv_t<T>, double> ||\n"
    "  is_same_v<remove_cv_t<T>, long double>> {};\n"
    "template <class T> inline constexpr bool is_floating_point_v = "
    "is_floating_point<T>::value;\n"
    "template <class T> struct type_identity { using type = T; };\n"
    "template <class T> using type_identity_t = typename type_identity<T>::type;\n"
    "}  // namespace std\n",
    // limits: the infinities and NaNs generated literals name, from their bits
    "#pragma once\n"
    "namespace std {\n"
    "template <class T> struct numeric_limits;\n"
    "template <> struct numeric_limits<double> {\n"
    "  static double infinity() { return __longlong_as_double(0x7ff0000000000000LL); }\n"
    "  static double quiet_NaN() { return __longlong_as_double(0x7ff8000000000000LL); }\n"
    "};\n"
    "template <> struct numeric_limits<float> {\n"
    "  static float infinity() { return __int_as_float(0x7f800000); }\n"
    "  static float quiet_NaN() { return __int_as_float(0x7fc00000); }\n"
    "};\n"
    "}  // namespace std\n",
    // math.h, cmath: NVRTC declares the device math functions itself
    "#pragma once\n",
    "#pragma once\n",
    // stdint.h
    "#pragma once\n#include <cstdint>\n",
};
static_assert(std::size(kStdHeaderNames) == std::size(kStdHeaders));

std::string numbered(const std::string& source) {
  std::ostringstream out;
  std::istringstream in(source);
  int n = 0;
  for (std::string line; std::getline(in, line);) out << ++n << " | " << line << '\n';
  return out.str();
}

// C++20, as the project's nvcc build; every function a device function (-default-device),
// so constexpr helpers of the headers need no annotation.
std::vector<std::string> compile_options(int major, int minor, const std::string& include_dir) {
  return {"--gpu-architecture=sm_" + std::to_string(major) + std::to_string(minor),
          "--include-path=" + include_dir, "-std=c++20", "-default-device"};
}

}  // namespace

std::string nvrtc_unavailable() { return api().why; }

std::string nvrtc_version() {
  const Api& a = api();
  return a.handle ? std::to_string(a.major) + "." + std::to_string(a.minor) : "";
}

std::string nvrtc_compile(const std::string& source, const std::string& name, int major, int minor,
                          const std::string& include_dir) {
  const Api& a = api();
  GLASS_CHECK(a.why.empty(), "nvrtc: ", a.why);
  Program program = nullptr;
  // The program is named as a file in the include folder: NVRTC resolves the source's quoted
  // includes from its directory, which for a bare name is the working directory, where a
  // source tree (cuda/kernel.h) would be found beside the embedded headers and included twice.
  const std::string path = include_dir + "/" + name;
  int r = a.create(&program, source.c_str(), path.c_str(), static_cast<int>(std::size(kStdHeaders)),
                   kStdHeaders, kStdHeaderNames);
  GLASS_CHECK(r == 0, "nvrtc: nvrtcCreateProgram failed: ", a.error_string(r));
  const std::vector<std::string> options = compile_options(major, minor, include_dir);
  std::vector<const char*> argv;
  for (const std::string& o : options) argv.push_back(o.c_str());
  r = a.compile(program, static_cast<int>(argv.size()), argv.data());
  size_t log_size = 0;
  a.log_size(program, &log_size);
  std::string log(log_size, '\0');
  if (log_size > 0) a.log(program, log.data());
  while (!log.empty() && log.back() == '\0') log.pop_back();  // the size counts the terminator
  std::string cubin;
  if (r == 0) {
    size_t size = 0;
    a.cubin_size(program, &size);
    cubin.resize(size);
    a.cubin(program, cubin.data());
  }
  a.destroy(&program);
  GLASS_CHECK(r == 0, "nvrtc: the generated kernel did not compile for sm_", major, minor, " (",
              a.error_string(r), ", NVRTC ", nvrtc_version(), ")\n", log,
              "--- generated source ---\n", numbered(source));
  return cubin;
}

std::string nvrtc_compile_cached(const std::string& source, const std::string& name, int major,
                                 int minor, const std::string& include_dir,
                                 const std::string& headers_key) {
  GLASS_CHECK(api().why.empty(), "nvrtc: ", api().why);
  std::string material = "nvrtc " + nvrtc_version() + '\0' + name + '\0';
  for (const std::string& o : compile_options(major, minor, include_dir)) material += o + '\0';
  for (size_t i = 0; i < std::size(kStdHeaders); ++i)
    material += std::string(kStdHeaderNames[i]) + '\0' + kStdHeaders[i] + '\0';
  material += headers_key;
  return load_or_build(source, material, "cubin",
                       [&] { return nvrtc_compile(source, name, major, minor, include_dir); });
}

}  // namespace glass::compiler
