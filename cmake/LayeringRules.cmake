# The layering rules of the source tree (docs/design/architecture.md §7), read by
# cmake/CheckLayering.cmake (ctest `layering`: every include of every source folder) and by
# cmake/CheckLayeringDoc.cmake (ctest `layering_doc`: architecture.md's dependency table agrees).
#
# Each rule: "folder|allowed folders, comma-separated". A source in `folder` may include headers of
# `folder` itself and of the allowed folders, each meant exactly: a sub-folder is a folder of its own
# (workloads/ does not allow workloads/tflite/). The generated npumap_version.hpp is allowed
# everywhere. Every folder that holds sources needs a rule: a new folder without one fails the check.
set(NPUMAP_PRODUCT_FOLDERS
  common arch workloads workloads/tflite workloads/tflite/lowering model
  mapper/search mapper/search/join mapper/report mapper/eval mapper/sweep mapper/cli)
string(REPLACE ";" "," _npumap_product "${NPUMAP_PRODUCT_FOLDERS}")
set(NPUMAP_LAYERING_RULES
  # The product, bottom to top.
  "common|"
  "arch|common"
  "workloads|common,arch"
  "workloads/tflite|common,arch,workloads"
  "workloads/tflite/lowering|common,workloads/tflite"
  "model|common,arch"
  "mapper/search|common,arch,workloads,model,mapper/search/join"
  "mapper/search/join|common,arch,workloads,model,mapper/search"
  "mapper/report|common,arch,workloads,model,mapper/search"
  "mapper/eval|common,arch,model"
  "mapper/sweep|common,arch,workloads,workloads/tflite,model,mapper/search,mapper/report"
  "mapper/cli|common,arch,workloads,workloads/tflite,model,mapper/search,mapper/report,mapper/eval,mapper/sweep"
  # Benchmarks, fuzz harnesses and tests sit on top: any product header, and their own helpers.
  "bench|${_npumap_product}"
  "fuzz|${_npumap_product}"
  "test/support|${_npumap_product}"
  "test/arch|${_npumap_product},test/support"
  "test/cli|${_npumap_product},test/support,test/tflite"
  "test/docs|${_npumap_product},test/support"
  "test/eval|${_npumap_product},test/support"
  "test/model|${_npumap_product},test/support"
  "test/search|${_npumap_product},test/support"
  "test/sweep|${_npumap_product},test/support,test/search"
  "test/tflite|${_npumap_product},test/support"
  "test/workloads|${_npumap_product},test/support"
  # A sample source the function-length check reads (not compiled).
  "test/function_length|")

# The CMake library each product folder belongs to (the rows of architecture.md's dependency table).
set(NPUMAP_FOLDER_LIBRARIES
  "common|common"
  "arch|arch"
  "workloads|workloads"
  "workloads/tflite|tflite"
  "workloads/tflite/lowering|tflite"
  "model|model"
  "mapper/search|search"
  "mapper/search/join|search"
  "mapper/report|report"
  "mapper/eval|eval"
  "mapper/sweep|sweep"
  "mapper/cli|cli")
