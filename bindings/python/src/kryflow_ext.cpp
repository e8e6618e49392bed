// kryflow._kryflow: the Python extension over the public C++ API (kryflow/solver.hpp). The
// public Python API (kryflow/__init__.py, kryflow/_solve.py) checks and converts the arrays
// (SciPy and NumPy on the host, CuPy on the device) and passes their addresses here, with the
// side they live on; this module copies them into kryflow's own storage, never through the host
// when they live on the device, and maps kryflow's exceptions to the Python exception types of
// kryflow/_errors.py.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "kryflow/core/error.hpp"
#include "kryflow/solver.hpp"
#include "kryflow/version.hpp"

namespace nb = nanobind;

namespace {

using kryflow::index_t;

// ---------------------------------------------------------------------------------------------
// Exceptions: the Python classes come from kryflow._errors (registered at import by
// kryflow/__init__.py through _set_error_types); before that, RuntimeError and its kin.

struct ErrorTypes {
  PyObject* error = nullptr;
  PyObject* invalid_input = nullptr;
  PyObject* dimension_mismatch = nullptr;
  PyObject* parse_error = nullptr;
  PyObject* config_error = nullptr;
  PyObject* not_supported = nullptr;
  PyObject* not_compiled = nullptr;
  PyObject* backend_error = nullptr;
  PyObject* out_of_memory = nullptr;
};

// Never released: the classes live as long as the interpreter.
ErrorTypes error_types;

PyObject* type_or(PyObject* type, PyObject* fallback) {
  return type != nullptr ? type : fallback;
}

/// Raises `type` with `error`'s message and its attributes: `where` (the place in kryflow's
/// sources), plus those of the subclass the caller passes in `extra`.
void raise(PyObject* type, const kryflow::Error& error,
           std::vector<std::pair<const char*, nb::object>> extra = {}) {
  const std::string message = error.what();
  nb::object text = nb::steal(
      PyUnicode_DecodeUTF8(message.data(), static_cast<Py_ssize_t>(message.size()), "replace"));
  if (!text.is_valid()) return;  // the decoder set its own error
  nb::object instance = nb::steal(PyObject_CallOneArg(type, text.ptr()));
  if (!instance.is_valid()) return;  // the call set its own error
  const std::string where =
      std::string(error.where().file_name()) + ":" + std::to_string(error.where().line());
  extra.emplace_back("where", nb::str(where.c_str()));
  for (auto& [name, value] : extra) {
    if (PyObject_SetAttrString(instance.ptr(), name, value.ptr()) != 0) PyErr_Clear();
  }
  PyErr_SetObject(type, instance.ptr());
}

void translate(const std::exception_ptr& exception, void*) {
  try {
    std::rethrow_exception(exception);
  } catch (const kryflow::ParseError& e) {
    raise(type_or(error_types.parse_error, PyExc_ValueError), e,
          {{"file", nb::str(e.file().c_str())}, {"line", nb::int_(e.line())}});
  } catch (const kryflow::DimensionMismatch& e) {
    raise(type_or(error_types.dimension_mismatch, PyExc_ValueError), e);
  } catch (const kryflow::InvalidInput& e) {
    raise(type_or(error_types.invalid_input, PyExc_ValueError), e);
  } catch (const kryflow::ConfigError& e) {
    raise(type_or(error_types.config_error, PyExc_ValueError), e,
          {{"path", nb::str(e.path().c_str())}});
  } catch (const kryflow::NotSupported& e) {
    raise(type_or(error_types.not_supported, PyExc_RuntimeError), e);
  } catch (const kryflow::NotCompiled& e) {
    raise(type_or(error_types.not_compiled, PyExc_RuntimeError), e);
  } catch (const kryflow::OutOfMemory& e) {
    raise(type_or(error_types.out_of_memory, PyExc_MemoryError), e,
          {{"bytes_requested", nb::int_(e.bytes_requested())},
           {"bytes_free", nb::int_(e.bytes_free())}});
  } catch (const kryflow::BackendError& e) {
    raise(type_or(error_types.backend_error, PyExc_RuntimeError), e);
  } catch (const kryflow::Error& e) {
    raise(type_or(error_types.error, PyExc_RuntimeError), e);
  }
}

void set_error_types(const nb::dict& types) {
  auto take = [&](const char* name) -> PyObject* {
    if (!types.contains(name)) return nullptr;
    nb::object type = types[name];
    if (!PyExceptionClass_Check(type.ptr())) {
      throw nb::type_error((std::string(name) + " is not an exception class").c_str());
    }
    return type.release().ptr();
  };
  error_types.error = take("Error");
  error_types.invalid_input = take("InvalidInput");
  error_types.dimension_mismatch = take("DimensionMismatch");
  error_types.parse_error = take("ParseError");
  error_types.config_error = take("ConfigError");
  error_types.not_supported = take("NotSupported");
  error_types.not_compiled = take("NotCompiled");
  error_types.backend_error = take("BackendError");
  error_types.out_of_memory = take("OutOfMemory");
}

// ---------------------------------------------------------------------------------------------
// Backends: one per kind for the life of the process, so that every call with "cuda" shares
// one device context (stream, library handles, memory pool).

kryflow::Backend backend_named(const std::string& name) {
  static std::mutex mutex;
  // Never destroyed: a device context must not be torn down after the CUDA runtime at exit.
  static auto* backends = new std::map<std::string, kryflow::Backend>();
  std::lock_guard<std::mutex> lock(mutex);
  const auto found = backends->find(name);
  if (found != backends->end()) return found->second;
  kryflow::Backend backend = kryflow::backend_by_name(name);
  const std::string kind = kryflow::to_string(backend.kind());
  if (name.empty()) {
    const auto same = backends->find(kind);
    if (same != backends->end()) backend = same->second;
    backends->emplace(kind, backend);
  }
  backends->emplace(name, backend);
  return backend;
}

/// Where caller memory lives: host memory is read through the reference backend (a plain copy),
/// device memory through the backend itself.
const kryflow::Backend& memory_of(const kryflow::Backend& backend, bool on_device) {
  static const kryflow::Backend host = kryflow::Backend::reference();
  if (on_device && !backend.is_device()) {
    throw kryflow::InvalidInput("device arrays need the cuda backend, not " + backend.name());
  }
  return on_device ? backend : host;
}

template <class T>
T* address(std::uintptr_t pointer) {
  return reinterpret_cast<T*>(pointer);
}

kryflow::Precision precision_named(const std::string& name) {
  return kryflow::precision_from_string(name);
}

// ---------------------------------------------------------------------------------------------
// A stored matrix, shared with the solvers set up on it (Solver::setup keeps a pointer to it).

struct Matrix {
  kryflow::Backend backend = kryflow::Backend::reference();
  std::shared_ptr<kryflow::StoredMatrix> stored;

