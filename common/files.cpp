#include "common/files.hpp"

#include <fstream>
#include <unistd.h>

#include <fmt/format.h>

#include "common/user_error.hpp"

namespace npumap::common {

void write_file_atomic(const std::filesystem::path& path, const std::string& content) {
  const std::filesystem::path tmp = path.string() + fmt::format(".tmp{}", static_cast<long>(::getpid()));
  std::error_code ec;
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw UserError({path.string(), 0, 0}, "", "cannot write output file", "check the folder's permissions");
    f << content;
    if (!f.flush()) {
      f.close();
      std::filesystem::remove(tmp, ec);
      throw UserError({path.string(), 0, 0}, "", "writing failed", "check free disk space");
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    const std::string why = ec.message();
    std::filesystem::remove(tmp, ec);
    throw UserError({path.string(), 0, 0}, "", "cannot rename the temporary output: " + why, "check the folder");
  }
}

}  // namespace npumap::common
