#pragma once
// The layer DAG of a workload as a Boost.Graph: vertices are layer indices, one edge per (shared
// tensor, writer, consuming layer). Only the loader and tests need it, so workload.hpp does not include Boost.

#include <boost/graph/adjacency_list.hpp>

#include "workloads/workload.hpp"

namespace npumap::workloads {

/// Edge property of the DAG: the shared tensor that connects producer to consumer.
struct DagEdge {
  int tensor = -1;
};

/// Vertices are layer indices; one edge per (shared tensor, writer, consuming layer).
using Dag = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, boost::no_property, DagEdge>;

/// The DAG of `w`'s layers, from each tensor's producer and consumers.
Dag build_dag(const Workload& w);

}  // namespace npumap::workloads