  /// Copies CSR arrays (int32 row_ptr and col_idx, float64 values; host or device addresses)
  /// into a matrix stored on `backend` as `format` and `precision` say.
  static Matrix from_csr(const kryflow::Backend& backend, bool on_device, index_t num_rows,
                         index_t num_cols, std::int64_t nnz, std::uintptr_t row_ptr,
                         std::uintptr_t col_idx, std::uintptr_t values, const std::string& format,
                         int block_size, const std::string& precision) {
    const kryflow::Backend& source = memory_of(backend, on_device);
    kryflow::StorageOptions storage;
    storage.format = format;
    storage.block_size = block_size;
    storage.precision = precision_named(precision);
    // Host arrays bound for the cpu backend are checked there (in parallel), those bound for
    // a device on the host before the upload; device arrays are checked on the device.
    const kryflow::Backend& check = on_device || backend.is_device() ? source : backend;
    kryflow::CsrMatrix csr = kryflow::CsrMatrix::copy_from(
        check, num_rows, num_cols, nnz, address<const index_t>(row_ptr),
        address<const index_t>(col_idx), address<const double>(values));
    Matrix matrix;
    matrix.backend = backend;
    matrix.stored = std::make_shared<kryflow::StoredMatrix>(
        kryflow::store_matrix(std::move(csr), backend, storage));
    backend.synchronize();  // the caller's arrays may be released on return
    return matrix;
  }

