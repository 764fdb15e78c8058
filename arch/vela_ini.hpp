#pragma once
// Reading Vela's configuration files (vela.ini): the ini dialect of Python's configparser, which
// Vela reads with `ConfigParser()` and its defaults. Only the syntax lives here; what the sections
// and keys mean is arch/vela_config.hpp's business.
//
// The rules, as configparser applies them (docs/arch-format.md "Vela's vela.ini"):
//   - `[name]` starts a section (the name is everything between the first `[` and the last `]`);
//     `[DEFAULT]` holds keys every section of the file sees;
//   - `key = value` or `key: value` sets an option; the key is everything before the first `=` or
//     `:`, and keys compare without regard to case (configparser lower-cases them);
//   - a line whose first non-blank character is `;` or `#` is a comment; there are no comments after
//     a value (`core_clock = 500e6 ; MHz` has the value `500e6 ; MHz`);
//   - a line indented more than the option line before it continues that option's value (the lines
//     are joined with newlines; blank lines inside a value are kept, trailing ones dropped);
//   - a section may not appear twice in one file, nor a key twice in one section of one file;
//     a section in a later file adds to or replaces keys of the same section in an earlier one
//     (arch/vela_config.hpp merges files that way);
//   - values are taken as written here; `%(key)s` references (configparser's interpolation) are
//     resolved when a value is read (interpolate()).
// Every error is a common::UserError at file:line:col. A UTF-8 byte-order mark at the start of a
// file is skipped (configparser would reject the first line); line ends may be \n, \r\n or \r.

#include <string>
#include <string_view>
#include <vector>

namespace npumap::arch {

/// One `key = value` option as written.
struct IniOption {
  std::string key;        ///< as written, trailing blanks removed (compare with ini_key())
  std::string value;      ///< continuation lines joined with '\n'; not interpolated
  int line = 0;           ///< line of the key (1-based)
  int key_column = 0;     ///< 1-based column of the key
  int value_column = 0;   ///< 1-based column where the value starts (after the delimiter and blanks)
};

/// One `[name]` section: its options in file order, keys unique regardless of case.
struct IniSection {
  std::string name;
  int line = 0;
  std::vector<IniOption> options;
  /// The option `key` (compared as configparser does: lower-cased), or null.
  const IniOption* find(std::string_view key) const;
};

/// One parsed file: its sections in file order. A `[DEFAULT]` section, if any, is one entry named
/// "DEFAULT" (all `[DEFAULT]` headers of the file merged).
struct IniFile {
  std::string path;
  std::vector<IniSection> sections;
  /// The section `name` (exact, case-sensitive), or null.
  const IniSection* find(std::string_view name) const;
};

/// configparser's name of the section whose keys every section sees.
inline constexpr std::string_view kIniDefaultSection = "DEFAULT";

/// A key as configparser compares it: lower-cased.
std::string ini_key(std::string_view key);

/// Parses ini text; `file` names it in error messages.
IniFile parse_ini(const std::string& text, const std::string& file);
/// Reads and parses a file (common::read_input_file's size limit and errors).
IniFile read_ini_file(const std::string& path);

/// A value with configparser's basic interpolation applied: `%%` is `%`, `%(name)s` is the value of
/// option `name` of the same section (or of `defaults`), itself interpolated, at most 10 levels
/// deep. `option` locates errors (a lone `%`, an unknown or unterminated reference).
std::string interpolate(const IniOption& option, const IniSection& section, const IniSection* defaults,
                        const std::string& file);

}  // namespace npumap::arch
