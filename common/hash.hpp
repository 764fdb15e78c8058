#pragma once
// FNV-1a, 64 bits: the project's one hash, for provenance (input files), sweep fingerprints and the
// benchmarks' answer checks. Not cryptographic; it only has to notice changes.

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace npumap::common {

/// An incremental FNV-1a 64-bit hash.
class Fnv1a {
 public:
  /// Adds raw bytes.
  void add_bytes(const void* data, std::size_t size) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < size; ++i) {
      h_ ^= p[i];
      h_ *= 0x100000001b3ULL;
    }
  }
  void add(std::string_view text) { add_bytes(text.data(), text.size()); }
  /// Adds the 8 bytes of an integer (host byte order).
  void add(std::uint64_t v) { add_bytes(&v, sizeof v); }
  /// Adds the 8 bytes of a double (host byte order; -0.0 and 0.0 differ).
  void add(double v) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    add(bits);
  }
  std::uint64_t value() const { return h_; }

 private:
  std::uint64_t h_ = 0xcbf29ce484222325ULL;
};

/// "fnv1a64:<16 hex digits>" of `bytes`.
std::string fnv1a_hex(std::string_view bytes);
/// "fnv1a64:<16 hex digits>" of a file's bytes (of nothing if it cannot be read).
std::string file_fnv1a_hex(const std::string& path);

}  // namespace npumap::common
