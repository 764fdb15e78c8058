#pragma once
// A design-space sweep spec (docs/sweep-format.md): a base arch, a grid and/or an explicit list of
// arch parameter settings, and the workloads to map on every resulting arch point.
//
// load_sweep_spec() reads and checks everything before any mapping starts: every key and value, every
// workload file, and every arch point (each is built with the arch loader, so a bad value is reported
// at its file:line:col in the spec).

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "arch/arch.hpp"
#include "mapper/search/objectives.hpp"
#include "workloads/tflite/model.hpp"
#include "workloads/workload.hpp"

namespace npumap::sweep {

/// One workload of a sweep.
struct SweepWorkload {
  std::string id;    ///< file stem: the name used in outputs ("resnet18")
  std::string path;  ///< resolved path of its YAML or .tflite file
  workloads::Workload workload;  ///< as loaded (a .tflite: lowered for the base arch's accelerator)
  /// A .tflite model as read (once), lowered again for each accelerator; null for YAML workloads.
  std::shared_ptr<const tflite::Model> model;
  /// A .tflite model lowered for each accelerator the points use (Vela's lowering and weight
  /// encoding depend on it); empty for YAML workloads.
  std::map<std::string, workloads::Workload> by_accelerator;
  /// The workload a point with this accelerator maps.
  const workloads::Workload& for_accelerator(const std::string& accelerator) const {
    const auto it = by_accelerator.find(accelerator);
    return it == by_accelerator.end() ? workload : it->second;
  }
};

/// One arch point: the base arch with some parameters set.
struct SweepPoint {
  std::size_t index = 0;  ///< position in the sweep (grid points first, then the explicit list)
  std::string id;         ///< "p01", "p02", ... (zero-padded to the number of points)
  std::vector<std::pair<std::string, std::string>> params;  ///< (key, value as written), in spec key order
  arch::Arch arch;
};

/// A checked sweep spec.
struct SweepSpec {
  std::string file;  ///< the spec's path
  std::string name;  ///< `name:`, else the file stem
  std::string base;  ///< preset name or resolved arch file path
  std::vector<std::string> grid_keys;  ///< the grid's keys in file order (the CSV's parameter columns)
  std::vector<std::string> param_keys;  ///< every key any point sets: grid keys first, then the list's
  std::vector<SweepWorkload> workloads;
  std::vector<SweepPoint> points;
  std::vector<search::Objective> objectives = search::default_objectives();
  bool fusion = true;
  double epsilon = search::kDefaultEpsilon;  ///< ε of each point's front (search::JoinOptions::epsilon)
  /// Hash of everything the results depend on (spec, workload and base arch file bytes, tool version):
  /// a resumed sweep must match it.
  std::string fingerprint;
};

/// The keys a grid or a point may set, for docs and hints.
std::vector<std::string> sweep_parameter_keys();

/// Reads and checks a spec; throws common::UserError (file:line:col, key, hint) on any problem.
SweepSpec load_sweep_spec(const std::string& path);

}  // namespace npumap::sweep
