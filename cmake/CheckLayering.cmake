# The layering of the source folders, checked (ctest `layering`): each folder may include only the
# project headers of the folders below it, CLI11 only in mapper/cli, Boost.Graph only in the workload
# DAG, MPI only in mapper/sweep/mpi_sweep.cpp, and process-wide set-up (signal handlers, the stderr logger, tbb::global_control) only in
# mapper/cli. Run as: cmake -DROOT=<project root> -P cmake/CheckLayering.cmake
# Each rule: "folder|allowed include prefixes, comma-separated" (the folder itself is always allowed).
set(rules
  "common|"
  "arch|common/"
  "workloads|common/,arch/"
  "workloads/tflite|common/,arch/,workloads/"
  "model|common/,arch/"
  "mapper/search|common/,arch/,workloads/,model/"
  # The join package: the search's row types and Pareto kernels, never the stage or map_network.
  "mapper/search/join|common/,model/,mapper/search/compat.hpp,mapper/search/pmapping.hpp,mapper/search/objectives.hpp,mapper/search/keep_rates.hpp,mapper/search/pareto.hpp,mapper/search/dominance_filter.hpp,mapper/search/sorted_search.hpp"
  "mapper/report|common/,arch/,workloads/,model/,mapper/search/"
  "mapper/eval|common/,arch/,model/"
  "mapper/sweep|common/,arch/,workloads/,workloads/tflite/,model/,mapper/search/,mapper/report/"
  "mapper/cli|common/,arch/,workloads/,workloads/tflite/,model/,mapper/search/,mapper/report/,mapper/eval/,mapper/sweep/")
set(violations "")
foreach(rule ${rules})
  string(FIND "${rule}" "|" bar)
  string(SUBSTRING "${rule}" 0 ${bar} folder)
  math(EXPR rest_at "${bar} + 1")
  string(SUBSTRING "${rule}" ${rest_at} -1 rest)
  string(REPLACE "," ";" more "${rest}")
  set(allowed "${folder}/" "npumap_version.hpp" ${more})
  file(GLOB sources "${ROOT}/${folder}/*.hpp" "${ROOT}/${folder}/*.cpp")
  foreach(src ${sources})
    file(RELATIVE_PATH rel "${ROOT}" "${src}")
    file(STRINGS "${src}" lines REGEX "^#include ")
    foreach(line ${lines})
      if(line MATCHES "^#include \"([^\"]+)\"")
        set(header "${CMAKE_MATCH_1}")
        set(ok FALSE)
        foreach(prefix ${allowed})
          string(FIND "${header}" "${prefix}" at)
          if(at EQUAL 0)
            set(ok TRUE)
          endif()
        endforeach()
        # A header of a sub-folder (workloads/tflite/) is not part of its parent's allowance: a folder
        # may include it only when its rule names workloads/tflite/.
        list(FIND more "workloads/tflite/" names_tflite)
        if(ok AND NOT folder STREQUAL "workloads/tflite" AND header MATCHES "^workloads/tflite/" AND names_tflite EQUAL -1)
          set(ok FALSE)
        endif()
        if(NOT ok)
          list(APPEND violations "${rel}: includes \"${header}\", which ${folder}/ must not depend on")
        endif()
      elseif(line MATCHES "^#include <CLI/" AND NOT folder STREQUAL "mapper/cli")
        list(APPEND violations "${rel}: includes CLI11, which only mapper/cli may use")
      elseif(line MATCHES "^#include <boost/graph/" AND NOT rel MATCHES "^workloads/(dag|loader)\\.")
        list(APPEND violations "${rel}: includes Boost.Graph, which only workloads/dag.hpp and the loader may use")
      elseif(line MATCHES "^#include <mpi\\.h>" AND NOT rel STREQUAL "mapper/sweep/mpi_sweep.cpp")
        list(APPEND violations "${rel}: includes MPI, which only mapper/sweep/mpi_sweep.cpp may use")
      elseif(line MATCHES "^#include <(tbb/global_control.h|csignal|spdlog/sinks/)" AND NOT folder STREQUAL "mapper/cli")
        list(APPEND violations "${rel}: ${line}: process-wide set-up belongs in mapper/cli (the process contract)")
      endif()
    endforeach()
  endforeach()
endforeach()
if(violations)
  list(JOIN violations "\n" text)
  message(FATAL_ERROR "layering violations:\n${text}")
endif()
message(STATUS "layering: ok")
