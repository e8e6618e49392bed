// The points per direction of a spectral-element kernel as a template argument: the one
// dispatch from a runtime count to the instantiated kernels (constant index arithmetic and
// unrolled sums), shared by the transfer and Schwarz launches. Host code.
#pragma once

#include <type_traits>
#include <utility>

namespace kryflow::kernels::sem {

/// Calls f(std::integral_constant<int, N>{}) for N = points when First <= points <= Last and
/// returns true; returns false (f not called) otherwise, for the caller to name its range.
template <int First, int Last, class F>
bool with_points(int points, F&& f) {
  static_assert(First <= Last, "an empty range of points");
  return [&]<int... I>(std::integer_sequence<int, I...>) {
    return ((points == First + I ? (f(std::integral_constant<int, First + I>{}), true) : false) ||
            ...);
  }
  (std::make_integer_sequence<int, Last - First + 1>{});
}

}  // namespace kryflow::kernels::sem
