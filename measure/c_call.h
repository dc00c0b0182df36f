// Calling a C kernel's entry point (void entry(T0* p0, T1* p1, ...), every parameter a pointer) with
// its pointers in an array: the CPU runner's child and the lookup library's runtime both do.
#pragma once

#include <array>
#include <cstddef>
#include <type_traits>
#include <utility>

namespace autotune::measure {

inline constexpr size_t kMaxKernelParams = 16;

namespace c_call_detail {
using Caller = void (*)(void*, void* const*);
template <size_t... I>
void CallWith(void* fn, void* const* a, std::index_sequence<I...>) {
  using Fn = void (*)(std::conditional_t<true, void*, std::integral_constant<size_t, I>>...);
  reinterpret_cast<Fn>(fn)(a[I]...);
}
template <size_t N>
void CallArity(void* fn, void* const* a) {
  CallWith(fn, a, std::make_index_sequence<N>{});
}
template <size_t... N>
constexpr std::array<Caller, sizeof...(N)> MakeCallers(std::index_sequence<N...>) {
  return {&CallArity<N>...};
}
inline constexpr auto kCallers = MakeCallers(std::make_index_sequence<kMaxKernelParams + 1>{});
}  // namespace c_call_detail

// Calls `fn` with args[0..n-1]; n at most kMaxKernelParams.
inline void CallCKernel(void* fn, void* const* args, size_t n) { c_call_detail::kCallers[n](fn, args); }

// Calls a kernel's pack function (tir/packed_layout.h): `packed` made from `tensor`.
inline void CallPackFunction(void* fn, const void* tensor, void* packed) {
  void* args[2] = {const_cast<void*>(tensor), packed};
  CallCKernel(fn, args, 2);
}

}  // namespace autotune::measure
