#include "common/user_error.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace npumap::common {
namespace {

std::string render(const SourceLocation& where, const std::string& key_path, const std::string& message,
                   const std::string& hint) {
  std::string out;
  if (!where.file.empty()) {
    out += where.file;
    if (where.line > 0) out += fmt::format(":{}:{}", where.line, where.column);
    out += ": ";
  }
  if (!key_path.empty()) out += key_path + ": ";
  out += message;
  if (!hint.empty()) out += " (" + hint + ")";
  // One line, whatever the input held: control characters (a newline inside a value) are escaped.
  std::string line;
  for (const char ch : out) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n') {
      line += "\\n";
    } else if (c == '\r') {
      line += "\\r";
    } else if (c == '\t') {
      line += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      line += fmt::format("\\x{:02x}", c);
    } else {
      line += ch;
    }
  }
  return line;
}

}  // namespace

UserError::UserError(SourceLocation where, std::string key_path, std::string message, std::string hint)
    : std::runtime_error(render(where, key_path, message, hint)),
      where_(std::move(where)),
      key_path_(std::move(key_path)),
      message_(std::move(message)),
      hint_(std::move(hint)) {}

void internal_failure(const char* expr, const char* file, int line) {
  throw std::logic_error(fmt::format("internal error: {} failed at {}:{}", expr, file, line));
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  // Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
  // neighbouring characters each cost 1, so "ethos-u55-265" is one edit from "ethos-u55-256".
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1, 0));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[n][m];
}

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(3, word.size() / 2) + 1;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

}  // namespace npumap::common
