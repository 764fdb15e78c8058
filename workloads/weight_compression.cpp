#include "workloads/weight_compression.hpp"

#include <fmt/format.h>

#include "common/yaml_reader.hpp"

namespace npumap::workloads {

void apply_weight_compression_file(Workload& workload, const std::string& file) {
  const common::YamlNode root = common::YamlNode::load_file(file);
  if (root.is_null()) {
    throw common::UserError({file, 1, 1}, "", "the file holds no layers", "write `layer_name: ratio` lines");
  }
  root.expect_map();
  std::vector<std::string> names;
  for (const Layer& l : workload.layers) {
    if (has_weights(l.kind)) names.push_back(l.name);
  }
  for (const auto& [name, value] : root.entries()) {
    const int index = workload.layer_index(name);
    if (index < 0) {
      const std::string near = common::closest_match(name, names);
      throw value.error(fmt::format("no layer `{}` in workload {}", name, workload.name),
                        near.empty() ? "name a layer with weights" : fmt::format("did you mean `{}`?", near));
    }
    Layer& l = workload.layers[static_cast<std::size_t>(index)];
    if (!has_weights(l.kind)) {
      throw value.error(fmt::format("layer `{}` ({}) has no weights", name, op_name(l)),
                        "only conv2d, depthwise_conv2d and fully_connected layers have weights to compress");
    }
    const double ratio = value.as_double();
    if (!(ratio > 0.0 && ratio <= 64.0)) {
      throw value.error(fmt::format("must be greater than 0 and at most 64, got {}", value.as_string()),
                        "the ratio of encoded to raw weight bytes");
    }
    l.weight_compression = ratio;
  }
}

}  // namespace npumap::workloads
