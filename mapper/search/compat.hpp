#pragma once
// Compatibility: how a pmapping exchanges each tensor it shares with its neighbours (docs/design/architecture.md §3).
// Two pmappings of neighbouring layers join only if they agree on every tensor they share.

#include <cstdint>
#include <string>

namespace npumap::search {

/// Where a feature map lives while it is live.
enum class Residence : std::uint8_t {
  Arena,    ///< the tensor arena (feature_map_storage: SRAM on U55 systems, DRAM on U65 Dedicated_Sram)
  Sram,     ///< the whole tensor in fast storage (SRAM), only offered where it differs from the arena
  Rolling,  ///< an SRAM rolling buffer between a producer and its only consumer (layer fusion)
};

/// Layout of a feature map (docs/design/npu-model.md §4.2, §4.5).
enum class Layout : std::uint8_t { Linear, Nhcwb16 };

/// One tensor's side of a compatibility.
struct TensorCompat {
  Residence residence = Residence::Arena;
  Layout layout = Layout::Linear;
  /// Rolling only: the producer's OFM block height (on the producer's side) or the consumer's IFM
  /// block height (on the consumer's side); the buffer height follows from both (docs/design/npu-model.md §9).
  std::uint16_t rows = 0;
  /// Output side of an elementwise layer only: the index of the input whose storage the output
  /// overwrites (Vela's in-place elementwise: that input dies at this layer), or -1. The join
  /// checks that the input dies there and counts the shared storage once.
  std::int8_t over_input = -1;

  /// Whether a producer-side and a consumer-side view of one tensor can meet.
  bool matches(const TensorCompat& other) const {
    return residence == other.residence && layout == other.layout;
  }
  friend bool operator==(const TensorCompat&, const TensorCompat&) = default;
  friend auto operator<=>(const TensorCompat&, const TensorCompat&) = default;
};

const char* residence_name(Residence r);
const char* layout_name(Layout l);
/// "arena/linear", "sram/nhcwb16", "rolling(4)/nhcwb16".
std::string describe(const TensorCompat& c);

}  // namespace npumap::search
