// kryflow's C interface (kryflow.h) over the public C++ API: handles own C++ objects, every
// entry point catches every exception and turns it into a status code and a per-thread message.
#include "kryflow.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "kryflow/core/error.hpp"
#include "kryflow/io/matrix_market.hpp"
#include "kryflow/solver.hpp"
#include "kryflow/version.hpp"

struct kryflow_backend_s {
  kryflow::Backend backend;
};

/// A matrix's data, shared by its handle and the solvers set up on it.
struct MatrixData {
  kryflow::Backend backend = kryflow::Backend::reference();
  kryflow::StoredMatrix stored;
  /// BSR only: csr_values[k] = given_values[bsr_of_csr[k]] (on the matrix's backend).
  kryflow::Array<kryflow::index_t> bsr_of_csr;
};

struct kryflow_matrix_s {
  std::shared_ptr<MatrixData> data;
};

struct kryflow_vector_s {
  kryflow::Vector vector;
};

struct kryflow_solver_s {
  kryflow::Solver solver;
  std::shared_ptr<MatrixData> matrix;  // the set-up matrix, alive while the solver uses it
  std::string reason;                  // of the last solve
};

namespace {

using kryflow::index_t;

thread_local std::string last_error;

kryflow_status fail(kryflow_status status, const std::string& message) {
  last_error = message;
  return status;
}

/// Thrown inside `api` for a null handle or pointer and a bad enumerator.
struct InvalidArgument : std::exception {
  std::string message;
  explicit InvalidArgument(std::string m) : message(std::move(m)) {}
  const char* what() const noexcept override { return message.c_str(); }
};

/// Runs `body`, mapping each kryflow exception type to its status code and message.
template <class Body>
kryflow_status api(const char* function, Body body) noexcept {
  const std::string name = std::string(function) + ": ";
  try {
    body();
    return KRYFLOW_SUCCESS;
  } catch (const InvalidArgument& e) {
    return fail(KRYFLOW_ERROR_INVALID_ARGUMENT, name + e.what());
  } catch (const kryflow::ParseError& e) {
    return fail(KRYFLOW_ERROR_PARSE, name + e.what());
  } catch (const kryflow::DimensionMismatch& e) {
    return fail(KRYFLOW_ERROR_DIMENSION_MISMATCH, name + e.what());
  } catch (const kryflow::InvalidInput& e) {
    return fail(KRYFLOW_ERROR_INVALID_INPUT, name + e.what());
  } catch (const kryflow::ConfigError& e) {
    return fail(KRYFLOW_ERROR_CONFIG, name + e.what());
  } catch (const kryflow::NotSupported& e) {
    return fail(KRYFLOW_ERROR_NOT_SUPPORTED, name + e.what());
  } catch (const kryflow::NotCompiled& e) {
    return fail(KRYFLOW_ERROR_NOT_COMPILED, name + e.what());
  } catch (const kryflow::OutOfMemory& e) {
    return fail(KRYFLOW_ERROR_OUT_OF_MEMORY, name + e.what());
  } catch (const kryflow::BackendError& e) {
    return fail(KRYFLOW_ERROR_BACKEND, name + e.what());
  } catch (const std::bad_alloc&) {
    return fail(KRYFLOW_ERROR_OUT_OF_MEMORY, name + "out of host memory");
  } catch (const std::exception& e) {
    return fail(KRYFLOW_ERROR_INTERNAL, name + e.what());
  } catch (...) {
    return fail(KRYFLOW_ERROR_INTERNAL, name + "unknown exception");
  }
}

template <class T>
T& require(T* pointer, const char* what) {
  if (pointer == nullptr) throw InvalidArgument(std::string(what) + " is NULL");
  return *pointer;
}

const kryflow::Backend& memory_backend(const kryflow::Backend& backend, kryflow_memory memory) {
  static const kryflow::Backend host = kryflow::Backend::reference();
  if (memory == KRYFLOW_MEMORY_HOST) return host;
  if (memory == KRYFLOW_MEMORY_DEVICE) return backend;
  throw InvalidArgument("memory must be KRYFLOW_MEMORY_HOST or KRYFLOW_MEMORY_DEVICE");
}

kryflow::Precision precision_of(kryflow_precision precision) {
  if (precision == KRYFLOW_FLOAT64) return kryflow::Precision::float64;
  if (precision == KRYFLOW_FLOAT32) return kryflow::Precision::float32;
  throw InvalidArgument("precision must be KRYFLOW_FLOAT64 or KRYFLOW_FLOAT32");
}

/// `count` doubles from `values` in `memory` as an Array on `backend`.
kryflow::Array<double> doubles_on(const kryflow::Backend& backend, const double* values,
                                  std::int64_t count, kryflow_memory memory) {
  const kryflow::Backend& source = memory_backend(backend, memory);
  if (count < 0) throw kryflow::InvalidInput("a negative number of values");
  kryflow::Array<double> array(backend, static_cast<std::size_t>(count));
  if (count > 0) {
    require(values, "values");
    kryflow::copy_bytes(backend, array.data(), source, values, array.bytes());
  }
  return array;
}

void copy_text(const std::string& text, char* out, std::int32_t capacity) {
  if (capacity <= 0) return;
  require(out, "the output buffer");
  const std::size_t n = std::min(text.size(), static_cast<std::size_t>(capacity) - 1);
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

}  // namespace

extern "C" {

const char* kryflow_last_error(void) {
  return last_error.c_str();
}

const char* kryflow_version(void) {
  return kryflow::version();
}

const char* kryflow_status_name(kryflow_status status) {
  switch (status) {
    case KRYFLOW_SUCCESS:
      return "KRYFLOW_SUCCESS";
    case KRYFLOW_ERROR_INVALID_ARGUMENT:
      return "KRYFLOW_ERROR_INVALID_ARGUMENT";
    case KRYFLOW_ERROR_INVALID_INPUT:
      return "KRYFLOW_ERROR_INVALID_INPUT";
    case KRYFLOW_ERROR_DIMENSION_MISMATCH:
      return "KRYFLOW_ERROR_DIMENSION_MISMATCH";
    case KRYFLOW_ERROR_PARSE:
      return "KRYFLOW_ERROR_PARSE";
    case KRYFLOW_ERROR_CONFIG:
      return "KRYFLOW_ERROR_CONFIG";
    case KRYFLOW_ERROR_NOT_SUPPORTED:
      return "KRYFLOW_ERROR_NOT_SUPPORTED";
    case KRYFLOW_ERROR_NOT_COMPILED:
      return "KRYFLOW_ERROR_NOT_COMPILED";
    case KRYFLOW_ERROR_BACKEND:
      return "KRYFLOW_ERROR_BACKEND";
    case KRYFLOW_ERROR_OUT_OF_MEMORY:
      return "KRYFLOW_ERROR_OUT_OF_MEMORY";
    case KRYFLOW_ERROR_INTERNAL:
      return "KRYFLOW_ERROR_INTERNAL";
  }
  return nullptr;
}

const char* kryflow_solve_status_name(kryflow_solve_status status) {
  if (status < KRYFLOW_SOLVE_CONVERGED || status > KRYFLOW_SOLVE_NAN_DETECTED) return nullptr;
  return kryflow::to_string(static_cast<kryflow::SolveStatus>(status));
}

kryflow_status kryflow_backend_create(const char* name, kryflow_backend* backend) {
  return api("kryflow_backend_create", [&] {
    require(backend, "the output handle");
    *backend = nullptr;
    *backend = new kryflow_backend_s{kryflow::backend_by_name(name != nullptr ? name : "")};
  });
}

kryflow_status kryflow_backend_destroy(kryflow_backend backend) {
  delete backend;
  return KRYFLOW_SUCCESS;
}

kryflow_status kryflow_backend_name(kryflow_backend backend, char* name, std::int32_t capacity) {
  return api("kryflow_backend_name",
             [&] { copy_text(require(backend, "backend").backend.name(), name, capacity); });
}

kryflow_status kryflow_backend_synchronize(kryflow_backend backend) {
  return api("kryflow_backend_synchronize",
             [&] { require(backend, "backend").backend.synchronize(); });
}

kryflow_status kryflow_matrix_create_csr(kryflow_backend backend, std::int32_t num_rows,
                                         std::int32_t num_cols, std::int64_t nnz,
                                         const std::int32_t* row_ptr, const std::int32_t* col_idx,
                                         const double* values, kryflow_memory memory,
                                         const char* format, kryflow_precision precision,
                                         kryflow_matrix* matrix) {
  return api("kryflow_matrix_create_csr", [&] {
    require(matrix, "the output handle");
    *matrix = nullptr;
    const kryflow::Backend& b = require(backend, "backend").backend;
    const kryflow::Backend& source = memory_backend(b, memory);
    kryflow::StorageOptions storage;
    storage.format = format != nullptr && *format != '\0' ? format : "csr";
    storage.precision = precision_of(precision);
    require(row_ptr, "row_ptr");
    // Host arrays are checked and compressed on the host, device arrays on the device.
    kryflow::CsrMatrix csr =
        kryflow::CsrMatrix::copy_from(source, num_rows, num_cols, nnz, row_ptr, col_idx, values);
    auto handle = std::make_shared<MatrixData>();
    handle->backend = b;
    handle->stored = kryflow::store_matrix(std::move(csr), b, storage);
    *matrix = new kryflow_matrix_s{std::move(handle)};
  });
}

kryflow_status kryflow_matrix_create_bsr(kryflow_backend backend, std::int32_t num_block_rows,
                                         std::int32_t num_block_cols, std::int32_t block_size,
                                         std::int64_t nnzb, const std::int32_t* row_ptr,
                                         const std::int32_t* col_idx, const double* values,
                                         kryflow_memory memory, kryflow_precision precision,
                                         kryflow_matrix* matrix) {
  return api("kryflow_matrix_create_bsr", [&] {
    require(matrix, "the output handle");
    *matrix = nullptr;
    const kryflow::Backend& b = require(backend, "backend").backend;
    const kryflow::Backend& source = memory_backend(b, memory);
    // Host arrays are checked and expanded on the host, device arrays on the device; the map
    // from CSR entries to block values moves with the matrix.
    kryflow::Array<index_t> position;
    kryflow::CsrMatrix csr =
        kryflow::CsrMatrix::copy_from_blocks(source, num_block_rows, num_block_cols, block_size,
                                             nnzb, row_ptr, col_idx, values, &position);
    auto handle = std::make_shared<MatrixData>();
    handle->backend = b;
    handle->bsr_of_csr = source == b ? std::move(position) : position.copy_to(b);
    kryflow::StorageOptions storage;
    storage.format = "bsr";
    storage.block_size = block_size;
    storage.precision = precision_of(precision);
    handle->stored = kryflow::store_matrix(std::move(csr), b, storage);
    *matrix = new kryflow_matrix_s{std::move(handle)};
  });
}

kryflow_status kryflow_matrix_read(kryflow_backend backend, const char* path,
                                   kryflow_precision precision, kryflow_matrix* matrix) {
  return api("kryflow_matrix_read", [&] {
    require(matrix, "the output handle");
    *matrix = nullptr;
    const kryflow::Backend& b = require(backend, "backend").backend;
    require(path, "path");
    const kryflow::CooMatrix coo = kryflow::io::read_matrix_market(path);
    kryflow::CsrMatrix csr = kryflow::CsrMatrix::from_coo(kryflow::Backend::reference(), coo);
    auto handle = std::make_shared<MatrixData>();
    handle->backend = b;
    kryflow::StorageOptions storage;
    storage.precision = precision_of(precision);
    handle->stored = kryflow::store_matrix(std::move(csr), b, storage, path);
    *matrix = new kryflow_matrix_s{std::move(handle)};
  });
}

kryflow_status kryflow_matrix_destroy(kryflow_matrix matrix) {
  delete matrix;
  return KRYFLOW_SUCCESS;
}

kryflow_status kryflow_matrix_size(kryflow_matrix matrix, std::int32_t* num_rows,
                                   std::int32_t* num_cols, std::int64_t* nnz) {
  return api("kryflow_matrix_size", [&] {
    const MatrixData& m = *require(matrix, "matrix").data;
    if (num_rows != nullptr) *num_rows = m.stored.op().num_rows();
    if (num_cols != nullptr) *num_cols = m.stored.op().num_cols();
    if (nnz != nullptr) *nnz = m.stored.csr_nnz();
  });
}

kryflow_status kryflow_matrix_update_values(kryflow_matrix matrix, std::int64_t nnz,
                                            const double* values, kryflow_memory memory) {
  return api("kryflow_matrix_update_values", [&] {
    MatrixData& m = *require(matrix, "matrix").data;
    if (nnz != m.stored.csr_nnz()) {
      throw kryflow::DimensionMismatch(std::to_string(nnz) + " values given, the matrix has " +
                                       std::to_string(m.stored.csr_nnz()));
    }
    kryflow::Array<double> given = doubles_on(m.backend, values, nnz, memory);
    if (m.bsr_of_csr.size() > 0) {
      kryflow::Vector csr_values(m.backend, static_cast<std::size_t>(nnz));
      kryflow::gather(kryflow::Vector(std::move(given)), m.bsr_of_csr, csr_values);
      m.stored.update_values(csr_values.values());
    } else {
      m.stored.update_values(given);
    }
  });
}

kryflow_status kryflow_matrix_apply(kryflow_matrix matrix, kryflow_vector x, kryflow_vector y) {
  return api("kryflow_matrix_apply", [&] {
    require(matrix, "matrix")
        .data->stored.op()
        .apply(require(x, "x").vector, require(y, "y").vector);
  });
}

kryflow_status kryflow_vector_create(kryflow_backend backend, std::int64_t size,
                                     const double* values, kryflow_memory memory,
                                     kryflow_vector* vector) {
  return api("kryflow_vector_create", [&] {
    require(vector, "the output handle");
    *vector = nullptr;
    const kryflow::Backend& b = require(backend, "backend").backend;
    if (size < 0) throw kryflow::InvalidInput("a vector of negative size");
    auto handle = std::make_unique<kryflow_vector_s>();
    if (values == nullptr) {
      memory_backend(b, memory);  // checks the enumerator
      handle->vector = kryflow::Vector::constant(b, static_cast<std::size_t>(size), 0.0);
    } else {
      handle->vector = kryflow::Vector(doubles_on(b, values, size, memory));
    }
    *vector = handle.release();
  });
}

kryflow_status kryflow_vector_destroy(kryflow_vector vector) {
  delete vector;
  return KRYFLOW_SUCCESS;
}

kryflow_status kryflow_vector_size(kryflow_vector vector, std::int64_t* size) {
  return api("kryflow_vector_size", [&] {
    require(size, "size") = static_cast<std::int64_t>(require(vector, "vector").vector.size());
  });
}

kryflow_status kryflow_vector_upload(kryflow_vector vector, const double* values, std::int64_t size,
                                     kryflow_memory memory) {
  return api("kryflow_vector_upload", [&] {
    kryflow::Vector& v = require(vector, "vector").vector;
    const kryflow::Backend& source = memory_backend(v.backend(), memory);
    if (size != static_cast<std::int64_t>(v.size())) {
      throw kryflow::DimensionMismatch(std::to_string(size) + " values given, the vector has " +
                                       std::to_string(v.size()));
    }
    if (size > 0) {
      kryflow::copy_bytes(v.backend(), v.span().data(), source, &require(values, "values"),
                          v.size() * sizeof(double));
    }
  });
}

kryflow_status kryflow_vector_download(kryflow_vector vector, double* values, std::int64_t size,
                                       kryflow_memory memory) {
  return api("kryflow_vector_download", [&] {
    const kryflow::Vector& v = require(vector, "vector").vector;
    const kryflow::Backend& target = memory_backend(v.backend(), memory);
    if (size != static_cast<std::int64_t>(v.size())) {
      throw kryflow::DimensionMismatch("room for " + std::to_string(size) +
                                       " values, the vector has " + std::to_string(v.size()));
    }
    if (size > 0) {
      kryflow::copy_bytes(target, &require(values, "values"), v.backend(), v.span().data(),
                          v.size() * sizeof(double));
    }
  });
}

kryflow_status kryflow_solver_create(const char* configuration, const char* const* overrides,
                                     std::int32_t num_overrides, kryflow_solver* solver) {
  return api("kryflow_solver_create", [&] {
    require(solver, "the output handle");
    *solver = nullptr;
    if (num_overrides < 0 || (num_overrides > 0 && overrides == nullptr)) {
      throw InvalidArgument("overrides is NULL or num_overrides negative");
    }
    std::vector<std::string> assignments;
    for (std::int32_t k = 0; k < num_overrides; ++k) {
      assignments.emplace_back(&require(overrides[k], "an override"));
    }
    const nlohmann::json config = kryflow::config::resolve_configuration(
        configuration != nullptr ? configuration : "", assignments);
    *solver = new kryflow_solver_s{kryflow::Solver(config), nullptr, ""};
  });
}

kryflow_status kryflow_solver_destroy(kryflow_solver solver) {
  delete solver;
  return KRYFLOW_SUCCESS;
}

kryflow_status kryflow_solver_configuration(kryflow_solver solver, char* json,
                                            std::int32_t capacity, std::int32_t* length) {
  return api("kryflow_solver_configuration", [&] {
    const std::string text = require(solver, "solver").solver.configuration().dump();
    if (length != nullptr) *length = static_cast<std::int32_t>(text.size());
    copy_text(text, json, capacity);
  });
}

kryflow_status kryflow_solver_setup(kryflow_solver solver, kryflow_matrix matrix) {
  return api("kryflow_solver_setup", [&] {
    kryflow_solver_s& s = require(solver, "solver");
    std::shared_ptr<MatrixData> m = require(matrix, "matrix").data;
    s.matrix = nullptr;
    s.solver.setup(m->stored.op());
    s.matrix = std::move(m);
  });
}

kryflow_status kryflow_solver_update_values(kryflow_solver solver) {
  return api("kryflow_solver_update_values",
             [&] { require(solver, "solver").solver.update_values(); });
}

kryflow_status kryflow_solver_solve(kryflow_solver solver, kryflow_vector b, kryflow_vector x,
                                    kryflow_solve_info* info) {
  return api("kryflow_solver_solve", [&] {
    kryflow_solver_s& s = require(solver, "solver");
    const kryflow::SolveReport report =
        s.solver.solve(require(b, "b").vector, require(x, "x").vector);
    s.reason = report.reason;
    if (info != nullptr) {
      info->status = static_cast<kryflow_solve_status>(report.status);
      info->iterations = report.iterations;
      info->rhs_norm = report.rhs_norm;
      info->initial_residual_norm = report.initial_residual_norm;
      info->residual_norm = report.residual_norm;
      info->true_residual_norm = report.true_residual_norm;
      info->setup_seconds = report.setup_seconds;
      info->solve_seconds = report.solve_seconds;
    }
  });
}

kryflow_status kryflow_solver_reason(kryflow_solver solver, char* text, std::int32_t capacity) {
  return api("kryflow_solver_reason",
             [&] { copy_text(require(solver, "solver").reason, text, capacity); });
}

}  // extern "C"
