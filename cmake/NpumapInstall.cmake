# Install layout (`cmake --install build/release --prefix DIR`) and its mirror in the build tree.
#
#   DIR/bin/mapper
#   DIR/share/npu-mapper/workloads/    the zoo: *.yaml, models/ (real .tflite models, their README and licence)
#   DIR/share/npu-mapper/presets/      arch presets
#   DIR/share/npu-mapper/sweeps/       the example sweep spec
#   DIR/share/npu-mapper/reference/    Vela's reference passes and block configs (`mapper eval ... --check`)
#   DIR/share/doc/npu-mapper/          README.md, LICENSE, NOTICE, docs/
#   DIR/share/man/man1/mapper.1
#
# The executable finds share/npu-mapper from its own folder (common/data_dir.hpp): NPUMAP_DATA_REL is
# the path from the bin folder to it. The build tree gets the same shape at configure time:
# build/<preset>/share/npu-mapper/{workloads,presets} are links into the source tree,
# and every executable sits one folder below build/<preset>/, so a binary run from the build tree
# reads the source tree's files.

if(NOT DEFINED CMAKE_INSTALL_DOCDIR)
  set(CMAKE_INSTALL_DOCDIR "share/doc/npu-mapper" CACHE PATH "Documentation root (DATAROOTDIR/doc/npu-mapper)")
endif()
include(GNUInstallDirs)

set(NPUMAP_DATA_INSTALL_DIR "${CMAKE_INSTALL_DATADIR}/npu-mapper")
file(RELATIVE_PATH NPUMAP_DATA_REL "${CMAKE_INSTALL_FULL_BINDIR}" "${CMAKE_INSTALL_FULL_DATADIR}/npu-mapper")

# The build tree's mirror, seen from build/<preset>/<folder>/ as from DIR/bin/.
get_filename_component(_npumap_build_data "${CMAKE_BINARY_DIR}/mapper/${NPUMAP_DATA_REL}" ABSOLUTE)
file(MAKE_DIRECTORY "${_npumap_build_data}")
foreach(_pair "workloads=workloads" "presets=arch/presets")
  string(REPLACE "=" ";" _pair "${_pair}")
  list(GET _pair 0 _name)
  list(GET _pair 1 _source)
  if(NOT IS_SYMLINK "${_npumap_build_data}/${_name}")
    file(REMOVE_RECURSE "${_npumap_build_data}/${_name}")
  endif()
  file(CREATE_LINK "${PROJECT_SOURCE_DIR}/${_source}" "${_npumap_build_data}/${_name}" SYMBOLIC)
endforeach()

function(npumap_install_rules)
  install(TARGETS mapper RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  file(GLOB _zoo CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/workloads/*.yaml)
  install(FILES ${_zoo} DESTINATION ${NPUMAP_DATA_INSTALL_DIR}/workloads)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/workloads/models DESTINATION ${NPUMAP_DATA_INSTALL_DIR}/workloads)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/arch/presets/ DESTINATION ${NPUMAP_DATA_INSTALL_DIR}/presets
          FILES_MATCHING PATTERN "*.yaml")
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/sweeps/ DESTINATION ${NPUMAP_DATA_INSTALL_DIR}/sweeps
          FILES_MATCHING PATTERN "*.yaml")
  install(FILES ${PROJECT_SOURCE_DIR}/test/data/npu_reference_passes.json
                ${PROJECT_SOURCE_DIR}/test/data/npu_reference_block_configs.json
          DESTINATION ${NPUMAP_DATA_INSTALL_DIR}/reference)
  install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/NOTICE
          DESTINATION ${CMAKE_INSTALL_DOCDIR})
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs
          PATTERN "mapper.1" EXCLUDE)
  install(FILES ${PROJECT_SOURCE_DIR}/docs/mapper.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endfunction()