  const kryflow::StoredMatrix& get() const {
    if (!stored) throw kryflow::InvalidInput("the matrix is empty");
    return *stored;
  }

  /// Replaces the values (nnz float64 in CSR order, host or device address).
  void update_values(bool on_device, std::int64_t nnz, std::uintptr_t values) {
    const kryflow::StoredMatrix& m = get();
    if (nnz != m.csr_nnz()) {
      throw kryflow::DimensionMismatch(std::to_string(nnz) + " values given, the matrix has " +
                                       std::to_string(m.csr_nnz()));
    }
    kryflow::Array<double> given(backend, static_cast<std::size_t>(nnz));
    if (nnz > 0) {
      kryflow::copy_bytes(backend, given.data(), memory_of(backend, on_device),
                          address<const double>(values), given.bytes());
    }
    stored->update_values(given);
    backend.synchronize();
  }
};

// ---------------------------------------------------------------------------------------------
// A configured solver and the matrix it was last set up on.

struct SolverHandle {
  kryflow::Solver solver;
  std::shared_ptr<kryflow::StoredMatrix> matrix;  // alive while the solver refers to it
  kryflow::Backend backend = kryflow::Backend::reference();

  explicit SolverHandle(const nlohmann::json& configuration) : solver(configuration) {}

  void setup(const Matrix& A) {
    std::shared_ptr<kryflow::StoredMatrix> stored = A.stored;
    A.get();
    matrix = nullptr;
    {
      nb::gil_scoped_release release;
      solver.setup(stored->op());
      A.backend.synchronize();
    }
    matrix = std::move(stored);
    backend = A.backend;
  }

  void update_values() {
    nb::gil_scoped_release release;
    solver.update_values();
    backend.synchronize();
  }

  /// Solves A x = b: b (n doubles) and x (n doubles, the initial guess when `has_x0`, else
  /// zeros; the solution on return) at host or device addresses.
  nb::dict solve(bool on_device, std::int64_t n, std::uintptr_t b, std::uintptr_t x, bool has_x0) {
    if (!matrix) throw kryflow::InvalidInput("Solver.solve: setup has not run");
    const kryflow::Backend& source = memory_of(backend, on_device);
    const auto size = static_cast<std::size_t>(n);
    const std::size_t bytes = size * sizeof(double);
    kryflow::SolveReport report;
    {
      nb::gil_scoped_release release;
      kryflow::Vector bv(backend, size);
      kryflow::Vector xv(backend, size);
      if (size > 0) {
        kryflow::copy_bytes(backend, bv.span().data(), source, address<const double>(b), bytes);
      }
      if (has_x0 && size > 0) {
        kryflow::copy_bytes(backend, xv.span().data(), source, address<const double>(x), bytes);
      } else {
        kryflow::fill(xv, 0.0);
      }
      report = solver.solve(bv, xv);
      if (size > 0) {
        kryflow::copy_bytes(source, address<double>(x), backend, xv.span().data(), bytes);
      }
      backend.synchronize();  // the solution has arrived before the caller reads it
    }
    nb::dict out;
    out["status"] = kryflow::to_string(report.status);
    out["converged"] = report.converged();
    out["iterations"] = report.iterations;
    out["reason"] = report.reason;
    out["rhs_norm"] = report.rhs_norm;
    out["initial_residual_norm"] = report.initial_residual_norm;
    out["residual_norm"] = report.residual_norm;
    out["true_residual_norm"] = report.true_residual_norm;
    out["relative_residual"] = report.true_relative_residual();
    out["convergence_rate"] = report.convergence_rate();
    out["residual_history"] = report.residual_history;
    out["setup_seconds"] = report.setup_seconds;
    out["solve_seconds"] = report.solve_seconds;
    out["backend"] = backend.name();
    return out;
  }
};

std::vector<std::string> available_backends() {
  std::vector<std::string> names;
  for (const char* name : {"cuda", "cpu", "reference"}) {
    try {
      backend_named(name);
      names.emplace_back(name);
    } catch (const kryflow::Error&) {
      // not compiled or no device
    }
  }
  return names;
}

}  // namespace

