# cmake/GlassCuda.cmake — turning on nvcc in a directory, the same way everywhere.
#
# enable_language(CUDA) and the variables around it act per directory scope, so cuda/, bench/
# and tests/ each call glass_enable_cuda() where they compile .cu files with nvcc. A macro, not
# a function: enable_language must run in the directory's own scope.
#
#   - CMAKE_CUDA_ARCHITECTURES from GLASS_CUDA_ARCHS (cuda/CMakeLists.txt says why not
#     `native`), set before enable_language, which reads it;
#   - ccache for nvcc too, when the C++ compiler has a launcher;
#   - CMake 3.25 knows no C++20 flag for nvcc (12.0 added it): without one, every target with
#     CUDA sources fails, since CMAKE_CXX_STANDARD_REQUIRED carries over to CUDA.
macro(glass_enable_cuda)
  set(CMAKE_CUDA_ARCHITECTURES ${GLASS_CUDA_ARCHS})
  if(NOT DEFINED CMAKE_CUDA_COMPILER_LAUNCHER AND DEFINED CMAKE_CXX_COMPILER_LAUNCHER)
    set(CMAKE_CUDA_COMPILER_LAUNCHER ${CMAKE_CXX_COMPILER_LAUNCHER})
  endif()
  enable_language(CUDA)
  if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  endif()
endmacro()
