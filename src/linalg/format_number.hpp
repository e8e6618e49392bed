// printf-style formatting of one number into a std::string, for the advice texts of src/linalg.
#pragma once

#include <cstdio>
#include <string>

namespace kryflow::detail {

/// `value` formatted by the printf conversion `format` (e.g. "%.2f"); at most 63 characters.
inline std::string format_number(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

}  // namespace kryflow::detail
