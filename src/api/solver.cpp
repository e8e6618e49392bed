// The public solve entry (kryflow/solver.hpp): storage of a matrix for its products, the
// configured solver with setup, re-setup and solve, and the copy-bandwidth roofline.
#include "kryflow/solver.hpp"

#include <chrono>
#include <cmath>
#include <new>
#include <stdexcept>
#include <utility>

#include "kernels/blas/blas.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/linalg/bsr_matrix.hpp"
#include "kryflow/linalg/format_advisor.hpp"
#include "kryflow/linalg/sell_matrix.hpp"

namespace kryflow {

Backend default_backend() {
#ifdef KRYFLOW_WITH_CUDA
  try {
    return Backend::cuda();
  } catch (const Error&) {
    // no usable device: the host
  }
#endif
  return Backend::cpu();
}

Backend backend_by_name(const std::string& name) {
  if (name.empty()) return default_backend();
  return Backend::create(parse_backend_kind(name));
}

const LinearOperator& StoredMatrix::op() const {
  if (!op_) throw InvalidInput("StoredMatrix::op: the matrix is empty (moved from or default)");
  return *op_;
}

void StoredMatrix::update_values(const Array<double>& csr_values) {
  if (!op_) throw InvalidInput("StoredMatrix::update_values: the matrix is empty");
  if (kind_ == "bsr") {
    static_cast<BsrMatrix&>(*op_).update_values(csr_values);
  } else if (kind_ == "sell") {
    static_cast<SellMatrix&>(*op_).update_values(csr_values);
  } else {
    static_cast<CsrMatrix&>(*op_).update_values(csr_values);
  }
}

StoredMatrix store_matrix(CsrMatrix A, const Backend& backend, const StorageOptions& options,
                          const std::string& name) {
  return naming_input(name, [&] {
    std::string format = options.format;
    int block_size = options.block_size;
    if (format != "csr" && format != "sell" && format != "bsr" && format != "auto") {
      throw InvalidInput("unknown storage format '" + format + "' (valid: csr, sell, bsr, auto)");
    }
    if (block_size < 0) {
      throw InvalidInput("the block size " + std::to_string(block_size) + " is negative");
    }
    StoredMatrix stored;
    stored.format_reason_ = "chosen with --format " + format;
    if (format == "auto" || (format == "bsr" && block_size == 0)) {
      const FormatAdvice advice = advise_format(A, block_size);
      if (format == "auto") {
        format = advice.format;
        stored.format_reason_ = "advised: " + advice.reason;
      } else if (advice.detected_block_size < 2) {
        throw InvalidInput("--format bsr without --block-size, but " + advice.reason);
      }
      block_size = advice.format == "bsr" ? advice.block_size : advice.detected_block_size;
    }
    if (format == "bsr" && block_size < 1) {
      throw InvalidInput("--format bsr: the block size must be positive");
    }
    stored.csr_nnz_ = A.nnz();
    CsrMatrix csr = A.backend() == backend ? std::move(A) : A.copy_to(backend);
    A = CsrMatrix();
    if (csr.precision() != options.precision) csr.set_precision(options.precision);
    stored.kind_ = format;
    if (format == "bsr") {
      auto bsr =
          std::make_unique<BsrMatrix>(BsrMatrix::from_csr(csr, block_size, options.precision));
      stored.format_ = "BSR-" + std::to_string(block_size);
      stored.spmv_bytes_ = bsr->spmv_bytes();
      stored.op_ = std::move(bsr);
    } else if (format == "sell") {
      // The advisor's SELL candidate: a warp-wide slice, the sigma that pads less.
      const FormatAdvice advice = advise_format(csr, 1);
      auto sell = std::make_unique<SellMatrix>(
          SellMatrix::from_csr(csr, advice.slice_height, advice.sigma, options.precision));
      stored.format_ =
          "SELL-" + std::to_string(sell->slice_height()) + "-" + std::to_string(sell->sigma());
      stored.spmv_bytes_ = sell->spmv_bytes();
      stored.op_ = std::move(sell);
    } else {
      stored.format_ = "CSR";
      stored.spmv_bytes_ = csr.spmv_bytes();
      stored.op_ = std::make_unique<CsrMatrix>(std::move(csr));
    }
    stored.format_ += std::string(" (") + std::string(to_string(options.precision)) + " values)";
    return stored;
  });
}

Solver::Solver(const nlohmann::json& configuration) : setup_(config::build_solver(configuration)) {}
Solver::Solver(Solver&&) noexcept = default;
Solver& Solver::operator=(Solver&&) noexcept = default;
Solver::~Solver() = default;

void Solver::setup(const LinearOperator& A) {
  A_ = nullptr;
  const auto start = std::chrono::steady_clock::now();
  setup_.preconditioner->setup(A);
  A.backend().synchronize();
  setup_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  A_ = &A;
}

void Solver::update_values() {
  if (A_ == nullptr) {
    throw InvalidInput("Solver::update_values: setup(A) has not run (or it failed)");
  }
  const auto start = std::chrono::steady_clock::now();
  setup_.preconditioner->update_values(*A_);
  A_->backend().synchronize();
  setup_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

SolveReport Solver::solve(const Vector& b, Vector& x) {
  if (A_ == nullptr) throw InvalidInput("Solver::solve: setup(A) has not run (or it failed)");
  SolveReport report = setup_.solver->solve(*A_, *setup_.preconditioner, b, x);
  report.setup_seconds = setup_seconds_;
  return report;
}

std::string Solver::preconditioner_summary() const {
  return setup_.preconditioner->summary();
}

CopyBandwidth measure_copy_bandwidth(const Backend& backend, std::size_t bytes) {
  CopyBandwidth result;
  result.buffer_bytes = bytes;
  if (bytes == 0) {
    result.note = "not measured (--copy-bytes 0)";
    return result;
  }
  try {
    const double measured = kernels::blas::copy_bandwidth(backend, bytes);
    if (std::isfinite(measured) && measured > 0.0) {
      result.bytes_per_second = measured;
    } else {
      result.note =
          "unavailable: the copy of " + std::to_string(bytes) + " bytes was too fast to time";
    }
  } catch (const OutOfMemory& e) {
    result.note = std::string("unavailable: ") + e.what();
  } catch (const std::bad_alloc&) {
    result.note = "unavailable: out of host memory for 2 x " + std::to_string(bytes) + " bytes";
  } catch (const std::length_error&) {
    result.note = "unavailable: 2 x " + std::to_string(bytes) + " bytes cannot be allocated";
  }
  return result;
}

}  // namespace kryflow
