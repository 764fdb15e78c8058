#pragma once
// Where the tests find the real models and Vela's compiles of them. Both ship in the repository:
// the models in workloads/models/ (read from the project root, where the tests run), the reference
// as test/data/vela_tflite_reference.json.tar.xz, extracted into the build tree when the tests are
// built (test/CMakeLists.txt passes its path as NPUMAP_VELA_REFERENCE). Tests fail, never skip,
// when either is missing.

#include <filesystem>

namespace npumap::testing {

/// The real .tflite models (and other_precision/ beneath), relative to the project root.
inline const std::filesystem::path kModelsDir = std::filesystem::path("workloads") / "models";
/// Vela 2.1's compiles of 12 of those models on three accelerators (36 records).
inline const std::filesystem::path kVelaReference = NPUMAP_VELA_REFERENCE;
/// The number of records of kVelaReference (every one with status "ok").
inline constexpr int kVelaReferenceRecords = 36;

}  // namespace npumap::testing
