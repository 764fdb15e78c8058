#include "common/json_file.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace npumap::common {

std::string read_input_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw UserError({path, 0, 0}, "", "is a folder, not a file", "give a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError({path, 0, 0}, "", "cannot open the file", "check the path");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

UserError json_syntax_error(const std::string& path, const std::string& text, const nlohmann::json::parse_error& e,
                            const std::string& hint) {
  // nlohmann counts the byte at which parsing stopped from 1.
  int line = 1;
  int column = 1;
  const std::size_t end = std::min(e.byte > 0 ? e.byte - 1 : 0, text.size());
  for (std::size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return UserError({path, line, column}, "", fmt::format("invalid JSON: {}", e.what()), hint);
}

}  // namespace npumap::common
