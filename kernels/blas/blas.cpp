// Dispatch of the vector kernels to the backend that owns the data.
#include "kernels/blas/blas.hpp"

#include <string>

#include "kryflow/core/error.hpp"

namespace kryflow::kernels::blas {

void fill_pseudo_random(const Backend& backend, Span<double> x, std::uint64_t seed) {
  switch (backend.kind()) {
    case BackendKind::reference:
      return reference::fill_pseudo_random(backend, x, seed);
    case BackendKind::cpu:
      return cpu::fill_pseudo_random(backend, x, seed);
    case BackendKind::cuda:
#ifdef KRYFLOW_WITH_CUDA
      return cuda::fill_pseudo_random(backend, x, seed);
#else
      throw NotCompiled("blas::fill_pseudo_random: cuda backend not compiled");
#endif
  }
}

void fill(const Backend& backend, Span<double> x, double value) {
  switch (backend.kind()) {
    case BackendKind::reference:
      return reference::fill(backend, x, value);
    case BackendKind::cpu:
      return cpu::fill(backend, x, value);
    case BackendKind::cuda:
#ifdef KRYFLOW_WITH_CUDA
      return cuda::fill(backend, x, value);
#else
      throw NotCompiled("blas::fill: cuda backend not compiled");
#endif
  }
  throw NotSupported("blas::fill: unknown backend");
}

void copy(const Backend& backend, Span<const double> x, Span<double> y) {
  switch (backend.kind()) {
    case BackendKind::reference:
      return reference::copy(backend, x, y);
    case BackendKind::cpu:
      return cpu::copy(backend, x, y);
    case BackendKind::cuda:
#ifdef KRYFLOW_WITH_CUDA
      return cuda::copy(backend, x, y);
#else
      throw NotCompiled("blas::copy: cuda backend not compiled");
#endif
  }
  throw NotSupported("blas::copy: unknown backend");
}

void axpby(const Backend& backend, double alpha, Span<const double> x, double beta,
           Span<double> y) {
  switch (backend.kind()) {
    case BackendKind::reference:
      return reference::axpby(backend, alpha, x, beta, y);
    case BackendKind::cpu:
      return cpu::axpby(backend, alpha, x, beta, y);
    case BackendKind::cuda:
#ifdef KRYFLOW_WITH_CUDA
      return cuda::axpby(backend, alpha, x, beta, y);
#else
      throw NotCompiled("blas::axpby: cuda backend not compiled");
#endif
  }
  throw NotSupported("blas::axpby: unknown backend");
}

void axpbypcz(const Backend& backend, double alpha, Span<const double> x, double beta,
              Span<const double> y, double gamma, Span<double> z) {
  switch (backend.kind()) {
    case BackendKind::reference:
      return reference::axpbypcz(backend, alpha, x, beta, y, gamma, z);
    case BackendKind::cpu:
      return cpu::axpbypcz(backend, alpha, x, beta, y, gamma, z);
    case BackendKind::cuda:
#ifdef KRYFLOW_WITH_CUDA
      return cuda::axpbypcz(backend, alpha, x, beta, y, gamma, z);
#else
      throw NotCompiled("blas::axpbypcz: cuda backend not compiled");
#endif
  }
  throw NotSupported("blas::axpbypcz: unknown backend");
}

void pointwise_multiply(const Backend& backend, Span<const double> d, Span<const double> x,
                        Span<double> y) {
  switch (backend.kind()) {
    case BackendKind::reference:
      return reference::pointwise_multiply(backend, d, x, y);
    case BackendKind::cpu:
      return cpu::pointwise_multiply(backend, d, x, y);
    case BackendKind::cuda:
#ifdef KRYFLOW_WITH_CUDA
      return cuda::pointwise_multiply(backend, d, x, y);
#else
      throw NotCompiled("blas::pointwise_multiply: cuda backend not compiled");
#endif
  }
  throw NotSupported("blas::pointwise_multiply: unknown backend");
}

double dot(const Backend& backend, Span<const double> x, Span<const double> y) {
  switch (backend.kind()) {
    case BackendKind::reference:
      return reference::dot(backend, x, y);
    case BackendKind::cpu:
      return cpu::dot(backend, x, y);
    case BackendKind::cuda:
#ifdef KRYFLOW_WITH_CUDA
      return cuda::dot(backend, x, y);
#else
      throw NotCompiled("blas::dot: cuda backend not compiled");
#endif
  }
  throw NotSupported("blas::dot: unknown backend");
}

double norm2(const Backend& backend, Span<const double> x) {
  switch (backend.kind()) {
    case BackendKind::reference:
      return reference::norm2(backend, x);
    case BackendKind::cpu:
      return cpu::norm2(backend, x);
    case BackendKind::cuda:
#ifdef KRYFLOW_WITH_CUDA
      return cuda::norm2(backend, x);
#else
      throw NotCompiled("blas::norm2: cuda backend not compiled");
#endif
  }
  throw NotSupported("blas::norm2: unknown backend");
}

void multi_dot(const Backend& backend, std::size_t n, const DotList& dots, double* results) {
  if (dots.count < 1 || dots.count > kMaxDots) {
    throw InvalidInput("blas::multi_dot: 1 to " + std::to_string(kMaxDots) + " pairs, got " +
                       std::to_string(dots.count));
  }
  switch (backend.kind()) {
    case BackendKind::reference:
      return reference::multi_dot(backend, n, dots, results);
    case BackendKind::cpu:
      return cpu::multi_dot(backend, n, dots, results);
    case BackendKind::cuda:
#ifdef KRYFLOW_WITH_CUDA
      return cuda::multi_dot(backend, n, dots, results);
#else
      throw NotCompiled("blas::multi_dot: cuda backend not compiled");
#endif
  }
  throw NotSupported("blas::multi_dot: unknown backend");
}

void read_scalars(const Backend& backend, const double* source, std::size_t count, double* host) {
  switch (backend.kind()) {
    case BackendKind::reference:
      return reference::read_scalars(backend, source, count, host);
    case BackendKind::cpu:
      return cpu::read_scalars(backend, source, count, host);
    case BackendKind::cuda:
#ifdef KRYFLOW_WITH_CUDA
      return cuda::read_scalars(backend, source, count, host);
#else
      throw NotCompiled("blas::read_scalars: cuda backend not compiled");
#endif
  }
  throw NotSupported("blas::read_scalars: unknown backend");
}

index_t invert_diagonal(const Backend& backend, Span<const double> d, Span<double> dinv) {
  switch (backend.kind()) {
    case BackendKind::reference:
      return reference::invert_diagonal(backend, d, dinv);
    case BackendKind::cpu:
      return cpu::invert_diagonal(backend, d, dinv);
    case BackendKind::cuda:
#ifdef KRYFLOW_WITH_CUDA
      return cuda::invert_diagonal(backend, d, dinv);
#else
      throw NotCompiled("blas::invert_diagonal: cuda backend not compiled");
#endif
  }
  throw NotSupported("blas::invert_diagonal: unknown backend");
}

double copy_bandwidth(const Backend& backend, std::size_t bytes) {
  switch (backend.kind()) {
    case BackendKind::reference:
      return reference::copy_bandwidth(backend, bytes);
    case BackendKind::cpu:
      return cpu::copy_bandwidth(backend, bytes);
    case BackendKind::cuda:
#ifdef KRYFLOW_WITH_CUDA
      return cuda::copy_bandwidth(backend, bytes);
#else
      throw NotCompiled("blas::copy_bandwidth: cuda backend not compiled");
#endif
  }
  throw NotSupported("blas::copy_bandwidth: unknown backend");
}

}  // namespace kryflow::kernels::blas
