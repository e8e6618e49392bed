// Shared-point lists of the gather-scatter, built on the host and copied to the backend.
#include "kryflow/sem/gather_scatter.hpp"

#include <limits>
#include <string>
#include <vector>

#include "kernels/sem/gather_scatter.hpp"
#include "kryflow/core/error.hpp"

namespace kryflow::sem {

GatherScatter::GatherScatter(const Backend& backend, const GlobalNumbering& numbering)
    : num_local_(static_cast<std::int64_t>(numbering.local_to_global.size())),
      num_global_(numbering.num_global) {
  if (num_local_ > std::numeric_limits<index_t>::max()) {
    throw NotSupported("GatherScatter: " + std::to_string(num_local_) +
                       " local points exceed the 32-bit index range");
  }
  // Slot of each shared global point (-1: not shared), in increasing global index.
  std::vector<index_t> slot(static_cast<std::size_t>(num_global_), -1);
  std::vector<std::int64_t> offsets = {0};
  for (std::int64_t q = 0; q < num_global_; ++q) {
    const int count = numbering.multiplicity[static_cast<std::size_t>(q)];
    if (count > 1) {
      slot[static_cast<std::size_t>(q)] = static_cast<index_t>(offsets.size() - 1);
      offsets.push_back(offsets.back() + count);
    }
  }
  num_shared_ = static_cast<index_t>(offsets.size() - 1);
  // Counting sort by slot, local indices visited in increasing order.
  std::vector<std::int64_t> next(offsets.begin(), offsets.end() - 1);
  std::vector<index_t> locals(static_cast<std::size_t>(offsets.back()));
  for (std::int64_t l = 0; l < num_local_; ++l) {
    const index_t s =
        slot[static_cast<std::size_t>(numbering.local_to_global[static_cast<std::size_t>(l)])];
    if (s >= 0)
      locals[static_cast<std::size_t>(next[static_cast<std::size_t>(s)]++)] =
          static_cast<index_t>(l);
  }
  offsets_ = Array<std::int64_t>::from_host(backend, offsets);
  locals_ = Array<index_t>::from_host(backend, locals);
}

void GatherScatter::apply(Vector& u) const {
  if (u.size() != static_cast<std::size_t>(num_local_)) {
    throw DimensionMismatch("GatherScatter::apply: expected a local vector of " +
                            std::to_string(num_local_) + " entries, got " +
                            std::to_string(u.size()));
  }
  if (!(u.backend() == backend())) {
    throw InvalidInput("GatherScatter::apply: the vector must live on " + backend().name());
  }
  kernels::sem::GatherScatterView view;
  view.num_shared = num_shared_;
  view.offsets = offsets_.data();
  view.locals = locals_.data();
  kernels::sem::gather_scatter(backend(), view, u.span());
}

}  // namespace kryflow::sem
