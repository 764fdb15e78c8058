#pragma once
// Writing a Workload back as workload YAML (docs/workload-format.md), so a network that came from
// elsewhere (e.g. an imported .tflite model) can be read, edited and mapped like a hand-written one.
// The text loads back into an equal Workload: every layer carries its keys explicitly (no network
// defaults), names are double-quoted, and numbers are written in their shortest exact form.

#include <string>

#include "workloads/workload.hpp"

namespace npumap::workloads {

/// A YAML double-quoted scalar that reads back as `s` (slashes, colons, quotes; control characters
/// as \x escapes; bytes that are not UTF-8 as U+FFFD): common::yaml_quote.
std::string yaml_quote(const std::string& s);

/// The value of a layer's `weight_encodings:` key (a flow list of maps).
std::string weight_encodings_yaml(const std::vector<WeightEncodingEntry>& entries);
/// The value of a layer's `lut:` key.
std::string lut_yaml(const LutTable& table);

/// The workload as YAML text; `header` (may be empty) is written first as comment lines, one per
/// line of `header` (control characters in a line escaped: common::yaml_comment_text).
std::string to_yaml(const Workload& workload, const std::string& header = {});

}  // namespace npumap::workloads
