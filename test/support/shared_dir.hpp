#pragma once
// Where the shared material is (real .tflite models, Vela's reference compiles), as seen from the
// project root the tests run in. Tests that need it skip with a message when it is absent.

#include <filesystem>

namespace npumap::testing {

inline const std::filesystem::path kShared = std::filesystem::path("..") / "shared";

}  // namespace npumap::testing
