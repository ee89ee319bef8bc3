# LBO_ARCH: the instruction set lbo is compiled for, passed to -march=.
#
# Eigen's products and triangular solves (every fit, every proposal's refinement and rebuild)
# run on vector units whose width the compiler picks from -march: x86-64's baseline is SSE2,
# 2 doubles and no fused multiply-add. With x86-64-v3 (AVX2 and FMA: 4 doubles, fused), a
# triangular solve on 700 points took 35 µs instead of 50, and a simulated burst of 2,048 slots
# ran in two thirds of the real time (bench/README, simulated scale, tenth run).
#   auto (default)  x86-64-v3 where the compiler takes it and the machine that builds runs it
#                   (x86 CPUs since Intel Haswell, 2013, and AMD Zen, 2017); elsewhere (ARM,
#                   older CPUs, a cross-compile) the compiler's default
#   none            the compiler's default: for compute nodes older than the machine that builds
#   anything else   -march=<value> (native, x86-64-v4, znver3, ...)
# A binary built for x86-64-v3 stops with "Illegal instruction" on a CPU without AVX2: build
# where the trials' nodes are alike, or configure with -DLBO_ARCH=none.
#
# Sets LBO_ARCH_FLAGS (empty, or "-march=..."), adds it to every target of this build and, for
# code that embeds the installed libraries, to their interface (cmake/LboInstall.cmake): Eigen's
# alignment of allocated storage differs with AVX, and objects built both ways must not be mixed.
set(LBO_ARCH "auto" CACHE STRING "Instruction set (-march=): auto, none, or a value for -march")
set(LBO_ARCH_FLAGS "")
if(LBO_ARCH STREQUAL "auto")
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$" AND NOT CMAKE_CROSSCOMPILING)
    include(CheckCXXSourceRuns)
    set(CMAKE_REQUIRED_FLAGS -march=x86-64-v3)
    # Built for x86-64-v3, the check itself stops on an illegal instruction on an older CPU.
    check_cxx_source_runs([[
      int main() {
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2") ? 0 : 1;
      }]] LBO_BUILD_HOST_RUNS_X86_64_V3)
    unset(CMAKE_REQUIRED_FLAGS)
    if(LBO_BUILD_HOST_RUNS_X86_64_V3)
      set(LBO_ARCH_FLAGS -march=x86-64-v3)
    endif()
  endif()
elseif(NOT LBO_ARCH STREQUAL "none" AND NOT LBO_ARCH STREQUAL "")
  set(LBO_ARCH_FLAGS -march=${LBO_ARCH})
endif()
if(LBO_ARCH_FLAGS)
  message(STATUS "lbo: compiled with ${LBO_ARCH_FLAGS} (LBO_ARCH=${LBO_ARCH}; -DLBO_ARCH=none for the compiler's default)")
  add_compile_options(${LBO_ARCH_FLAGS})
else()
  message(STATUS "lbo: compiled for the compiler's default instruction set (LBO_ARCH=${LBO_ARCH})")
endif()

# The arithmetic as written: the compiler does not fuse a * b + c into one rounding on its own
# (GCC's default on C++ is to fuse wherever FMA exists, as on x86-64-v3 and ARM). Where it fuses
# depends on inlining, so the same expression rounded differently in a Release, a Debug and a
# sanitized build, and in a scalar and a vectorized loop (Standardization::invert: 6 of 17
# entries differed under -fsanitize). Eigen's kernels fuse where they ask for it
# (pmadd), so the products and solves keep FMA. Not in the installed interface: how code that
# embeds lbo rounds its own expressions is its own choice.
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  add_compile_options(-ffp-contract=off)
endif()
