#include "workloads/dag.hpp"

namespace npumap::workloads {

Dag build_dag(const Workload& w) {
  Dag dag(w.layers.size());
  for (std::size_t t = 0; t < w.tensors.size(); ++t) {
    const TensorInfo& tensor = w.tensors[t];
    if (tensor.producer < 0) continue;
    for (int c : tensor.consumers) {
      boost::add_edge(static_cast<std::size_t>(tensor.producer), static_cast<std::size_t>(c), DagEdge{static_cast<int>(t)},
                      dag);
    }
  }
  return dag;
}

}  // namespace npumap::workloads
