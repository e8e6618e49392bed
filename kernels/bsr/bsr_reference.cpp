// Reference (oracle) BSR kernels: one scalar row after another, entries in increasing column order.
#include "kernels/bsr/bsr.hpp"

namespace kryflow::kernels::bsr::reference {
namespace {

/// Row ii of block row I: y = 0; y = y + double(a) x over the blocks, then the columns.
template <class V>
double row_product(const BsrView<V>& a, index_t block_row, int ii, Span<const double> x) {
  const int B = a.block_size;
  double sum = 0.0;
  for (index_t k = a.row_ptr[block_row]; k < a.row_ptr[block_row + 1]; ++k) {
    const V* row = a.values + (static_cast<std::int64_t>(k) * B + ii) * B;
    const double* xb = x.data() + static_cast<std::int64_t>(a.col_idx[k]) * B;
    for (int c = 0; c < B; ++c) sum += static_cast<double>(row[c]) * xb[c];
  }
  return sum;
}

}  // namespace

template <class V>
void bsr_spmv(const Backend&, const BsrView<V>& a, Span<const double> x, Span<double> y) {
  const int B = a.block_size;
  for (index_t I = 0; I < a.num_block_rows; ++I) {
    for (int ii = 0; ii < B; ++ii) y[I * B + ii] = row_product(a, I, ii, x);
  }
}

template <class V>
void bsr_residual(const Backend&, const BsrView<V>& a, Span<const double> b, Span<const double> x,
                  Span<double> r) {
  const int B = a.block_size;
  for (index_t I = 0; I < a.num_block_rows; ++I) {
    for (int ii = 0; ii < B; ++ii) r[I * B + ii] = b[I * B + ii] - row_product(a, I, ii, x);
  }
}

template <class V>
void bsr_spmv_dot(const Backend&, const BsrView<V>& a, Span<const double> x, Span<double> y,
                  double* result) {
  const int B = a.block_size;
  double sum = 0.0;
  for (index_t I = 0; I < a.num_block_rows; ++I) {
    for (int ii = 0; ii < B; ++ii) {
      const index_t i = I * B + ii;
      y[i] = row_product(a, I, ii, x);
      sum += x[i] * y[i];
    }
  }
  *result = sum;
}

template <class V>
void bsr_diagonal(const Backend&, const BsrView<V>& a, Span<double> d) {
  const int B = a.block_size;
  for (index_t I = 0; I < a.num_block_rows; ++I) {
    for (int ii = 0; ii < B; ++ii) {
      double sum = 0.0;
      for (index_t k = a.row_ptr[I]; k < a.row_ptr[I + 1]; ++k) {
        if (a.col_idx[k] == I) {
          sum += static_cast<double>(a.values[(static_cast<std::int64_t>(k) * B + ii) * B + ii]);
        }
      }
      d[I * B + ii] = sum;
    }
  }
}

template <class V>
void bsr_scatter_values(const Backend&, Span<const index_t> position, Span<const double> source,
                        Span<V> values) {
  for (std::size_t k = 0; k < position.size(); ++k) {
    values[static_cast<std::size_t>(position[k])] = static_cast<V>(source[k]);
  }
}

#define KRYFLOW_BSR_INSTANTIATE(V)                                                                \
  template void bsr_spmv<V>(const Backend&, const BsrView<V>&, Span<const double>, Span<double>); \
  template void bsr_residual<V>(const Backend&, const BsrView<V>&, Span<const double>,            \
                                Span<const double>, Span<double>);                                \
  template void bsr_spmv_dot<V>(const Backend&, const BsrView<V>&, Span<const double>,            \
                                Span<double>, double*);                                           \
  template void bsr_diagonal<V>(const Backend&, const BsrView<V>&, Span<double>);                 \
  template void bsr_scatter_values<V>(const Backend&, Span<const index_t>, Span<const double>,    \
                                      Span<V>);
KRYFLOW_BSR_INSTANTIATE(double)
KRYFLOW_BSR_INSTANTIATE(float)
#undef KRYFLOW_BSR_INSTANTIATE

}  // namespace kryflow::kernels::bsr::reference
