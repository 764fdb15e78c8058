// `mapper eval`: the bridge between the pass JSON and the cycle model.
//
// Flow: read the file (a JSON list), turn each element into a Pass and an Arch with
// model::read_pass_input (a bare `input` object, or an `{id, input, expected}` record), evaluate it,
// and write `{id, result}` in the `expected` shape. With --check, each result is compared with the
// record's `expected`: doubles to a relative 1e-9, integers and strings exactly, bandwidth lists as
// sets keyed by (mem_area, purpose, direction) with missing entries read as zero. Every differing
// field is reported as `id field expected actual`, then the count of records that matched.

#include "mapper/eval/eval_command.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/user_error.hpp"
#include "model/evaluate.hpp"
#include "common/files.hpp"
#include "common/json_file.hpp"
#include "common/json_reader.hpp"
#include "model/pass_json.hpp"

namespace npumap::eval {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

constexpr double kRelTolerance = 1e-9;

struct Mismatch {
  std::string field;
  std::string expected;
  std::string actual;
};

bool numbers_match(const json& e, const json& a) {
  if (e.is_number_integer() && a.is_number_integer()) return e.get<std::int64_t>() == a.get<std::int64_t>();
  const double x = e.get<double>();
  const double y = a.get<double>();
  return std::abs(x - y) <= kRelTolerance * std::max(std::abs(x), std::abs(y));
}

/// Bandwidth list as a map (mem_area, purpose, direction) -> bytes.
std::map<std::tuple<std::string, std::string, std::string>, double> bandwidth_map(const json& list,
                                                                                  const std::string& field,
                                                                                  std::vector<Mismatch>& out) {
  std::map<std::tuple<std::string, std::string, std::string>, double> m;
  if (!list.is_array()) {
    out.push_back({field, "a list", list.dump()});
    return m;
  }
  for (const auto& e : list) {
    if (!e.is_object() || !e.contains("mem_area") || !e.contains("purpose") || !e.contains("direction") ||
        !e.contains("bytes") || !e["bytes"].is_number()) {
      out.push_back({field, "{mem_area, purpose, direction, bytes}", e.dump()});
      continue;
    }
    m[{e["mem_area"].dump(), e["purpose"].dump(), e["direction"].dump()}] += e["bytes"].get<double>();
  }
  return m;
}

void compare_bandwidths(const std::string& field, const json& expected, const json& actual,
                        std::vector<Mismatch>& out) {
  const auto em = bandwidth_map(expected, field, out);
  const auto am = bandwidth_map(actual, field, out);
  std::map<std::tuple<std::string, std::string, std::string>, std::pair<double, double>> all;
  for (const auto& [k, v] : em) all[k].first = v;
  for (const auto& [k, v] : am) all[k].second = v;
  for (const auto& [k, v] : all) {
    const double x = v.first;
    const double y = v.second;
    if (std::abs(x - y) <= kRelTolerance * std::max(std::abs(x), std::abs(y))) continue;
    const auto unquote = [](const std::string& s) { return s.size() >= 2 ? s.substr(1, s.size() - 2) : s; };
    out.push_back({fmt::format("{}[{}.{}.{}]", field, unquote(std::get<0>(k)), unquote(std::get<1>(k)),
                               unquote(std::get<2>(k))),
                   json(x).dump(), json(y).dump()});
  }
}

void compare_values(const std::string& field, const json& expected, const json& actual, std::vector<Mismatch>& out) {
  if (field == "bandwidths" || field == "scaled_bandwidths") {
    compare_bandwidths(field, expected, actual, out);
  } else if (expected.is_object() && actual.is_object()) {
    for (const auto& item : expected.items()) {
      const std::string sub = field + "." + item.key();
      if (!actual.contains(item.key())) {
        out.push_back({sub, item.value().dump(), "<absent>"});
      } else {
        compare_values(sub, item.value(), actual[item.key()], out);
      }
    }
    for (const auto& item : actual.items())
      if (!expected.contains(item.key())) out.push_back({field + "." + item.key(), "<absent>", item.value().dump()});
  } else if (expected.is_array() && actual.is_array()) {
    if (expected.size() != actual.size()) {
      out.push_back({field, expected.dump(), actual.dump()});
      return;
    }
    for (std::size_t i = 0; i < expected.size(); ++i)
      compare_values(fmt::format("{}[{}]", field, i), expected[i], actual[i], out);
  } else if (expected.is_number() && actual.is_number()) {
    if (!numbers_match(expected, actual)) out.push_back({field, expected.dump(), actual.dump()});
  } else if (expected != actual) {
    out.push_back({field, expected.dump(), actual.dump()});
  }
}

/// Compares the keys `expected` has; keys only in the result (such as energy_pj) are not compared.
std::vector<Mismatch> compare_result(const json& expected, const json& actual) {
  std::vector<Mismatch> out;
  for (const auto& item : expected.items()) {
    if (!actual.contains(item.key())) {
      out.push_back({item.key(), item.value().dump(), "<absent>"});
    } else {
      compare_values(item.key(), item.value(), actual[item.key()], out);
    }
  }
  return out;
}


/// One pass to evaluate: its id in the output, the pass (`input`) and the `expected` result it may
/// carry, both pointing into the loaded document, and, for a front point's layer, the index of its
/// layer mapping in result.json (points share layer mappings, evaluated once), else -1.
struct EvalRecord {
  json id;
  const json* input = nullptr;
  const json* expected = nullptr;
  std::string path;
  std::ptrdiff_t mapping = -1;
};

/// The passes of every front point of a saved result.json, as records with the id
/// "point<i>:<layer>", so a mapping the tool reported can be re-evaluated layer by layer. A point's
/// layers must be indices into `layer_mappings` (or, in older results, the layer objects): a
/// tampered entry is an error, never silently skipped.
std::vector<EvalRecord> records_of_result(const json& result, const std::string& file) {
  std::vector<EvalRecord> records;
  const common::JsonPath root{file, ""};
  const json& front = result["front"];
  if (!front.is_array()) root.at("front").fail("expected a list of front points");
  const json* mappings = common::find(result, "layer_mappings");
  if (mappings != nullptr && !mappings->is_array()) root.at("layer_mappings").fail("expected a list");
  const std::size_t num_mappings = mappings != nullptr ? mappings->size() : 0;
  for (std::size_t p = 0; p < front.size(); ++p) {
    const common::JsonPath at = root.at("front").index(p);
    if (!front[p].is_object()) at.fail("expected an object");
    const json* layers = common::find(front[p], "layers");
    if (layers == nullptr) continue;
    if (!layers->is_array()) at.at("layers").fail("expected a list");
    for (std::size_t i = 0; i < layers->size(); ++i) {
      const json& ref = (*layers)[i];
      const common::JsonPath li = at.at("layers").index(i);
      if (!ref.is_object() && (!ref.is_number_unsigned() || ref.get<std::uint64_t>() >= num_mappings)) {
        li.fail(fmt::format("expected an index into layer_mappings (it has {} entries) or a layer object", num_mappings));
      }
      const json& layer = ref.is_object() ? ref : (*mappings)[ref.get<std::size_t>()];
      if (!layer.is_object()) li.fail("the layer mapping is not an object");
      const json* pass = common::find(layer, "pass");
      if (pass == nullptr) continue;  // a layer on the CPU has no pass
      const json* name = common::find(layer, "layer");
      const std::string layer_name = name != nullptr ? common::as_string(*name, li.at("layer")) : std::string();
      const std::ptrdiff_t mapping = ref.is_object() ? -1 : static_cast<std::ptrdiff_t>(ref.get<std::size_t>());
      records.push_back({fmt::format("point{}:{}", p, layer_name), pass, nullptr,
                         fmt::format("front[{}].layers[{}].pass", p, i), mapping});
    }
  }
  return records;
}

/// The records of a JSON list: bare `input` objects, or `{id, input, expected}` records.
std::vector<EvalRecord> records_of_list(const json& list, const std::string& file) {
  if (!list.is_array())
    throw common::UserError({file, 0, 0}, "records", "expected a JSON list of passes",
                            "write [ {\"id\": ..., \"input\": {...}}, ... ] or [ {input}, ... ], or give a result.json");
  std::vector<EvalRecord> records;
  records.reserve(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    const json& rec = list[i];
    EvalRecord r{static_cast<std::int64_t>(i), &rec, nullptr, fmt::format("records[{}]", i), -1};
    if (!rec.is_object()) throw common::UserError({file, 0, 0}, r.path, "expected an object");
    if (rec.contains("input")) {
      for (const auto& item : rec.items()) {
        if (item.key() != "id" && item.key() != "input" && item.key() != "expected") {
          const std::string near = common::closest_match(item.key(), {"id", "input", "expected"});
          throw common::UserError({file, 0, 0}, r.path + "." + item.key(), "unknown key",
                                  near.empty() ? "valid keys: id, input, expected" : "did you mean '" + near + "'?");
        }
      }
      if (rec.contains("id")) r.id = rec["id"];
      r.input = &rec["input"];
      if (rec.contains("expected")) r.expected = &rec["expected"];
      r.path += ".input";
    }
    records.push_back(std::move(r));
  }
  return records;
}

/// Appends `value` dumped with an indent of one space as if it sat `depth` levels deep in a document
/// dumped the same way: each line after the first gains `depth` spaces.
void append_nested(std::string& text, const ordered_json& value, int depth) {
  const std::string dumped = value.dump(1, ' ', false, json::error_handler_t::replace);
  const std::string indent(static_cast<std::size_t>(depth), ' ');
  for (char c : dumped) {
    text += c;
    if (c == '\n') text += indent;
  }
}

}  // namespace

