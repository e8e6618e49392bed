// BLAS level 1 on Vector: shape checks, then the backend's kernel.
#include "kryflow/linalg/vector.hpp"

#include <string>

#include "kernels/blas/blas.hpp"
#include "kernels/sparse_setup/sparse_setup.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow {
namespace {

void check_same(const Vector& a, const Vector& b, const char* operation) {
  if (a.size() != b.size()) {
    throw DimensionMismatch(std::string(operation) + ": sizes " + std::to_string(a.size()) +
                            " and " + std::to_string(b.size()) + " differ");
  }
  if (!(a.backend() == b.backend())) {
    throw InvalidInput(std::string(operation) + ": operands live on different backends (" +
                       a.backend().name() + ", " + b.backend().name() + ")");
  }
}

}  // namespace

Vector Vector::constant(const Backend& backend, std::size_t size, double value) {
  Vector v(backend, size);
  fill(v, value);
  return v;
}

void fill(Vector& x, double value) {
  kernels::blas::fill(x.backend(), x.span(), value);
}

void fill_pseudo_random(Vector& x, std::uint64_t seed) {
  kernels::blas::fill_pseudo_random(x.backend(), x.span(), seed, {});
}

void gather(const Vector& x, const Array<index_t>& map, Vector& y) {
  if (map.size() != y.size()) {
    throw DimensionMismatch("gather: " + std::to_string(map.size()) + " indices for " +
                            std::to_string(y.size()) + " entries");
  }
  if (!(x.backend() == y.backend()) || (map.size() > 0 && !(map.backend() == y.backend()))) {
    throw InvalidInput("gather: operands on different backends");
  }
  kernels::sparse_setup::gather(x.backend(), x.span(), map.span(), y.span());
}

void copy(const Vector& x, Vector& y) {
  check_same(x, y, "copy");
  kernels::blas::copy(x.backend(), x.span(), y.span());
}

void axpby(double alpha, const Vector& x, double beta, Vector& y) {
  check_same(x, y, "axpby");
  kernels::blas::axpby(x.backend(), alpha, x.span(), beta, y.span());
}

void axpbypcz(double alpha, const Vector& x, double beta, const Vector& y, double gamma,
              Vector& z) {
  check_same(x, y, "axpbypcz");
  check_same(x, z, "axpbypcz");
  kernels::blas::axpbypcz(x.backend(), alpha, x.span(), beta, y.span(), gamma, z.span());
}

void pointwise_multiply(const Vector& d, const Vector& x, Vector& y) {
  check_same(d, x, "pointwise_multiply");
  check_same(x, y, "pointwise_multiply");
  kernels::blas::pointwise_multiply(x.backend(), d.span(), x.span(), y.span());
}

double dot(const Vector& x, const Vector& y) {
  check_same(x, y, "dot");
  return kernels::blas::dot(x.backend(), x.span(), y.span());
}

double norm2(const Vector& x) {
  return kernels::blas::norm2(x.backend(), x.span());
}

}  // namespace kryflow
