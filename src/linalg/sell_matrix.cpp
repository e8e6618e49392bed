// SellMatrix: conversion from and to CSR, value updates and the product entry points.
#include "kryflow/linalg/sell_matrix.hpp"

#include <algorithm>
#include <iterator>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/sell/sell.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow {
namespace {

/// The product kernels read x while they write y: distinct buffers only.
void check_distinct(const Vector& in, const Vector& out, const char* operation) {
  if (in.size() > 0 && in.span().data() == out.span().data()) {
    throw InvalidInput(std::string(operation) + ": input and output are the same vector");
  }
}

void check_slice_height_and_sigma(int slice_height, index_t sigma) {
  const auto& heights = SellMatrix::kSliceHeights;
  if (std::find(std::begin(heights), std::end(heights), slice_height) == std::end(heights)) {
    throw InvalidInput("SellMatrix: slice height C = " + std::to_string(slice_height) +
                       " is not supported: valid choices are 1, 2, 4, 8, 16, 32, 64 and 128");
  }
  if (sigma != 1 && (sigma <= 0 || sigma % slice_height != 0)) {
    throw InvalidInput("SellMatrix: sorting window sigma = " + std::to_string(sigma) +
                       " is invalid for C = " + std::to_string(slice_height) +
                       ": valid choices are 1 (no sorting) or a positive multiple of C (" +
                       std::to_string(slice_height) + ", " + std::to_string(2 * slice_height) +
                       ", ...)");
  }
}

}  // namespace

template <class T>
kernels::sell::SellView<T> SellMatrix::view() const {
  kernels::sell::SellView<T> v;
  v.num_rows = num_rows_;
  v.num_cols = num_cols_;
  v.slice_height = slice_height_;
  v.num_slices = num_slices_;
  v.slice_ptr = slice_ptr_.data();
  v.slice_width = slice_width_.data();
  v.col_idx = col_idx_.data();
  if constexpr (std::is_same_v<T, float>) {
    v.values = values32_.data();
  } else {
    v.values = values64_.data();
  }
  v.permutation = permutation_.data();
  v.block_partials = block_partials_.data();
  v.counter = counter_.data();
  return v;
}

SellMatrix SellMatrix::from_csr(const CsrMatrix& csr, int slice_height, index_t sigma,
                                Precision precision) {
  check_slice_height_and_sigma(slice_height, sigma);
  const Backend& backend = csr.backend();
  SellMatrix A;
  A.num_rows_ = csr.num_rows();
  A.num_cols_ = csr.num_cols();
  A.slice_height_ = slice_height;
  A.sigma_ = sigma;
  A.precision_ = precision;
  A.nnz_ = csr.nnz();
  const std::int64_t num_slices =
      (static_cast<std::int64_t>(A.num_rows_) + slice_height - 1) / slice_height;
  A.num_slices_ = static_cast<index_t>(num_slices);
  A.row_ptr_ = csr.row_ptr().copy_to(backend);
  A.permutation_ = Array<index_t>(backend, static_cast<std::size_t>(A.num_rows_));
  A.slice_width_ = Array<index_t>(backend, static_cast<std::size_t>(num_slices));
  A.slice_ptr_ = Array<std::int64_t>(backend, static_cast<std::size_t>(num_slices) + 1);

  kernels::sell::CsrPattern pattern;
  pattern.num_rows = A.num_rows_;
  pattern.row_ptr = A.row_ptr_.data();
  pattern.col_idx = csr.col_idx().data();
  kernels::sell::sell_layout(backend, pattern, slice_height, sigma, A.permutation_.data(),
                             A.slice_width_.data(), A.slice_ptr_.data());
  copy_bytes(Backend::reference(), &A.stored_entries_, backend, A.slice_ptr_.data() + num_slices,
             sizeof(std::int64_t));

  const auto stored = static_cast<std::size_t>(A.stored_entries_);
  A.col_idx_ = Array<index_t>(backend, stored);
  // A CSR matrix stored in float32 is widened to double (exactly) for the fill.
  Array<double> widened;
  if (csr.precision() == Precision::float32) {
    widened = Array<double>::from_host(backend, csr.values_to_host());
  }
  const double* csr_values =
      csr.precision() == Precision::float32 ? widened.data() : csr.values().data();
  if (precision == Precision::float32) {
    A.values32_ = Array<float>(backend, stored);
    kernels::sell::sell_fill(backend, A.view<float>(), pattern, csr_values, A.col_idx_.data(),
                             A.values32_.data());
  } else {
    A.values64_ = Array<double>(backend, stored);
    kernels::sell::sell_fill(backend, A.view<double>(), pattern, csr_values, A.col_idx_.data(),
                             A.values64_.data());
  }
  A.block_partials_ = Array<double>(
      backend, static_cast<std::size_t>(kernels::sell::num_dot_groups(num_slices * slice_height)));
  A.counter_ = Array<unsigned int>::from_host(backend, std::vector<unsigned int>{0u});
  return A;
}

