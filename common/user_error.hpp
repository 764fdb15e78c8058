#pragma once
// The one error channel for bad user input (arch and workload files, pass JSON, command-line values).
// `main` catches UserError, prints what() on one line and exits with status 2. Library code never exits.

#include <stdexcept>
#include <string>
#include <vector>

namespace npumap::common {

/// Where in an input file something was found (1-based line and column; 0 when unknown).
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
};

/// Bad input: carries file:line:col, the key path, a message and a hint.
/// what() is the single line `file:line:col: key.path: message (hint)`.
class UserError : public std::runtime_error {
 public:
  UserError(SourceLocation where, std::string key_path, std::string message, std::string hint = {});

  const SourceLocation& where() const { return where_; }
  const std::string& key_path() const { return key_path_; }
  const std::string& message() const { return message_; }
  const std::string& hint() const { return hint_; }

 private:
  SourceLocation where_;
  std::string key_path_;
  std::string message_;
  std::string hint_;
};

/// Internal invariant check that names the file and line; not for validating user input.
[[noreturn]] void internal_failure(const char* expr, const char* file, int line);

/// Levenshtein distance, used for "did you mean" hints.
std::size_t edit_distance(const std::string& a, const std::string& b);

/// The closest candidate to `word` (empty if nothing is reasonably close), for hints.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace npumap::common

#define NPUMAP_ASSERT(expr) \
  ((expr) ? static_cast<void>(0) : ::npumap::common::internal_failure(#expr, __FILE__, __LINE__))