int run_eval(const EvalOptions& options, std::ostream& out, std::ostream& err) {
  // A run folder stands for its result.json.
  std::error_code ec;
  const std::string file = std::filesystem::is_directory(options.input_path, ec)
                               ? (std::filesystem::path(options.input_path) / "result.json").string()
                               : options.input_path;
  // A result document (up to its own limit, common/files.hpp) is parsed without the sections eval
  // does not read: only its front and layer_mappings are built (vela_baseline, per_layer and the
  // join's steps are as large again).
  const auto sections = [](int depth, json::parse_event_t event, json& parsed) {
    return !(depth == 1 && event == json::parse_event_t::key && parsed.is_string() && parsed != "front" &&
             parsed != "layer_mappings");
  };
  const std::string hint = "give a JSON list of passes, a result.json or its run folder";
  const json loaded = common::parse_json_text<json>(file, common::read_result_or_text_file(file), hint, sections);
  const std::vector<EvalRecord> records = loaded.is_object() && loaded.contains("front")
                                              ? records_of_result(loaded, file)
                                              : records_of_list(loaded, options.input_path);

  // The `{id, result}` list, written as nlohmann's dump(1) of the whole list would write it, one
  // record at a time: a layer mapping that front points share is evaluated and dumped once.
  std::string text = records.empty() ? "[]" : "[\n";
  std::vector<std::string> result_text_of_mapping;
  int compared = 0;
  int matched = 0;
  std::ostringstream report;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const EvalRecord& rec = records[i];
    std::string* result_text = nullptr;
    std::string own_text;
    if (rec.mapping >= 0) {
      const auto m = static_cast<std::size_t>(rec.mapping);
      if (result_text_of_mapping.size() <= m) result_text_of_mapping.resize(m + 1);
      result_text = &result_text_of_mapping[m];
    } else {
      result_text = &own_text;
    }
    if (result_text->empty()) {
      const model::PassInput pi = model::read_pass_input(*rec.input, options.input_path, rec.path);
      const ordered_json result = model::write_metrics(model::evaluate(pi.arch, pi.pass));
      if (options.check && rec.expected != nullptr) {
        ++compared;
        if (!rec.expected->is_object())
          throw common::UserError({options.input_path, 0, 0}, fmt::format("records[{}].expected", i),
                                  "expected an object");
        // Compare through a plain json so both sides have the same value types.
        const std::vector<Mismatch> diffs = compare_result(*rec.expected, json::parse(result.dump()));
        const std::string id_text = rec.id.is_string() ? rec.id.get<std::string>() : rec.id.dump();
        for (const auto& d : diffs) report << id_text << ' ' << d.field << ' ' << d.expected << ' ' << d.actual << '\n';
        if (diffs.empty()) ++matched;
      }
      append_nested(*result_text, result, 2);
    }
    text += " {\n  \"id\": ";
    text += rec.id.dump(-1, ' ', false, json::error_handler_t::replace);
    text += ",\n  \"result\": ";
    text += *result_text;
    text += i + 1 < records.size() ? "\n },\n" : "\n }\n]";
  }
  text += "\n";

  if (!options.output_path.empty()) {
    common::write_file_atomic(options.output_path, text);
  } else if (!options.check) {
    out << text;
  }
  if (options.check) {
    out << report.str();
    out << matched << '/' << compared << " matched\n";
    if (compared < static_cast<int>(records.size()))
      err << (records.size() - static_cast<std::size_t>(compared)) << " record(s) had no `expected` to check\n";
    return matched == compared ? 0 : 1;
  }
  return 0;
}

}  // namespace npumap::eval
