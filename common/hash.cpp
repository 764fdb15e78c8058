#include "common/hash.hpp"

#include <fstream>

#include <fmt/format.h>

namespace npumap::common {

std::string fnv1a_hex(std::string_view bytes) {
  Fnv1a h;
  h.add(bytes);
  return fmt::format("fnv1a64:{:016x}", h.value());
}

std::string file_fnv1a_hex(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  Fnv1a h;
  char buf[4096];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) h.add_bytes(buf, static_cast<std::size_t>(in.gcount()));
  return fmt::format("fnv1a64:{:016x}", h.value());
}

}  // namespace npumap::common
