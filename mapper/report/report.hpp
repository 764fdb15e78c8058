#pragma once
// Reports rendered from the result document (result.json): text, CSV and an SVG plot of the front,
// and the atomic writing of an output folder. `mapper show` uses the same functions.

#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace npumap::report {

/// One layer mapping of a result, as a renderer reads it: a reference into the document, or, for a
/// layer held packed in a document built in memory (report_util.hpp), its JSON made for as long as
/// this lives (one layer's tree at a time, never the whole network's).
class LayerRef {
 public:
  explicit LayerRef(const nlohmann::ordered_json& node);
  const nlohmann::ordered_json& operator*() const { return ref_ != nullptr ? *ref_ : owned_; }
  const nlohmann::ordered_json* operator->() const { return &**this; }

 private:
  const nlohmann::ordered_json* ref_ = nullptr;
  nlohmann::ordered_json owned_;
};

/// The layers of a front point, resolved: entry i is the mapping of the i-th layer in topological
/// order (a point lists indices into the result's `layer_mappings`; older results inline them), or
/// the layers of a list (vela_baseline's `layers`). Each is read when asked for (LayerRef).
class PointLayers {
 public:
  PointLayers(const nlohmann::ordered_json& result, const nlohmann::ordered_json& point);
  /// The layer objects (plain or packed) of `list`, a JSON list.
  explicit PointLayers(const nlohmann::ordered_json& list);

  std::size_t size() const { return nodes_.size(); }
  bool empty() const { return nodes_.empty(); }
  LayerRef operator[](std::size_t i) const { return LayerRef(*nodes_[i]); }
  /// The index into `layer_mappings` of entry i, or SIZE_MAX for a layer given inline.
  std::size_t mapping_index(std::size_t i) const { return indices_[i]; }

  class Iterator {
   public:
    Iterator(const PointLayers* layers, std::size_t i) : layers_(layers), i_(i) {}
    LayerRef operator*() const { return (*layers_)[i_]; }
    Iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator!=(const Iterator& other) const { return i_ != other.i_; }

   private:
    const PointLayers* layers_;
    std::size_t i_;
  };
  Iterator begin() const { return {this, 0}; }
  Iterator end() const { return {this, nodes_.size()}; }

 private:
  std::vector<const nlohmann::ordered_json*> nodes_;
  std::vector<std::size_t> indices_;
};

/// What the text report shows beyond its default blocks.
struct TextOptions {
  bool verbose = false;  ///< every layer's keep rates by filter and the join's counters (-v)
};

/// The human report (text_report.cpp), at most 100 columns wide: workload, arch, options; the chosen
/// point's time and SRAM per layer, totals, how each layer runs, its five slowest layers; the front;
/// the gain over the best mapping without fusion; a one-line keep-rate summary (per layer and per
/// filter with `verbose`, or when nothing maps).
std::string render_text(const nlohmann::ordered_json& result, const TextOptions& options = {});
/// "wrote FOLDER: file, file, ..." wrapped at 100 columns (the text report's last line).
std::string render_written(const std::filesystem::path& folder, const std::vector<std::string>& files);
/// front.csv: one line per front point.
std::string render_csv(const nlohmann::ordered_json& result);
/// layers.csv of one front point (0 = the chosen one): per layer the cycles of each component and the
/// one that bounds it, MACs and utilisation, bytes per memory, block config, traversal, placements and
/// fusion. Only the header when the result has no such point.
std::string render_layers_csv(const nlohmann::ordered_json& result, std::size_t point);
/// The chosen point's layers beside Vela's schedule's (layers_vs_vela.csv): per layer both mappings'
/// cycles, reserved SRAM, off-chip bytes, block config, traversal, weights and fusion, and which of
/// these choices differ (header only without a Vela schedule).
std::string render_vela_comparison_csv(const nlohmann::ordered_json& result);
/// layers.csv of Vela's schedule (result.json's vela_baseline; the header only without one).
std::string render_vela_layers_csv(const nlohmann::ordered_json& result);
/// The per-layer table, time and totals of one front point (`mapper show --point N`); empty if absent.
std::string render_point_text(const nlohmann::ordered_json& result, std::size_t point);
/// front.svg (front_svg.cpp): the sizing view, latency against peak SRAM with the staircase and off-chip
/// bytes as colour, beside latency against off-chip bytes; the chosen point, the best mapping without
/// fusion and Vela 2.1's schedule marked in both.
std::string render_svg(const nlohmann::ordered_json& result);

/// Throws common::UserError if `folder` already holds a result (runs never overwrite each other) or
/// could not be created or written (common::check_output_folder_path); called before the mapping runs.
/// A `numbered` folder (the default runs/<timestamp>) is not checked for a result: if another run
/// takes its name meanwhile, write_outputs takes the next free number.
void check_output_folder(const std::filesystem::path& folder, bool numbered = false);
/// The document as result.json text (indent 1); any invalid UTF-8 in a name (e.g. a path given on
/// the command line) is written as U+FFFD rather than failing the run.
std::string document_text(const nlohmann::ordered_json& result);
/// document_text's bytes written to `out` as they are made (no copy of the whole text).
void write_document(std::ostream& out, const nlohmann::ordered_json& result);
/// Writes result.json, front.csv, front.svg, layers.csv (of the chosen point) and, when there is a
/// chosen point, Vela's two CSV files (vela_csv.hpp) as one folder (common::write_folder_atomic);
/// a per-layer run (no front) only result.json. Returns the names of the files written, in order,
/// and sets `*written_to` (when given) to the folder written: `folder`, or with `numbered`, the first
/// free of folder, folder-2, folder-3, ... at the time of writing. A `folder` another process
/// claimed first (not `numbered`) is a one-line common::UserError, never an overwrite.
std::vector<std::string> write_outputs(const std::filesystem::path& folder, const nlohmann::ordered_json& result,
                                       bool numbered = false, std::filesystem::path* written_to = nullptr);

}  // namespace npumap::report
