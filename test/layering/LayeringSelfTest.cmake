# Must-fail tests of the layering checks (ctest `layering_selftest`): small temporary trees, each run
# through cmake/CheckLayering.cmake (or cmake/CheckLayeringDoc.cmake) in a child cmake, which must
# pass on the clean tree and fail, naming the culprit, on each broken one.
# Run as: cmake -DROOT=<project root> -DWORK=<scratch folder> -P test/layering/LayeringSelfTest.cmake
set(check "${ROOT}/cmake/CheckLayering.cmake")
set(check_doc "${ROOT}/cmake/CheckLayeringDoc.cmake")
set(failures "")

# A tree with a few ruled folders whose includes all follow the rules.
function(make_clean_tree dir)
  file(REMOVE_RECURSE "${dir}")
  file(WRITE "${dir}/common/base.hpp" "#pragma once\n#include <vector>\n")
  file(WRITE "${dir}/arch/arch.hpp" "#pragma once\n#include \"common/base.hpp\"\n")
  file(WRITE "${dir}/model/model.hpp" "#pragma once\n#include <arch/arch.hpp>\n#include \"model_detail.hpp\"\n")
  file(WRITE "${dir}/model/model_detail.hpp" "#pragma once\n")
  file(WRITE "${dir}/mapper/report/report.cpp" "#include \"mapper/report/report.hpp\"\n")
  file(WRITE "${dir}/mapper/report/report.hpp" "#pragma once\n")
  file(WRITE "${dir}/mapper/sweep/sweep.hpp" "#pragma once\n")
  file(WRITE "${dir}/build/release/junk.cpp" "#include \"mapper/sweep/sweep.hpp\"\n")  # not a source folder
endfunction()

# expect(<name> <0|1> <tree> <text the failure must print>)
function(expect name want tree text)
  execute_process(COMMAND ${CMAKE_COMMAND} -DROOT=${tree} -P ${check}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(got 0)
  if(NOT rc EQUAL 0)
    set(got 1)
  endif()
  string(REGEX REPLACE "[ \n]+" " " all "${out}${err}")  # CMake wraps long messages
  if(NOT got EQUAL want)
    set(failures "${failures}\n${name}: exit ${rc}, expected ${want}\n${out}${err}" PARENT_SCOPE)
  elseif(want AND NOT all MATCHES "${text}")
    set(failures "${failures}\n${name}: the message does not name '${text}':\n${out}${err}" PARENT_SCOPE)
  endif()
endfunction()

set(t "${WORK}/tree")
make_clean_tree("${t}")
expect(clean_tree 0 "${t}" "")

make_clean_tree("${t}")
file(WRITE "${t}/common/bad.hpp" "#pragma once\n#include \"arch/arch.hpp\"\n")
expect(quoted_upward_include 1 "${t}" "common/bad.hpp: includes arch/arch.hpp")

make_clean_tree("${t}")
file(WRITE "${t}/arch/bad.cpp" "#include <model/model.hpp>\n")
expect(angle_bracket_project_include 1 "${t}" "arch/bad.cpp: includes model/model.hpp")

make_clean_tree("${t}")
file(WRITE "${t}/model/bad.cpp" "#include <vector>\n#if defined(X)\n#  include \"mapper/sweep/sweep.hpp\"\n#endif\n")
expect(include_inside_if 1 "${t}" "model/bad.cpp: includes mapper/sweep/sweep.hpp")

make_clean_tree("${t}")
file(WRITE "${t}/mapper/report/bad.cpp" "#include \"../sweep/sweep.hpp\"\n")
expect(relative_include 1 "${t}" "mapper/report/bad.cpp: includes mapper/sweep/sweep.hpp")

make_clean_tree("${t}")
file(WRITE "${t}/newfolder/x.cpp" "int x;\n")
expect(folder_without_rule 1 "${t}" "newfolder/: holds sources")

make_clean_tree("${t}")
file(WRITE "${t}/workloads/w.hpp" "#pragma once\n")
file(WRITE "${t}/workloads/tflite/t.hpp" "#pragma once\n")
file(WRITE "${t}/workloads/bad.cpp" "#include \"workloads/tflite/t.hpp\"\n")
expect(sub_folder_is_not_the_parent 1 "${t}" "workloads/bad.cpp: includes workloads/tflite/t.hpp")

make_clean_tree("${t}")
file(WRITE "${t}/model/bad.cpp" "#include \"no/such/header.hpp\"\n")
expect(unresolved_quoted_include 1 "${t}" "not a header of the project")

make_clean_tree("${t}")
file(WRITE "${t}/mapper/report/bad.cpp" "  #  include <mpi.h>\n")
expect(mpi_outside_the_sweep 1 "${t}" "includes MPI")

# The dependency table of architecture.md against the rules.
function(expect_doc name want doc text)
  execute_process(COMMAND ${CMAKE_COMMAND} -DDOC=${doc} -P ${check_doc}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(got 0)
  if(NOT rc EQUAL 0)
    set(got 1)
  endif()
  string(REGEX REPLACE "[ \n]+" " " all "${out}${err}")  # CMake wraps long messages
  if(NOT got EQUAL want)
    set(failures "${failures}\n${name}: exit ${rc}, expected ${want}\n${out}${err}" PARENT_SCOPE)
  elseif(want AND NOT all MATCHES "${text}")
    set(failures "${failures}\n${name}: the message does not name '${text}':\n${out}${err}" PARENT_SCOPE)
  endif()
endfunction()
file(READ "${ROOT}/docs/design/architecture.md" doc)
expect_doc(doc_as_committed 0 "${ROOT}/docs/design/architecture.md" "")
string(REPLACE "| `npumap::eval` | model |" "| `npumap::eval` | model, search |" wrong "${doc}")
file(WRITE "${WORK}/extra_dependency.md" "${wrong}")
expect_doc(doc_extra_dependency 1 "${WORK}/extra_dependency.md" "npumap::eval")
string(REPLACE "| `npumap::sweep` | search, report, tflite |" "| `npumap::sweep` | search, report |" wrong "${doc}")
file(WRITE "${WORK}/missing_dependency.md" "${wrong}")
expect_doc(doc_missing_dependency 1 "${WORK}/missing_dependency.md" "npumap::sweep")
string(REGEX REPLACE "\\| `npumap::model` \\|[^\n]*\n" "" wrong "${doc}")
file(WRITE "${WORK}/missing_row.md" "${wrong}")
expect_doc(doc_missing_row 1 "${WORK}/missing_row.md" "npumap::model")

file(REMOVE_RECURSE "${WORK}")
if(failures)
  message(FATAL_ERROR "layering self-test failed:${failures}")
endif()
message(STATUS "layering self-test: ok")