NB_MODULE(_kryflow, m) {
  m.doc() = "kryflow's C++ core; use the kryflow package's public API instead.";
  nb::register_exception_translator(translate);

  m.def("_set_error_types", &set_error_types, nb::arg("types"),
        "Registers the Python exception classes kryflow's C++ exceptions map to.");
  m.def(
      "version", [] { return std::string(kryflow::version()); },
      "The C++ library's version, 'MAJOR.MINOR.PATCH'.");
  m.def(
      "built_with_cuda", [] { return kryflow::built_with_cuda(); },
      "Whether this build holds the cuda backend.");
  m.def("available_backends", &available_backends,
        "The backends that open here: cuda (compiled and a device opens), cpu, reference.");
  m.def(
      "preset_names", [] { return kryflow::config::preset_names(); },
      "Names of the shipped presets, sorted.");
  m.def(
      "preset_directory", [] { return kryflow::config::preset_directory().string(); },
      "The folder the presets are read from.");
  m.def(
      "resolve_configuration",
      [](const std::string& source, const std::vector<std::string>& overrides) {
        return kryflow::config::resolve_configuration(source, overrides).dump();
      },
      nb::arg("source"), nb::arg("overrides"),
      "The configuration `source` names (a preset, JSON text or a .json file, '' for the "
      "defaults) with the overrides applied, as JSON text.");

  nb::class_<kryflow::Backend>(m, "Backend")
      .def_prop_ro("name", &kryflow::Backend::name)
      .def_prop_ro("kind",
                   [](const kryflow::Backend& b) { return std::string(to_string(b.kind())); })
      .def_prop_ro("is_device", &kryflow::Backend::is_device)
      .def_prop_ro("device_name", &kryflow::Backend::device_name)
      .def("synchronize", &kryflow::Backend::synchronize)
      .def("__repr__",
           [](const kryflow::Backend& b) { return "<kryflow backend " + b.name() + ">"; });
  m.def("backend", &backend_named, nb::arg("name"),
        "The backend 'cuda', 'cpu' or 'reference' ('' : cuda when a device opens, else cpu), "
        "one per kind for the process.");

  nb::class_<Matrix>(m, "Matrix")
      .def_static("from_csr", &Matrix::from_csr, nb::arg("backend"), nb::arg("on_device"),
                  nb::arg("num_rows"), nb::arg("num_cols"), nb::arg("nnz"), nb::arg("row_ptr"),
                  nb::arg("col_idx"), nb::arg("values"), nb::arg("format"), nb::arg("block_size"),
                  nb::arg("precision"), nb::call_guard<nb::gil_scoped_release>())
      .def("update_values", &Matrix::update_values, nb::arg("on_device"), nb::arg("nnz"),
           nb::arg("values"), nb::call_guard<nb::gil_scoped_release>())
      .def_prop_ro("backend", [](const Matrix& A) { return A.backend; })
      .def_prop_ro("num_rows", [](const Matrix& A) { return A.get().op().num_rows(); })
      .def_prop_ro("num_cols", [](const Matrix& A) { return A.get().op().num_cols(); })
      .def_prop_ro("nnz", [](const Matrix& A) { return A.get().csr_nnz(); })
      .def_prop_ro("format", [](const Matrix& A) { return A.get().format(); })
      .def_prop_ro("format_reason", [](const Matrix& A) { return A.get().format_reason(); });

  nb::class_<SolverHandle>(m, "Solver")
      .def(
          "__init__",
          [](SolverHandle* self, const std::string& configuration_json) {
            new (self) SolverHandle(nlohmann::json::parse(configuration_json));
          },
          nb::arg("configuration_json"))
      .def_prop_ro("configuration_json",
                   [](const SolverHandle& s) { return s.solver.configuration().dump(); })
      .def("setup", &SolverHandle::setup, nb::arg("matrix"))
      .def("update_values", &SolverHandle::update_values)
      .def("solve", &SolverHandle::solve, nb::arg("on_device"), nb::arg("n"), nb::arg("b"),
           nb::arg("x"), nb::arg("has_x0"))
      .def_prop_ro("preconditioner_summary",
                   [](const SolverHandle& s) { return s.solver.preconditioner_summary(); })
      .def_prop_ro("setup_seconds", [](const SolverHandle& s) { return s.solver.setup_seconds(); });
}
