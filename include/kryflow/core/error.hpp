// Typed exceptions for misuse and environment failures; numerical outcomes go into SolveReport.
#pragma once

#include <cstddef>
#include <source_location>
#include <stdexcept>
#include <string>

namespace kryflow {

/// Base of every exception kryflow throws. `what()` holds the message; `where()` the place in
/// kryflow's sources that raised it.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message,
                 std::source_location where = std::source_location::current())
      : std::runtime_error(message), where_(where) {}
  const std::source_location& where() const noexcept { return where_; }

 private:
  std::source_location where_;
};

/// The caller passed data kryflow cannot use (zero diagonal, NaN, bad sizes, ...).
class InvalidInput : public Error {
 public:
  explicit InvalidInput(const std::string& message,
                        std::source_location where = std::source_location::current())
      : Error(message, where) {}
};

/// A malformed input file. The message names the file and the (1-based) line or record.
class ParseError : public InvalidInput {
 public:
  ParseError(std::string file, long long line, const std::string& problem,
             std::source_location where = std::source_location::current())
      : InvalidInput(file + ":" + std::to_string(line) + ": " + problem, where),
        file_(std::move(file)),
        line_(line) {}
  const std::string& file() const noexcept { return file_; }
  /// 1-based line number (or record/byte offset for binary formats, as the message says).
  long long line() const noexcept { return line_; }

 private:
  std::string file_;
  long long line_;
};

/// Operand shapes do not agree (e.g. a vector of the wrong length).
class DimensionMismatch : public InvalidInput {
 public:
  explicit DimensionMismatch(const std::string& message,
                             std::source_location where = std::source_location::current())
      : InvalidInput(message, where) {}
};

/// A configuration key or value is unknown or invalid; the message names its JSON path.
class ConfigError : public Error {
 public:
  ConfigError(std::string path, const std::string& problem,
              std::source_location where = std::source_location::current())
      : Error(path + ": " + problem, where), path_(std::move(path)) {}
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
};

/// The request is valid but this combination is not implemented.
class NotSupported : public Error {
 public:
  explicit NotSupported(const std::string& message,
                        std::source_location where = std::source_location::current())
      : Error(message, where) {}
};

/// The request needs a component (e.g. the CUDA backend) this build does not contain.
class NotCompiled : public Error {
 public:
  explicit NotCompiled(const std::string& message,
                       std::source_location where = std::source_location::current())
      : Error(message, where) {}
};

/// A backend (CUDA runtime, cuBLAS, cuSPARSE, ...) call failed.
class BackendError : public Error {
 public:
  explicit BackendError(const std::string& message,
                        std::source_location where = std::source_location::current())
      : Error(message, where) {}
};

/// A device allocation failed. The process survives; the caller may free memory and retry.
class OutOfMemory : public BackendError {
 public:
  OutOfMemory(std::size_t bytes_requested, std::size_t bytes_free, const std::string& backend,
              std::source_location where = std::source_location::current())
      : BackendError("out of memory on " + backend + ": requested " +
                         std::to_string(bytes_requested) + " bytes, " + std::to_string(bytes_free) +
                         " bytes free",
                     where),
        bytes_requested_(bytes_requested),
        bytes_free_(bytes_free) {}
  std::size_t bytes_requested() const noexcept { return bytes_requested_; }
  std::size_t bytes_free() const noexcept { return bytes_free_; }

 private:
  std::size_t bytes_requested_;
  std::size_t bytes_free_;
};

/// Runs `step` and returns what it returns; an InvalidInput it throws (a zero diagonal, a matrix
/// that does not tile into blocks, ...) is rethrown with the same type (DimensionMismatch stays
/// DimensionMismatch), its message prefixed by "`input`: " and, when `advice` is not empty,
/// followed by "; `advice`". A ParseError (it names its file and line already) and every other
/// exception pass unchanged; with `input` and `advice` both empty `step` runs as it is.
template <class Step>
auto naming_input(const std::string& input, Step step, const std::string& advice = "") {
  if (input.empty() && advice.empty()) return step();
  const std::string prefix = input.empty() ? "" : input + ": ";
  const std::string suffix = advice.empty() ? "" : "; " + advice;
  try {
    return step();
  } catch (const ParseError&) {
    throw;
  } catch (const DimensionMismatch& e) {
    throw DimensionMismatch(prefix + e.what() + suffix);
  } catch (const InvalidInput& e) {
    throw InvalidInput(prefix + e.what() + suffix);
  }
}

/// An MPI operation failed.
class CommunicationError : public Error {
 public:
  explicit CommunicationError(const std::string& message,
                              std::source_location where = std::source_location::current())
      : Error(message, where) {}
};

}  // namespace kryflow
