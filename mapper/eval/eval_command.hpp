#pragma once
// `mapper eval FILE [--check] [--out F]`: re-evaluate passes written in the pass JSON format
// (docs/pass-format.md) with the cycle model, and optionally compare with the `expected` results they carry.

#include <iosfwd>
#include <string>

namespace npumap::eval {

/// Options of `mapper eval`.
struct EvalOptions {
  std::string input_path;   ///< a JSON list of bare `input` objects or `{id, input, expected}` records
  bool check = false;       ///< compare with `expected` where present
  std::string output_path;  ///< where the `{id, result}` list goes; empty: `out` (only without check)
};

/// Runs `mapper eval`. Without check, writes the `{id, result}` list to output_path (via a temporary
/// file and a rename) or to `out`. With check, writes the list only when output_path is set, and prints
/// "N/M matched" plus one `id field expected actual` line per mismatch to `out`; returns 1 if any record
/// mismatched, else 0. Bad input throws common::UserError.
int run_eval(const EvalOptions& options, std::ostream& out, std::ostream& err);

}  // namespace npumap::eval
