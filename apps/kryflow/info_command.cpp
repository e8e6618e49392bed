// `kryflow info`: structure and numerical properties of a matrix and the suggested preset.
#include <iostream>
#include <string>

#include "commands.hpp"
#include "kryflow/io/matrix_market.hpp"
#include "kryflow/linalg/format_advisor.hpp"
#include "kryflow/linalg/matrix_analysis.hpp"
#include "report.hpp"

namespace kryflow::cli {
namespace {

std::string declared_text(const io::MatrixMarketHeader& h) {
  const char* field = h.field == io::MatrixMarketField::real      ? "real"
                      : h.field == io::MatrixMarketField::integer ? "integer"
                                                                  : "pattern";
  const char* symmetry = h.symmetry == io::MatrixMarketSymmetry::general     ? "general"
                         : h.symmetry == io::MatrixMarketSymmetry::symmetric ? "symmetric"
                                                                             : "skew-symmetric";
  return std::string(h.coordinate ? "coordinate" : "array") + " " + field + " " + symmetry;
}

}  // namespace

int run_info(const InfoOptions& options) {
  io::MatrixMarketHeader header;
  const CooMatrix coo = io::read_matrix_market(options.matrix, &header);
  const CsrMatrix A = CsrMatrix::from_coo(Backend::reference(), coo);
  const MatrixProperties properties = analyse(A);
  const FormatAdvice format = advise_format(A, options.block_size);
  const std::string declared = declared_text(header);
  if (options.report == "json") {
    std::cout << info_json(options.matrix, declared, properties, format).dump() << "\n";
  } else {
    std::cout << info_text(options.matrix, declared, properties, format);
  }
  return 0;
}

}  // namespace kryflow::cli
