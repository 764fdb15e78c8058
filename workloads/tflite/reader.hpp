#pragma once
// Safe reader of TensorFlow Lite `.tflite` flatbuffers (identifier "TFL3") into the value types of
// model.hpp. Every offset and length is checked with flatbuffers::Verifier before it is followed,
// and the model is checked semantically (indices in range, positive dimensions, constant buffers
// that match their tensors, known operator codes, one producer per tensor, an acyclic operator
// graph). Any problem throws one npumap::common::UserError whose what() is a single line:
//   "model.tflite: subgraphs[0].operators[12].inputs[1]: tensor index 977 out of range (...)".
// Entry points: read_model(path), read_model_bytes(bytes, name), ReadLimits.

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/files.hpp"
#include "workloads/tflite/model.hpp"

namespace npumap::tflite {

/// Bounds on what the reader accepts; the defaults suit every real model and stop hostile files early.
struct ReadLimits {
  std::size_t max_file_bytes = std::size_t{512} << 20;  ///< larger files are refused before reading
  std::uint32_t max_vector_length = 1u << 24;           ///< elements in any one vector or string
  std::uint32_t max_tables = 1'000'000;                 ///< tables visited (flatbuffers::Verifier)
  std::uint32_t max_depth = 64;                         ///< table nesting (flatbuffers::Verifier)
  std::uint32_t max_rank = 16;                          ///< dimensions of a tensor shape
  std::int64_t max_elements = std::int64_t{1} << 40;    ///< elements of one tensor
  /// The reader copies at most min(expansion_factor x file size, max_copied_bytes) + 1 MiB bytes of
  /// names, shapes and tables, so shared or overlapping flatbuffer tables cannot blow up memory: a
  /// refused model peaks at its file size plus this bound (a real model copies a few MB).
  std::size_t expansion_factor = 16;
  std::size_t max_copied_bytes = std::size_t{256} << 20;
};

/// The input limit of a .tflite model (limits.max_file_bytes, 512 MiB by default) for common::read_input.
common::InputLimit tflite_input_limit(const ReadLimits& limits = {});

/// Reads and checks the model in file `path` ("-": standard input), read once with common::read_input
/// (folders, devices and sockets refused; larger than limits.max_file_bytes refused while reading).
Model read_model(const std::string& path, const ReadLimits& limits = {});

/// Reads and checks a model held in `bytes`; `name` names it in error messages.
Model read_model_bytes(std::string bytes, const std::string& name, const ReadLimits& limits = {});

}  // namespace npumap::tflite