CsrMatrix SellMatrix::to_csr() const {
  // Gather on the matrix's backend, then validate and build through CsrMatrix::from_host.
  Array<index_t> col_idx(backend(), static_cast<std::size_t>(nnz_));
  Array<double> values(backend(), static_cast<std::size_t>(nnz_));
  kernels::sell::CsrPattern pattern;
  pattern.num_rows = num_rows_;
  pattern.row_ptr = row_ptr_.data();
  if (precision_ == Precision::float32) {
    kernels::sell::sell_gather(backend(), view<float>(), pattern, col_idx.data(), values.data());
  } else {
    kernels::sell::sell_gather(backend(), view<double>(), pattern, col_idx.data(), values.data());
  }
  return CsrMatrix::from_host(backend(), num_rows_, num_cols_, row_ptr_.to_host(),
                              col_idx.to_host(), values.to_host());
}

void SellMatrix::update_values(const Array<double>& csr_values) {
  if (csr_values.size() != static_cast<std::size_t>(nnz_)) {
    throw DimensionMismatch("SellMatrix::update_values: expected " + std::to_string(nnz_) +
                            " values, got " + std::to_string(csr_values.size()));
  }
  if (!(csr_values.backend() == backend())) {
    throw InvalidInput("SellMatrix::update_values: the values must live on the matrix's backend (" +
                       backend().name() + ")");
  }
  kernels::sell::CsrPattern pattern;
  pattern.num_rows = num_rows_;
  pattern.row_ptr = row_ptr_.data();
  if (precision_ == Precision::float32) {
    kernels::sell::sell_fill(backend(), view<float>(), pattern, csr_values.data(), nullptr,
                             values32_.data());
  } else {
    kernels::sell::sell_fill(backend(), view<double>(), pattern, csr_values.data(), nullptr,
                             values64_.data());
  }
}

void SellMatrix::check_backend(const Vector& v, const char* operation) const {
  if (!(v.backend() == backend())) {
    throw InvalidInput(std::string(operation) + ": operands must live on the matrix's backend (" +
                       backend().name() + ")");
  }
}

void SellMatrix::apply(const Vector& x, Vector& y) const {
  check_apply_shapes(x, y, "SellMatrix::apply");
  check_distinct(x, y, "SellMatrix::apply");
  if (precision_ == Precision::float32) {
    kernels::sell::sell_spmv(backend(), view<float>(), x.span(), y.span());
  } else {
    kernels::sell::sell_spmv(backend(), view<double>(), x.span(), y.span());
  }
}

void SellMatrix::residual(const Vector& b, const Vector& x, Vector& r) const {
  check_apply_shapes(x, r, "SellMatrix::residual");
  check_distinct(x, r, "SellMatrix::residual");
  if (b.size() != r.size()) throw DimensionMismatch("SellMatrix::residual: b and r differ in size");
  check_backend(b, "SellMatrix::residual");
  if (precision_ == Precision::float32) {
    kernels::sell::sell_residual(backend(), view<float>(), b.span(), x.span(), r.span());
  } else {
    kernels::sell::sell_residual(backend(), view<double>(), b.span(), x.span(), r.span());
  }
}

void SellMatrix::apply_dot(const Vector& x, Vector& y, DeviceScalar xy) const {
  check_apply_shapes(x, y, "SellMatrix::apply_dot");
  check_distinct(x, y, "SellMatrix::apply_dot");
  if (num_rows_ != num_cols_) {
    throw DimensionMismatch("SellMatrix::apply_dot needs a square matrix");
  }
  if (precision_ == Precision::float32) {
    kernels::sell::sell_spmv_dot(backend(), view<float>(), x.span(), y.span(), xy.address);
    return;
  }
  kernels::sell::sell_spmv_dot(backend(), view<double>(), x.span(), y.span(), xy.address);
}

void SellMatrix::diagonal(Vector& d) const {
  if (d.size() != static_cast<std::size_t>(num_rows_)) {
    throw DimensionMismatch("SellMatrix::diagonal: d must have num_rows entries");
  }
  check_backend(d, "SellMatrix::diagonal");
  if (precision_ == Precision::float32) {
    kernels::sell::sell_diagonal(backend(), view<float>(), d.span());
  } else {
    kernels::sell::sell_diagonal(backend(), view<double>(), d.span());
  }
}

double SellMatrix::padding_ratio() const noexcept {
  return stored_entries_ > 0
             ? static_cast<double>(padding_entries()) / static_cast<double>(stored_entries_)
             : 0.0;
}

double SellMatrix::spmv_bytes() const noexcept {
  return (static_cast<double>(value_bytes(precision_)) + 4.0) * static_cast<double>(nnz_) +
         8.0 * num_cols_ + 8.0 * num_rows_;
}

double SellMatrix::spmv_moved_bytes() const noexcept {
  return (static_cast<double>(value_bytes(precision_)) + 4.0) *
             static_cast<double>(stored_entries_) +
         8.0 * (num_slices_ + 1) + 4.0 * num_slices_ + 4.0 * num_rows_ + 8.0 * num_cols_ +
         8.0 * num_rows_;
}

}  // namespace kryflow
