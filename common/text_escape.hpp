#pragma once
// Strings from the user's files (layer, tensor and workload names, paths, sweep parameters) written
// into YAML, CSV, SVG and JSON: every writer goes through one of these, so no name can break the
// file it lands in (a newline in a comment, a quote in a CSV field, a `<` or a NUL in an SVG, bytes
// that are not UTF-8 in any of them). What cannot be written (invalid UTF-8, characters a format
// forbids) becomes U+FFFD, the replacement character; everything else reads back unchanged.

#include <string>
#include <string_view>

namespace npumap::common {

/// `s` with every byte that is not part of a well-formed UTF-8 sequence (stray continuation bytes,
/// truncated or overlong sequences, surrogates, code points above U+10FFFF) replaced by U+FFFD.
std::string valid_utf8(std::string_view s);

/// True when `s` is well-formed UTF-8.
bool is_valid_utf8(std::string_view s);

/// A YAML double-quoted scalar (with its quotes) that reads back as valid_utf8(s): `"` and `\`
/// escaped, and every character YAML does not allow printed (C0 and C1 controls, DEL, U+FFFE,
/// U+FFFF) as a \x or \u escape.
std::string yaml_quote(std::string_view s);

/// `s` as the text of one YAML comment line: valid UTF-8, and line ends, NUL and the other control
/// characters shown as \n, \r, \t, \xNN (so the comment cannot end early or hide a key).
std::string yaml_comment_text(std::string_view s);

/// A CSV field as Python's csv.writer (QUOTE_MINIMAL) writes it: quoted, with `"` doubled, when it
/// holds a comma, a quote, a CR or an LF. Invalid UTF-8 and NUL (which strict readers refuse) become
/// U+FFFD.
std::string csv_field(std::string_view s);

/// `s` as XML 1.0 character data or attribute value: `&`, `<`, `>`, `"` and `'` as entities, and
/// what XML 1.0 cannot hold even escaped (controls other than tab, LF and CR; U+FFFE, U+FFFF;
/// invalid UTF-8) as U+FFFD.
std::string xml_escape(std::string_view s);

}  // namespace npumap::common
