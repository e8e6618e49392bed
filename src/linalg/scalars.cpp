// Device-resident scalars and split-phase reductions.
#include "kryflow/linalg/scalars.hpp"

#include <string>
#include <vector>

#include "kernels/backend/reduction_emulation.hpp"
#include "kernels/blas/blas.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/linalg/reduction.hpp"

namespace kryflow {

double read_sum(const Backend& backend, const DeviceSum& sum) {
  std::vector<double> host(static_cast<std::size_t>(sum.count > 0 ? sum.count : 1));
  kernels::blas::read_scalars(backend, sum.values, host.size(), host.data());
  if (sum.count == 0) return host[0];
  return kernels::emulation::ordered_sum(host.data(), sum.count);
}

DeviceScalars::DeviceScalars(const Backend& backend, std::size_t count) : values_(backend, count) {
  if (count > 0) kernels::blas::fill(backend, values_.span(), 0.0);
}

void DeviceScalars::check_range(std::size_t first, std::size_t count, const char* operation) const {
  if (first > size() || count > size() - first) {
    throw InvalidInput(std::string(operation) + ": scalars [" + std::to_string(first) + ", " +
                       std::to_string(first + count) + ") outside a set of " +
                       std::to_string(size()));
  }
}

DeviceScalar DeviceScalars::slot(std::size_t i) {
  check_range(i, 1, "DeviceScalars::slot");
  return {values_.data() + i};
}

void DeviceScalars::read(std::size_t first, std::span<double> host) const {
  check_range(first, host.size(), "DeviceScalars::read");
  kernels::blas::read_scalars(backend(), values_.data() + first, host.size(), host.data());
}

void DeviceScalars::write(std::size_t first, std::span<const double> host) {
  check_range(first, host.size(), "DeviceScalars::write");
  if (!host.empty()) {
    copy_bytes(backend(), values_.data() + first, Backend::reference(), host.data(),
               host.size_bytes());
  }
}

std::vector<double> PendingReduction::wait() {
  complete();
  std::vector<double> host(count_);
  scalars_->read(first_, host);
  return host;
}

PendingReduction start_dots(std::span<const DotPair> pairs, DeviceScalars& scalars,
                            std::size_t first) {
  if (pairs.empty() || pairs.size() > kMaxFusedDots) {
    throw InvalidInput("start_dots: 1 to " + std::to_string(kMaxFusedDots) + " pairs, got " +
                       std::to_string(pairs.size()));
  }
  const std::size_t n = pairs[0].x->size();
  kernels::blas::DotList list;
  list.count = static_cast<int>(pairs.size());
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    const Vector& x = *pairs[k].x;
    const Vector& y = *pairs[k].y;
    if (x.size() != n || y.size() != n) {
      throw DimensionMismatch("start_dots: pair " + std::to_string(k) + " has vectors of " +
                              std::to_string(x.size()) + " and " + std::to_string(y.size()) +
                              " entries, pair 0 of " + std::to_string(n));
    }
    if (!(x.backend() == scalars.backend()) || !(y.backend() == scalars.backend())) {
      throw InvalidInput("start_dots: vectors and scalars must live on one backend");
    }
    list.x[k] = x.span().data();
    list.y[k] = y.span().data();
  }
  DeviceScalar target = scalars.slot(first);
  (void)scalars.slot(first + pairs.size() - 1);  // the whole range exists
  kernels::blas::multi_dot(scalars.backend(), n, list, target.address);
  return PendingReduction(scalars, first, pairs.size());
}

}  // namespace kryflow
