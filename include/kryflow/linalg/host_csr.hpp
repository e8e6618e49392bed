// A square sparse matrix's entries on the host, for setups that run there.
#pragma once

#include <vector>

#include "kryflow/core/array.hpp"

namespace kryflow {

/// An n x n matrix's entries on the host in CSR (0-based, each row's columns increasing): what a
/// host factorization reads (CsrMatrix::to_host_csr).
struct HostCsrMatrix {
  index_t n = 0;
  std::vector<index_t> row_ptr;  // n + 1
  std::vector<index_t> col_idx;  // nnz
  std::vector<double> values;    // nnz
};

}  // namespace kryflow
