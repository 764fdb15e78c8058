#include "common/data_dir.hpp"

#include <cstdlib>
#include <system_error>

#ifndef NPUMAP_DATA_REL
#error "NPUMAP_DATA_REL (the install's path from bin/ to its data folder) is set by common/CMakeLists.txt"
#endif

namespace npumap::common {
namespace {

namespace fs = std::filesystem;

struct Found {
  fs::path dir;
  std::string origin;
};

const Found& found() {
  static const Found f = [] {
    if (const char* env = std::getenv("NPUMAP_DATA_DIR"); env != nullptr && *env != '\0') {
      return Found{fs::path(env), "NPUMAP_DATA_DIR"};
    }
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    // Without /proc (unusual on Linux) the relative path is taken from the working directory.
    const fs::path base = ec ? fs::current_path(ec) : exe.parent_path();
    fs::path dir = (base / NPUMAP_DATA_REL).lexically_normal();
    return Found{dir, (base / NPUMAP_DATA_REL).string()};
  }();
  return f;
}

}  // namespace

fs::path data_dir() { return found().dir; }

std::string data_dir_origin() { return found().origin; }

}  // namespace npumap::common
