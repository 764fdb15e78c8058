#pragma once
// `mapper eval --block-configs FILE.json [--check]`: re-derives Vela's SHRAM allocation, valid block
// configs and scheduler shortlist for the records of FILE.json (docs/design/pass-format-notes.md).

#include <iosfwd>
#include <string>

namespace npumap::eval {

/// Evaluates every record of `input_path` on its accelerator (default system config).
/// Without `check`, writes the results as JSON to `output_path` (temp file + rename) or to `out`
/// when `output_path` is empty. With `check`, compares alloc, num_valid, the shortlist and (where the
/// record has it) the full valid list with the record, prints one line per mismatch and "N/M matched"
/// to `out`, and writes the JSON only when `output_path` is given. Returns 0, or 1 on any mismatch.
/// Bad input throws npumap::common::UserError ("file: records[i].key: message (hint)"); `err` receives I/O notes.
int run_eval_block_configs(const std::string& input_path, bool check, const std::string& output_path, std::ostream& out,
                           std::ostream& err);

}  // namespace npumap::eval
