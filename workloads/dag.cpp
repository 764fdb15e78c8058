#include "workloads/dag.hpp"

namespace npumap::workloads {

Dag build_dag(const Workload& w) {
  Dag dag(w.layers.size());
  for (std::size_t t = 0; t < w.tensors.size(); ++t) {
    const TensorInfo& tensor = w.tensors[t];
    // Every writer of a tensor runs before every reader.
    for (int writer : tensor.writers) {
      for (int c : tensor.consumers) {
        boost::add_edge(static_cast<std::size_t>(writer), static_cast<std::size_t>(c), DagEdge{static_cast<int>(t)}, dag);
      }
    }
  }
  return dag;
}

}  // namespace npumap::workloads
