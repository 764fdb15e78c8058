#include "mapper/search/compat.hpp"

#include <fmt/format.h>

namespace npumap::search {

const char* residence_name(Residence r) {
  switch (r) {
    case Residence::Arena: return "arena";
    case Residence::Sram: return "sram";
    case Residence::Rolling: return "rolling";
  }
  return "unknown";
}

const char* layout_name(Layout l) { return l == Layout::Linear ? "linear" : "nhcwb16"; }

std::string describe(const TensorCompat& c) {
  if (c.residence == Residence::Rolling) return fmt::format("rolling({})/{}", c.rows, layout_name(c.layout));
  return fmt::format("{}/{}", residence_name(c.residence), layout_name(c.layout));
}

}  // namespace npumap::search
