// Storage precision of matrix values. Vectors and all arithmetic stay in double: a matrix whose
// values are stored in float converts each value to double before the product, so float storage
// halves the value bytes an SpMV moves while the sums keep double precision (the mixed-precision
// layout of AINV and multigrid levels stored in float).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "kryflow/core/error.hpp"

namespace kryflow {

/// How a matrix stores its values.
enum class Precision {
  float64,  ///< double, 8 bytes per value
  float32,  ///< float, 4 bytes per value; products and sums in double
};

/// Bytes per stored value.
constexpr std::size_t value_bytes(Precision precision) noexcept {
  return precision == Precision::float32 ? 4 : 8;
}

/// "float64" or "float32".
constexpr std::string_view to_string(Precision precision) noexcept {
  return precision == Precision::float32 ? "float32" : "float64";
}

/// Parses "float64"/"double" or "float32"/"float". Throws InvalidInput naming the valid choices.
inline Precision precision_from_string(std::string_view name) {
  if (name == "float64" || name == "double") return Precision::float64;
  if (name == "float32" || name == "float") return Precision::float32;
  throw InvalidInput("unknown precision '" + std::string(name) +
                     "': valid choices are float64 (double) and float32 (float)");
}

}  // namespace kryflow
