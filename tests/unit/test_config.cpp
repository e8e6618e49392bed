// Configuration: defaults, strict reading with JSON paths, presets, overrides, round trips and
// the generated reference docs/config.md.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kryflow/config/parameters.hpp"
#include "kryflow/config/registry.hpp"
#include "kryflow/core/error.hpp"
#include "kryflow/linalg/csr_matrix.hpp"
#include "kryflow/linalg/generators.hpp"
#include "kryflow/linalg/matrix_analysis.hpp"

#ifndef KRYFLOW_TEST_SOURCE_DIR
#define KRYFLOW_TEST_SOURCE_DIR "."
#endif

namespace kryflow::config {
namespace {

using nlohmann::json;

const std::filesystem::path kSourceRoot = std::filesystem::path(KRYFLOW_TEST_SOURCE_DIR) / "..";

/// Runs `action`, expects a ConfigError and returns it (or a default one after a failure).
template <class Action>
ConfigError expect_config_error(Action action) {
  try {
    action();
  } catch (const ConfigError& e) {
    return e;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected ConfigError, got another exception: " << e.what();
    return ConfigError("", "");
  }
  ADD_FAILURE() << "expected ConfigError, nothing was thrown";
  return ConfigError("", "");
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::filesystem::path write_temp_file(const std::string& name, const std::string& content) {
  const std::filesystem::path file = std::filesystem::path(testing::TempDir()) / name;
  std::ofstream(file) << content;
  return file;
}

TEST(ConfigDefaults, EmptyObjectBuildsPcgWithJacobi) {
  const SolverSetup setup = build_solver(json::object());

  EXPECT_EQ(setup.solver->name(), "pcg");
  EXPECT_EQ(setup.preconditioner->name(), "jacobi");
  const StopCriteria defaults;
  EXPECT_EQ(setup.solver->criteria().max_iterations, defaults.max_iterations);
  EXPECT_EQ(setup.solver->criteria().relative_tolerance, defaults.relative_tolerance);
  EXPECT_EQ(setup.solver->criteria().stagnation_window, defaults.stagnation_window);
}

TEST(ConfigDefaults, ResolvedConfigNamesEveryKeyWithItsDefault) {
  const json resolved = build_solver(json::object()).resolved;

  const StopCriteria d;
  const json expected = {{"solver",
                          {{"type", "pcg"},
                           {"max_iterations", d.max_iterations},
                           {"relative_tolerance", d.relative_tolerance},
                           {"absolute_tolerance", d.absolute_tolerance},
                           {"divergence_factor", d.divergence_factor},
                           {"stagnation_window", d.stagnation_window},
                           {"stagnation_factor", d.stagnation_factor},
                           {"check_every", IterationOptions{}.check_every},
                           {"cuda_graphs", "automatic"},
                           {"preconditioner", {{"type", "jacobi"}, {"omega", 1.0}}}}}};
  EXPECT_EQ(resolved, expected) << resolved.dump(2);
  EXPECT_EQ(default_config(), expected);
}

TEST(ConfigDefaults, GmresAndFgmresRestartDefaultsTo30) {
  for (const char* type : {"gmres", "fgmres"}) {
    const SolverSetup setup = build_solver({{"solver", {{"type", type}}}});

    const auto* gmres = dynamic_cast<const Gmres*>(setup.solver.get());
    ASSERT_NE(gmres, nullptr) << type;
    EXPECT_EQ(gmres->name(), type);
    EXPECT_EQ(gmres->restart(), 30);
    EXPECT_EQ(setup.resolved["solver"]["restart"], 30);
  }
}

TEST(ConfigDefaults, GmresIsRightPreconditionedWithCgs2) {
  for (const char* type : {"gmres", "fgmres"}) {
    const SolverSetup setup = build_solver({{"solver", {{"type", type}}}});

    const auto* gmres = dynamic_cast<const Gmres*>(setup.solver.get());
    ASSERT_NE(gmres, nullptr) << type;
    EXPECT_EQ(gmres->side(), Gmres::Side::right);
    EXPECT_EQ(gmres->orthogonalization(), Gmres::Orthogonalization::cgs2);
    EXPECT_EQ(setup.resolved["solver"]["side"], "right");
    EXPECT_EQ(setup.resolved["solver"]["orthogonalization"], "cgs2");
  }
}

TEST(ConfigValues, GmresSideAndOrthogonalizationReachTheSolver) {
  const SolverSetup setup = build_solver(
      {{"solver", {{"type", "gmres"}, {"side", "left"}, {"orthogonalization", "mgs"}}}});

  const auto* gmres = dynamic_cast<const Gmres*>(setup.solver.get());
  ASSERT_NE(gmres, nullptr);
  EXPECT_EQ(gmres->side(), Gmres::Side::left);
  EXPECT_EQ(gmres->orthogonalization(), Gmres::Orthogonalization::mgs);
  EXPECT_FALSE(gmres->flexible());
  EXPECT_EQ(setup.resolved["solver"]["side"], "left");
  EXPECT_EQ(setup.resolved["solver"]["orthogonalization"], "mgs");
}

TEST(ConfigValues, ConfiguredValuesReachTheSolver) {
  const json config = {{"solver",
                        {{"type", "bicgstab"},
                         {"max_iterations", 77},
                         {"relative_tolerance", 1e-5},
                         {"absolute_tolerance", 1e-12},
                         {"divergence_factor", 1e6},
                         {"stagnation_window", 12},
                         {"stagnation_factor", 0.25}}}};

  const SolverSetup setup = build_solver(config);

  EXPECT_EQ(setup.solver->name(), "bicgstab");
  const StopCriteria& c = setup.solver->criteria();
  EXPECT_EQ(c.max_iterations, 77);
  EXPECT_EQ(c.relative_tolerance, 1e-5);
  EXPECT_EQ(c.absolute_tolerance, 1e-12);
  EXPECT_EQ(c.divergence_factor, 1e6);
  EXPECT_EQ(c.stagnation_window, 12);
  EXPECT_EQ(c.stagnation_factor, 0.25);
}

TEST(ConfigValues, JacobiOmegaScalesTheInverseDiagonal) {
  // poisson2d has diagonal 4, so M^-1 = omega / 4 exactly (a power of two times omega).
  const SolverSetup setup =
      build_solver({{"solver", {{"preconditioner", {{"type", "jacobi"}, {"omega", 0.5}}}}}});
  const CsrMatrix A = CsrMatrix::from_coo(Backend::reference(), poisson2d(3));

  setup.preconditioner->setup(A);

  ASSERT_NE(setup.preconditioner->inverse_diagonal(), nullptr);
  for (double d : setup.preconditioner->inverse_diagonal()->to_host()) EXPECT_EQ(d, 0.125);
}

TEST(ConfigValues, IdentityPreconditionerIsSelectable) {
  const SolverSetup setup =
      build_solver({{"solver", {{"type", "gmres"}, {"preconditioner", {{"type", "identity"}}}}}});

  EXPECT_EQ(setup.preconditioner->name(), "identity");
  EXPECT_EQ(setup.resolved["solver"]["preconditioner"], json({{"type", "identity"}}));
}

TEST(ConfigValues, IntegerAcceptsIntegralFloatingPointNumbers) {
  const SolverSetup setup = build_solver(json::parse(R"({"solver": {"max_iterations": 1e4}})"));

  EXPECT_EQ(setup.solver->criteria().max_iterations, 10000);
  EXPECT_TRUE(setup.resolved["solver"]["max_iterations"].is_number_integer());
}

TEST(ConfigErrors, UnknownTopLevelKeyNamesItAndTheValidKeys) {
  const ConfigError e = expect_config_error([] { build_solver({{"solvr", json::object()}}); });

  EXPECT_EQ(e.path(), "solvr");
  EXPECT_TRUE(contains(e.what(), "valid keys: solver")) << e.what();
}

TEST(ConfigErrors, UnknownSolverKeyListsTheSolversKeys) {
  const ConfigError e = expect_config_error([] {
    build_solver({{"solver", {{"type", "pcg"}, {"max_iteration", 5}}}});
  });

  EXPECT_EQ(e.path(), "solver.max_iteration");
  for (const char* key :
       {"type", "max_iterations", "relative_tolerance", "absolute_tolerance", "divergence_factor",
        "stagnation_window", "stagnation_factor", "preconditioner"}) {
    EXPECT_TRUE(contains(e.what(), key)) << key << " missing from: " << e.what();
  }
}

TEST(ConfigErrors, UnknownPreconditionerKeyListsTheValidKeys) {
  const ConfigError e = expect_config_error([] {
    build_solver({{"solver", {{"preconditioner", {{"type", "jacobi"}, {"omgea", 1.0}}}}}});
  });

  EXPECT_EQ(e.path(), "solver.preconditioner.omgea");
  EXPECT_TRUE(contains(e.what(), "valid keys: type, omega")) << e.what();
}

TEST(ConfigErrors, KeyOfAnotherTypeIsUnknown) {
  // restart belongs to gmres/fgmres; omega to jacobi.
  const ConfigError restart = expect_config_error([] {
    build_solver({{"solver", {{"type", "pcg"}, {"restart", 30}}}});
  });
  const ConfigError omega = expect_config_error([] {
    build_solver({{"solver", {{"preconditioner", {{"type", "identity"}, {"omega", 1.0}}}}}});
  });

  EXPECT_EQ(restart.path(), "solver.restart");
  EXPECT_TRUE(contains(restart.what(), "type 'pcg'")) << restart.what();
  EXPECT_EQ(omega.path(), "solver.preconditioner.omega");
  EXPECT_TRUE(contains(omega.what(), "valid keys: type)")) << omega.what();
}

TEST(ConfigErrors, UnknownSolverTypeListsTheChoices) {
  const ConfigError e = expect_config_error([] { build_solver({{"solver", {{"type", "cgs"}}}}); });

  EXPECT_EQ(e.path(), "solver.type");
  EXPECT_TRUE(contains(e.what(), "'cgs'")) << e.what();
  EXPECT_TRUE(contains(e.what(), "pcg, fcg, pipecg, bicgstab, gmres, fgmres")) << e.what();
}

TEST(ConfigErrors, UnknownPreconditionerTypeListsTheChoices) {
  const ConfigError e = expect_config_error([] {
    build_solver({{"solver", {{"preconditioner", {{"type", "ilu7"}}}}}});
  });

  EXPECT_EQ(e.path(), "solver.preconditioner.type");
  EXPECT_TRUE(contains(e.what(), "jacobi, identity")) << e.what();
}

struct BadValue {
  const char* config;
  const char* path;
  const char* message_part;
};

class ConfigBadValues : public testing::TestWithParam<BadValue> {};

TEST_P(ConfigBadValues, ThrowConfigErrorWithPathAndValidValues) {
  const BadValue& bad = GetParam();
  const json config = json::parse(bad.config);

  const ConfigError e = expect_config_error([&] { build_solver(config); });

  EXPECT_EQ(e.path(), bad.path) << bad.config;
  EXPECT_TRUE(contains(e.what(), bad.message_part)) << e.what();
}

INSTANTIATE_TEST_SUITE_P(
    WrongTypes, ConfigBadValues,
    testing::Values(BadValue{R"([1, 2])", "(top level)", "expected a JSON object"},
                    BadValue{R"({"solver": 3})", "solver",
                             "valid types: pcg, fcg, pipecg, bicgstab, gmres, fgmres"},
                    BadValue{R"({"solver": {"type": 5}})", "solver.type", "expected a string"},
                    BadValue{R"({"solver": {"max_iterations": "100"}})", "solver.max_iterations",
                             "expected an integer, got string"},
                    BadValue{R"({"solver": {"max_iterations": 10.5}})", "solver.max_iterations",
                             "expected an integer"},
                    BadValue{R"({"solver": {"relative_tolerance": true}})",
                             "solver.relative_tolerance", "expected a number, got boolean"},
                    BadValue{R"({"solver": {"relative_tolerance": null}})",
                             "solver.relative_tolerance", "expected a number, got null"},
                    BadValue{R"({"solver": {"preconditioner": "jacobi"}})", "solver.preconditioner",
                             "valid types: jacobi, identity"},
                    BadValue{R"({"solver": {"preconditioner": {"omega": [1]}}})",
                             "solver.preconditioner.omega", "expected a number, got array"},
                    BadValue{R"({"solver": {"type": "gmres", "side": 1}})", "solver.side",
                             "expected a string, got number 1 (valid choices: right, left)"}));

INSTANTIATE_TEST_SUITE_P(
    OutOfRange, ConfigBadValues,
    testing::Values(
        BadValue{R"({"solver": {"max_iterations": -1}})", "solver.max_iterations", "valid: >= 0"},
        BadValue{R"({"solver": {"max_iterations": 1e10}})", "solver.max_iterations",
                 "32-bit integer"},
        BadValue{R"({"solver": {"relative_tolerance": -1e-3}})", "solver.relative_tolerance",
                 "valid: >= 0"},
        BadValue{R"({"solver": {"absolute_tolerance": -1}})", "solver.absolute_tolerance",
                 "valid: >= 0"},
        BadValue{R"({"solver": {"divergence_factor": 1}})", "solver.divergence_factor",
                 "valid: > 1"},
        BadValue{R"({"solver": {"stagnation_window": -5}})", "solver.stagnation_window",
                 "valid: >= 0"},
        BadValue{R"({"solver": {"stagnation_factor": 1.0}})", "solver.stagnation_factor",
                 "valid: [0, 1)"},
        BadValue{R"({"solver": {"type": "gmres", "restart": 0}})", "solver.restart", "valid: >= 1"},
        BadValue{R"({"solver": {"preconditioner": {"omega": 0}}})", "solver.preconditioner.omega",
                 "valid: > 0"},
        BadValue{R"({"solver": {"type": "gmres", "side": "both"}})", "solver.side",
                 "unknown value 'both' (valid choices: right, left)"},
        BadValue{R"({"solver": {"type": "fgmres", "orthogonalization": "cgs"}})",
                 "solver.orthogonalization", "(valid choices: cgs2, mgs)"},
        // Checked across fields by the constructor: flexible GMRES is right-preconditioned.
        BadValue{R"({"solver": {"type": "fgmres", "side": "left"}})", "solver.side",
                 "flexible GMRES is preconditioned on the right only"},
        // Checked across fields by StopCriteria::validate; the path gets its JSON prefix.
        BadValue{R"({"solver": {"max_iterations": 0, "relative_tolerance": 0}})",
                 "solver.relative_tolerance", "a tolerance or an iteration limit is needed"}));

TEST(ConfigPresets, EveryPresetInTheFolderLoadsAndBuilds) {
  const std::filesystem::path folder = kSourceRoot / "configs";
  int count = 0;

  for (const auto& item : std::filesystem::directory_iterator(folder)) {
    SCOPED_TRACE(item.path().string());
    ASSERT_EQ(item.path().extension(), ".json") << "configs/ holds only presets";
    const std::string name = item.path().stem().string();

    const SolverSetup setup = build_solver(load_preset(name));
    ++count;

    // sem_<preconditioner>: the presets of `kryflow sem` name the spectral-element method and
    // the preconditioner; the solver is the one that preconditioner needs (PCG for a symmetric
    // cycle, flexible CG around restricted Schwarz smoothing).
    if (name.starts_with("sem_")) {
      const json& resolved = setup.resolved["solver"]["preconditioner"];
      if (name == "sem_jacobi") {
        EXPECT_EQ(setup.solver->name(), "pcg");
        EXPECT_EQ(setup.preconditioner->name(), "jacobi");
      } else if (name == "sem_pmg_cheby_jacobi" || name == "sem_pmg_schwarz" ||
                 name == "sem_pmg_vertex_patch") {
        const bool jacobi = name == "sem_pmg_cheby_jacobi";
        EXPECT_EQ(setup.solver->name(), jacobi ? "pcg" : "fcg");
        EXPECT_EQ(setup.preconditioner->name(), "p_multigrid");
        EXPECT_EQ(resolved["smoother"], jacobi                      ? "chebyshev_jacobi"
                                        : name == "sem_pmg_schwarz" ? "chebyshev_ras"
                                                                    : "vertex_patch");
      } else {
        ADD_FAILURE() << "unknown spectral-element preset " << name;
      }
      continue;
    }

    // The name states the composition: <solver>[_<variant>]_<preconditioner>, or <solver> alone
    // for identity (gmres_left_jacobi: left-preconditioned gmres with jacobi); `sa` is the amg
    // preconditioner with smoothed aggregation, `mcsgs` multicolor symmetric Gauss-Seidel (`mcgs`
    // forward), `pmg`
    // the spectral-element p-multigrid.
    const std::size_t underscore = name.find('_');
    const std::string solver = name.substr(0, underscore);
    std::string preconditioner =
        underscore == std::string::npos ? "identity" : name.substr(name.rfind('_') + 1);
    // Two-word preconditioners and abbreviations: block_jacobi, mcsgs and mcgs (multicolor
    // symmetric and forward Gauss-Seidel).
    if (name.ends_with("_block_jacobi")) preconditioner = "block_jacobi";
    if (preconditioner == "mcsgs" || preconditioner == "mcgs") {
      // mcsgs: symmetric sweeps; mcgs: forward sweeps (multicolor Gauss-Seidel).
      EXPECT_EQ(setup.resolved["solver"]["preconditioner"]["direction"],
                preconditioner == "mcsgs" ? "symmetric" : "forward");
      preconditioner = "multicolor_gauss_seidel";
    }
    if (preconditioner == "pmg") preconditioner = "p_multigrid";
    if (preconditioner == "sa") {
      preconditioner = "amg";
      EXPECT_EQ(setup.resolved["solver"]["preconditioner"]["coarsening"], "aggregation");
      EXPECT_EQ(setup.resolved["solver"]["preconditioner"]["interpolation"], "smoothed");
    }
    EXPECT_EQ(setup.solver->name(), solver);
    EXPECT_EQ(setup.preconditioner->name(), preconditioner);
  }
  EXPECT_GE(count, 5);
}

/// The n x n tridiagonal matrix (lower, diagonal, upper); diagonal entry 0 of row 1 when
/// `zero_first_diagonal`.
CsrMatrix tridiagonal(index_t n, double lower, double diagonal, double upper,
                      bool zero_first_diagonal = false) {
  CooMatrix coo;
  coo.num_rows = coo.num_cols = n;
  for (index_t i = 0; i < n; ++i) {
    if (i > 0) coo.push_back(i, i - 1, lower);
    if (i > 0 || !zero_first_diagonal) coo.push_back(i, i, diagonal);
    if (i + 1 < n) coo.push_back(i, i + 1, upper);
  }
  return CsrMatrix::from_coo(Backend::reference(), coo);
}

/// A block tridiagonal matrix of n block rows of 2 x 2 blocks (every block fully stored): the
/// diagonal blocks [[3, 1], [1, 0]] (invertible, a zero scalar diagonal entry: a coupled unknown
/// without a diagonal of its own), the off-diagonal blocks [[-1, 0.2], [0.1, -0.3]]. With
/// `singular_block` the first diagonal block is [[3, 1], [3, 1]] (singular).
CsrMatrix coupled_blocks(index_t n, bool singular_block = false, bool full_diagonal = false) {
  CooMatrix coo;
  coo.num_rows = coo.num_cols = 2 * n;
  const double off[2][2] = {{-1.0, 0.2}, {0.1, -0.3}};
  for (index_t I = 0; I < n; ++I) {
    for (int r = 0; r < 2; ++r) {
      const index_t i = 2 * I + r;
      if (I > 0) {
        for (int c = 0; c < 2; ++c) coo.push_back(i, 2 * (I - 1) + c, off[r][c]);
      }
      const double diagonal[2][2] = {
          {3.0, 1.0},
          {singular_block && I == 0 ? 3.0 : 1.0,
           singular_block && I == 0 ? 1.0 : (full_diagonal ? 2.0 : 0.0)}};
      for (int c = 0; c < 2; ++c) coo.push_back(i, 2 * I + c, diagonal[r][c]);
      if (I + 1 < n) {
        for (int c = 0; c < 2; ++c) coo.push_back(i, 2 * (I + 1) + c, off[r][c]);
      }
    }
  }
  return CsrMatrix::from_coo(Backend::reference(), coo);
}

TEST(ConfigPresets, ZeroDiagonalsInsideInvertibleBlocksAreAdvisedBlockJacobi) {
  const MatrixProperties coupled = analyse(coupled_blocks(50));
  EXPECT_EQ(coupled.block_size, 2);
  EXPECT_EQ(coupled.missing_diagonal, 50);
  EXPECT_EQ(coupled.singular_diagonal_blocks, 0);
  EXPECT_EQ(coupled.suggested_solver, "bicgstab_block_jacobi") << coupled.suggestion_reason;
  EXPECT_TRUE(contains(coupled.suggestion_reason, "2 x 2 blocks")) << coupled.suggestion_reason;
  // One singular diagonal block: block Jacobi's setup would fail, so no preconditioner.
  const MatrixProperties singular = analyse(coupled_blocks(50, true));
  EXPECT_EQ(singular.singular_diagonal_blocks, 1);
  EXPECT_EQ(singular.suggested_solver, "gmres") << singular.suggestion_reason;
  // No block structure: a scalar zero diagonal stays with GMRES.
  EXPECT_EQ(analyse(tridiagonal(100, -1.0, 2.0, -0.5, true)).block_size, 1);
}

TEST(ConfigPresets, NonsymmetricBlockMatricesAreAdvisedMulticolorGaussSeidel) {
  // A full diagonal and invertible 2 x 2 diagonal blocks: BiCGStab with forward multicolor
  // block Gauss-Seidel; the same pattern with a singular diagonal block keeps BiCGStab-Jacobi.
  const MatrixProperties blocks = analyse(coupled_blocks(50, false, true));
  EXPECT_EQ(blocks.block_size, 2);
  EXPECT_EQ(blocks.missing_diagonal, 0);
  EXPECT_EQ(blocks.singular_diagonal_blocks, 0);
  EXPECT_EQ(blocks.suggested_solver, "bicgstab_mcgs") << blocks.suggestion_reason;
  EXPECT_TRUE(contains(blocks.suggestion_reason, "BSR-2")) << blocks.suggestion_reason;
  const MatrixProperties singular = analyse(coupled_blocks(50, true, true));
  EXPECT_EQ(singular.singular_diagonal_blocks, 1);
  EXPECT_EQ(singular.suggested_solver, "bicgstab_jacobi") << singular.suggestion_reason;
}

TEST(ConfigPresets, TheAdvisedBudgetIsThePresetsOrMoreNeverLess) {
  // analyse() adds an iteration limit (4n for CG, n otherwise, within [the preset's, 100000])
  // and a stagnation window (n within [500, 5000]) only where they exceed the preset's:
  // the preset plus the advised overrides must give exactly that budget, so analyse()'s idea of
  // the presets' limits must match configs/.
  struct Case {
    const char* what;
    double lower, diagonal, upper;
    bool zero_first_diagonal;
    const char* preset;
    std::int64_t per_unknown;
  };
  const Case cases[] = {{"spd", -1.0, 2.0, -1.0, false, "pcg_jacobi", 4},
                        {"nonsymmetric", -1.0, 2.0, -0.5, false, "bicgstab_jacobi", 1},
                        {"zero diagonal", -1.0, 2.0, -0.5, true, "gmres", 1},
                        {"coupled blocks", 0.0, 0.0, 0.0, false, "bicgstab_block_jacobi", 1},
                        {"nonsymmetric blocks", 0.0, 0.0, 0.0, false, "bicgstab_mcgs", 1}};
  for (const Case& c : cases) {
    const std::int64_t preset_limit =
        load_preset(c.preset)["solver"]["max_iterations"].get<std::int64_t>();
    const std::int64_t preset_window =
        build_solver(load_preset(c.preset)).resolved["solver"]["stagnation_window"];
    for (const index_t n : {10, 200, 250, 251, 999, 1000, 1001, 2001, 6000, 30000}) {
      SCOPED_TRACE(std::string(c.what) + ", n = " + std::to_string(n));
      const bool blocks = std::string(c.preset) == "bicgstab_block_jacobi";
      const bool full_blocks = std::string(c.preset) == "bicgstab_mcgs";
      const MatrixProperties p =
          analyse(blocks || full_blocks
                      ? coupled_blocks((n + 1) / 2, false, full_blocks)
                      : tridiagonal(n, c.lower, c.diagonal, c.upper, c.zero_first_diagonal));
      ASSERT_EQ(p.suggested_solver, c.preset) << p.suggestion_reason;
      const std::int64_t rows = p.num_rows;
      json config = load_preset(p.suggested_solver);
      for (const std::string& assignment : p.suggested_overrides) {
        apply_override(config, assignment);
      }
      const json resolved = build_solver(config).resolved["solver"];
      EXPECT_EQ(resolved["max_iterations"].get<std::int64_t>(),
                std::max(preset_limit, std::min<std::int64_t>(c.per_unknown * rows, 100000)));
      const std::int64_t window = std::max(preset_window, std::min<std::int64_t>(rows, 5000));
      EXPECT_EQ(resolved["stagnation_window"].get<std::int64_t>(), window);
    }
  }
}

TEST(ConfigPresets, ShippedPresetsAreListed) {
  const std::vector<std::string> names = preset_names();

  for (const char* name : {"pcg_jacobi", "pipecg_jacobi", "bicgstab_jacobi", "gmres_jacobi",
                           "fgmres_jacobi", "pcg", "pipecg", "sem_jacobi", "sem_pmg_cheby_jacobi",
                           "sem_pmg_schwarz", "sem_pmg_vertex_patch"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
}

TEST(ConfigPresets, UnknownPresetListsTheAvailableOnes) {
  const ConfigError e = expect_config_error([] { load_preset("pcg_ilu"); });

  EXPECT_EQ(e.path(), "preset");
  EXPECT_TRUE(contains(e.what(), "'pcg_ilu'")) << e.what();
  EXPECT_TRUE(contains(e.what(), "pcg_jacobi")) << e.what();
}

TEST(ConfigPresets, PathLikeNamesAreRejected) {
  EXPECT_THROW(load_preset("../configs/pcg"), ConfigError);
  EXPECT_THROW(load_preset(""), ConfigError);
}

TEST(ConfigPresets, EnvironmentVariableOverridesTheFolder) {
  const std::filesystem::path folder = std::filesystem::path(testing::TempDir()) / "presets_env";
  std::filesystem::create_directories(folder);
  std::ofstream(folder / "mine.json") << R"({"solver": {"type": "bicgstab"}})";
  const char* previous = std::getenv("KRYFLOW_PRESET_DIR");
  const std::string saved = previous != nullptr ? previous : "";

  setenv("KRYFLOW_PRESET_DIR", folder.c_str(), 1);
  const json loaded = load_preset("mine");
  const std::vector<std::string> names = preset_names();
  if (previous != nullptr) {
    setenv("KRYFLOW_PRESET_DIR", saved.c_str(), 1);
  } else {
    unsetenv("KRYFLOW_PRESET_DIR");
  }

  EXPECT_EQ(loaded["solver"]["type"], "bicgstab");
  EXPECT_EQ(names, std::vector<std::string>{"mine"});
}

TEST(ConfigOverrides, SetNestedValuesParsedAsJsonOrString) {
  json config = json::object();

  apply_override(config, "solver.relative_tolerance=1e-10");
  apply_override(config, "solver.preconditioner.type=identity");
  apply_override(config, "solver.max_iterations=50");
  apply_override(config, "solver.type=\"bicgstab\"");

  const json expected = {{"solver",
                          {{"relative_tolerance", 1e-10},
                           {"max_iterations", 50},
                           {"type", "bicgstab"},
                           {"preconditioner", {{"type", "identity"}}}}}};
  EXPECT_EQ(config, expected) << config.dump();
  EXPECT_TRUE(config["solver"]["max_iterations"].is_number_integer());
}

TEST(ConfigOverrides, ReplaceValuesOfALoadedPreset) {
  json config = load_preset("pcg_jacobi");

  apply_override(config, "solver.preconditioner.type=identity");
  apply_override(config, "solver.max_iterations=2");
  const SolverSetup setup = build_solver(config);

  EXPECT_EQ(setup.preconditioner->name(), "identity");
  EXPECT_EQ(setup.solver->criteria().max_iterations, 2);
}

TEST(ConfigOverrides, MalformedAssignmentsAreConfigErrors) {
  for (const char* bad :
       {"solver.max_iterations", "=3", "solver..type=pcg", ".type=pcg", "solver.=pcg", ""}) {
    json config = json::object();
    EXPECT_THROW(apply_override(config, bad), ConfigError) << "'" << bad << "'";
  }
}

TEST(ConfigOverrides, DescendingIntoANonObjectIsAConfigError) {
  json config = {{"solver", {{"max_iterations", 10}}}};

  const ConfigError e =
      expect_config_error([&] { apply_override(config, "solver.max_iterations.value=3"); });

  EXPECT_EQ(e.path(), "solver.max_iterations");
}

TEST(ConfigOverrides, UnknownKeysAreCaughtWhenBuilding) {
  json config = json::object();
  apply_override(config, "solver.tolerance=1e-6");

  const ConfigError e = expect_config_error([&] { build_solver(config); });

  EXPECT_EQ(e.path(), "solver.tolerance");
}

TEST(ConfigFiles, SyntaxErrorNamesTheFileLineAndColumn) {
  const std::filesystem::path file =
      write_temp_file("syntax_error.json", "{\n  \"solver\": {\n    \"type\": \"pcg\",\n  }\n}\n");

  const ConfigError e = expect_config_error([&] { load_config_file(file); });

  EXPECT_EQ(e.path(), file.string());
  EXPECT_TRUE(contains(e.what(), "line 4, column 3")) << e.what();
}

TEST(ConfigFiles, MissingFileIsInvalidInputNamingIt) {
  const std::filesystem::path file = std::filesystem::path(testing::TempDir()) / "absent.json";

  try {
    load_config_file(file);
    FAIL() << "expected InvalidInput";
  } catch (const ConfigError& e) {
    FAIL() << "expected InvalidInput, got ConfigError: " << e.what();
  } catch (const InvalidInput& e) {
    EXPECT_TRUE(contains(e.what(), file.string())) << e.what();
  }
}

TEST(ConfigFiles, ValidFileLoadsAsWritten) {
  const std::filesystem::path file =
      write_temp_file("valid.json", R"({"solver": {"type": "fgmres", "restart": 5}})");

  const json config = load_config_file(file);

  EXPECT_EQ(config, json({{"solver", {{"type", "fgmres"}, {"restart", 5}}}}));
}

TEST(ConfigRoundTrip, ResolvedConfigurationRebuildsItself) {
  std::vector<json> configs = {
      json::object(),
      {{"solver", {{"type", "fgmres"}, {"restart", 7}, {"relative_tolerance", 3.3e-7}}}},
      {{"solver", {{"preconditioner", {{"omega", 0.6666666666666666}}}}}},
  };
  for (const std::string& name : preset_names()) configs.push_back(load_preset(name));

  for (const json& config : configs) {
    const json resolved = build_solver(config).resolved;

    EXPECT_EQ(build_solver(resolved).resolved, resolved) << config.dump();
    // Also through text, as a report echoes it.
    EXPECT_EQ(build_solver(json::parse(resolved.dump())).resolved, resolved) << config.dump();
  }
}

TEST(ConfigReference, DocsConfigMdIsUpToDate) {
  const std::filesystem::path file = kSourceRoot / "docs" / "config.md";
  std::ifstream in(file);
  ASSERT_TRUE(in) << "missing " << file.string();
  std::stringstream text;
  text << in.rdbuf();

  EXPECT_EQ(text.str(), config_reference_markdown())
      << "docs/config.md is stale: regenerate it with `kryflow config-doc > docs/config.md` "
         "(or the build target config_doc)";
}

TEST(ConfigReference, DocumentsEveryTypeAndEveryKey) {
  const std::string markdown = config_reference_markdown();

  for (const char* solver : {"pcg", "bicgstab", "gmres", "fgmres"}) {
    const json resolved = build_solver({{"solver", {{"type", solver}}}}).resolved;
    EXPECT_TRUE(contains(markdown, std::string("`solver.type = \"") + solver + "\"`")) << solver;
    for (const auto& [key, value] : resolved["solver"].items()) {
      if (key != "type") EXPECT_TRUE(contains(markdown, "| `" + key + "` |")) << key;
    }
  }
  for (const char* preconditioner : {"jacobi", "identity"}) {
    EXPECT_TRUE(contains(markdown,
                         std::string("`solver.preconditioner.type = \"") + preconditioner + "\"`"))
        << preconditioner;
  }
  EXPECT_TRUE(contains(markdown, "| `omega` |"));
}

TEST(ConfigRange, DescribesAndChecksItsEnds) {
  const Range half_open = Range::closed_open(0, 1);

  EXPECT_TRUE(half_open.contains(0.0));
  EXPECT_FALSE(half_open.contains(1.0));
  EXPECT_FALSE(Range::greater_than(1).contains(1.0));
  EXPECT_TRUE(Range::at_least(1).contains(1.0));
  EXPECT_TRUE(Range::any().contains(-1e300));
  EXPECT_EQ(Range::greater_than(0).describe(), "> 0");
  EXPECT_EQ(Range::any().describe(), "any");
}

}  // namespace
}  // namespace kryflow::config
