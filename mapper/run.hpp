#pragma once
// A whole mapping run: load, per-layer stage, join, report, write outputs (run.cpp).

#include <ostream>

#include "mapper/options.hpp"

namespace npumap::mapper {

/// Runs `mapper --workload ...`; returns the exit status (0 ok, 1 no valid mapping, 130 interrupted).
/// Bad input throws UserError.
int run_mapping(const RunOptions& options, std::ostream& out, std::ostream& err);

}  // namespace npumap::mapper
