#include "common/json_file.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace npumap::common {
namespace {

/// 1-based line and column of byte offset `end` in `text`.
std::pair<int, int> line_col(const std::string& text, std::size_t end) {
  int line = 1;
  int column = 1;
  end = std::min(end, text.size());
  for (std::size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

}  // namespace

void check_json_depth(const std::string& path, const std::string& text) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) {
        const auto [line, column] = line_col(text, i);
        throw UserError({path, line, column}, "", fmt::format("JSON nested deeper than {} levels", kMaxJsonDepth),
                        "is this the right file?");
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
}

UserError json_syntax_error(const std::string& path, const std::string& text, const nlohmann::json::exception& e,
                            std::size_t byte, const std::string& hint) {
  // nlohmann counts the byte at which parsing stopped from 1; 0 = unknown.
  if (byte == 0) return UserError({path, 0, 0}, "", fmt::format("invalid JSON: {}", e.what()), hint);
  const auto [line, column] = line_col(text, byte - 1);
  return UserError({path, line, column}, "", fmt::format("invalid JSON: {}", e.what()), hint);
}

}  // namespace npumap::common
