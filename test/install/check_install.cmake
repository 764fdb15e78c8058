# ctest `install`: `cmake --install` of this build into a fresh prefix, then the installed mapper
# run from another folder, so it must find its zoo, presets and models through its install prefix
# (common/data_dir.hpp), never through the source or build tree.
#   cmake -DBUILD=<build dir> -DWORK=<scratch dir> -P check_install.cmake
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/elsewhere")
set(prefix "${WORK}/prefix")

function(run)
  cmake_parse_arguments(R "" "EXPECT" "COMMAND" ${ARGN})
  execute_process(COMMAND ${R_COMMAND} WORKING_DIRECTORY "${WORK}/elsewhere"
                  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT DEFINED R_EXPECT)
    set(R_EXPECT 0)
  endif()
  if(NOT status STREQUAL R_EXPECT)
    message(FATAL_ERROR "`${R_COMMAND}` exited ${status} (expected ${R_EXPECT})\nstdout:\n${out}\nstderr:\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
endfunction()

function(expect_in text what)
  string(FIND "${text}" "${what}" at)
  if(at LESS 0)
    message(FATAL_ERROR "expected `${what}` in:\n${text}")
  endif()
endfunction()

run(COMMAND "${CMAKE_COMMAND}" --install "${BUILD}" --prefix "${prefix}")

# What the install holds.
foreach(f bin/mapper share/npu-mapper/workloads/resnet18.yaml share/npu-mapper/workloads/tiny_chain.yaml
          share/npu-mapper/workloads/models/tflm__person_detect.tflite share/npu-mapper/workloads/models/README.md
          share/npu-mapper/workloads/models/LICENSE-Apache-2.0.txt
          share/npu-mapper/workloads/models/other_precision/tflm__trained_lstm_int8.tflite
          share/npu-mapper/presets/ethos-u55-256.yaml share/npu-mapper/presets/ethos-u65-512.yaml
          share/npu-mapper/sweeps/example.yaml share/npu-mapper/reference/npu_reference_passes.json
          share/doc/npu-mapper/README.md share/doc/npu-mapper/LICENSE share/doc/npu-mapper/NOTICE
          share/doc/npu-mapper/docs/user-guide.md share/man/man1/mapper.1)
  if(NOT EXISTS "${prefix}/${f}")
    message(FATAL_ERROR "the install lacks ${f}")
  endif()
endforeach()
# Nothing of the sources or the build tree: no C++ files, no CMake files, no links back.
file(GLOB_RECURSE stray LIST_DIRECTORIES false "${prefix}/*.cpp" "${prefix}/*.hpp" "${prefix}/CMakeLists.txt")
if(stray)
  message(FATAL_ERROR "the install holds source files: ${stray}")
endif()
file(GLOB_RECURSE everything LIST_DIRECTORIES true "${prefix}/*")
foreach(f ${everything})
  if(IS_SYMLINK "${f}")
    message(FATAL_ERROR "the install holds a symbolic link: ${f}")
  endif()
endforeach()

# The installed binary, run from another folder, finds its zoo and presets under its prefix.
set(mapper "${prefix}/bin/mapper")
run(COMMAND "${mapper}" --workload resnet18 --out run1 -j 2)
expect_in("${out}" "resnet18 (31 layers")
if(NOT EXISTS "${WORK}/elsewhere/run1/result.json")
  message(FATAL_ERROR "no run1/result.json in the working folder")
endif()
file(READ "${WORK}/elsewhere/run1/result.json" result)
expect_in("${result}" "${prefix}/share/npu-mapper/workloads/resnet18.yaml")
run(COMMAND "${mapper}" --workload tflm__person_detect --arch ethos-u65-256 --out run2 -q -j 2)
run(COMMAND "${mapper}" list workloads)
expect_in("${out}" "tflm__person_detect")
run(COMMAND "${mapper}" list presets)
expect_in("${out}" "ethos-u65-512")
run(COMMAND "${mapper}" eval "${prefix}/share/npu-mapper/reference/npu_reference_passes.json" --check)
expect_in("${out}" "175/175 matched")
# Moved away from its data, it says where it looked, in one line, exit 2.
file(MAKE_DIRECTORY "${WORK}/lonely/bin")
file(COPY "${mapper}" DESTINATION "${WORK}/lonely/bin")
run(COMMAND "${WORK}/lonely/bin/mapper" --workload resnet18 --out run3 EXPECT 2)
expect_in("${err}" "share/npu-mapper")
# NPUMAP_DATA_DIR points it at the data.
run(COMMAND "${CMAKE_COMMAND}" -E env "NPUMAP_DATA_DIR=${prefix}/share/npu-mapper" "${WORK}/lonely/bin/mapper"
            --workload tiny_chain --out run4 -q)
file(REMOVE_RECURSE "${WORK}")
