# Lists the functions of C++ source files with their lengths in lines (POSIX awk; Debian's mawk).
# Used by scripts/check-function-length.sh (ctest `function_length`); tested on
# test/function_length/sample.cpp, whose functions and lengths are listed by hand.
#
# Output, one line per function defined at namespace or class scope (lambdas and local classes inside
# a function are part of that function):
#   <file> <first line> <last line> <length> <name>
# The length counts from the first line of the declaration (template line included, comments before
# it excluded) to the line of the closing brace, both included.
#
# How a function is recognised: comments, string and character literals (raw strings included) and
# preprocessor lines are skipped; at namespace or class scope the text since the last ';', '{' or '}'
# is the "header" of the next '{' (braces inside parentheses, as in a default argument "= {}", are
# part of the header). The brace opens a function body when the header does not start
# with namespace/struct/class/union/enum/extern (after a template<...> prefix) and its parameter list
# (the first parenthesised group) is followed only by qualifiers (const, noexcept, override, final,
# mutable, &, &&), a trailing return type or a constructor's member initialisers.
# Anything else (class bodies, enum bodies, aggregate initialisers) is a scope that is not a function.

function reset_header() {
  header = ""
  header_line = 0
  parens = 0
  init_braces = 0
}

function add_header(c) {
  if (header_line == 0 && c !~ /[ \t]/) header_line = NR_FILE
  header = header c
}

function trim(s) {
  sub(/^[ \t]+/, "", s)
  sub(/[ \t]+$/, "", s)
  return s
}

# Drops a leading "template <...>" (balanced angle brackets), repeatedly.
function strip_template(h,    i, n, c, depth) {
  while (h ~ /^template[ \t]*</) {
    n = length(h)
    depth = 0
    for (i = index(h, "<"); i <= n; i++) {
      c = substr(h, i, 1)
      if (c == "<") depth++
      else if (c == ">") {
        depth--
        if (depth == 0) break
      }
    }
    h = trim(substr(h, i + 1))
  }
  return h
}

# Index of the ')' matching the '(' at index i of s (0 when unbalanced).
function matching_paren(s, i,    n, depth, c) {
  n = length(s)
  depth = 0
  for (; i <= n; i++) {
    c = substr(s, i, 1)
    if (c == "(") depth++
    else if (c == ")") {
      depth--
      if (depth == 0) return i
    }
  }
  return 0
}

# The header normalised: one space between words, no attributes, no template<...> prefix.
function normalise(h) {
  h = trim(h)
  gsub(/[ \t]+/, " ", h)
  gsub(/\[\[[^]]*\]\] ?/, "", h)
  return strip_template(h)
}

# What follows the parameter list of header h (its first parenthesised group, or the one after
# "operator()"); "(none)" when h has no parameter list.
function after_parameters(h,    from, i, j) {
  from = index(h, "operator()")
  from = from > 0 ? from + 10 : 1
  i = index(substr(h, from), "(")
  if (i == 0) return "(none)"
  i += from - 1
  j = matching_paren(h, i)
  if (j == 0) return "(none)"
  return trim(substr(h, j + 1))
}

# "f" when header h (the text before a '{' at namespace or class scope) declares a function body,
# "n" for a namespace or class body, "i" for anything else.
function classify(h,    tail, j) {
  h = normalise(h)
  if (h ~ /^((inline|export|typedef|static|constexpr) )*(namespace|struct|class|union|enum|extern)([^A-Za-z0-9_]|$)/)
    return "n"
  tail = after_parameters(h)
  if (tail == "(none)") return "i"
  while (tail != "") {
    if (tail ~ /^noexcept[ ]*\(/) {
      j = matching_paren(tail, index(tail, "("))
      if (j == 0) return "i"
      tail = substr(tail, j + 1)
    } else if (tail ~ /^(const|noexcept|override|final|mutable|volatile)([^A-Za-z0-9_]|$)/) {
      sub(/^[A-Za-z]+/, "", tail)
    } else if (tail ~ /^&&?/) {
      sub(/^&&?/, "", tail)
    } else if (tail ~ /^->/ || tail ~ /^:([^:]|$)/) {
      # A trailing return type, or a constructor's member initialisers.
      return "f"
    } else {
      return "i"
    }
    tail = trim(tail)
  }
  return "f"
}

# True when a '{' after header h opens a member initialiser ("X() : a_{1}"), not the body.
function member_initialiser_brace(h) {
  h = normalise(h)
  return after_parameters(h) ~ /^:([^:]|$)/ && h ~ /[A-Za-z0-9_>]$/
}

# The name of the function declared by header h.
function function_name(h,    before, p) {
  h = normalise(h)
  if (match(h, /operator[ ]*(\(\)|[^ (A-Za-z0-9_]+|[ ][A-Za-z_][A-Za-z0-9_:<> ]*)/)) {
    before = substr(h, 1, RSTART - 1)
    p = substr(h, RSTART, RLENGTH)
    gsub(/ /, "", p)
    if (match(before, /[A-Za-z0-9_:~]+$/)) p = substr(before, RSTART, RLENGTH) p
    return p
  }
  p = index(h, "(")
  if (p == 0) return "?"
  before = trim(substr(h, 1, p - 1))
  if (before ~ /\]$/) {
    # A lambda: "auto name = [...]".
    if (match(before, /[A-Za-z_][A-Za-z0-9_]*[ ]*=[ ]*\[[^]]*\]$/)) {
      before = substr(before, RSTART, RLENGTH)
      sub(/[ ]*=.*/, "", before)
      return before
    }
    return "lambda"
  }
  # A constructor's initialiser list: take the name before the first '('.
  if (match(before, /[A-Za-z0-9_:~]+$/)) return substr(before, RSTART, RLENGTH)
  return "?"
}

function open_brace(    kind) {
  if (in_function == 0 && !(depth > 0 && kinds[depth] == "i") && member_initialiser_brace(header)) {
    init_braces = 1
    add_header("{")
    return
  }
  if (in_function > 0) {
    kind = "x"
  } else if (depth > 0 && kinds[depth] == "i") {
    kind = "i"
  } else {
    kind = classify(header)
  }
  depth++
  kinds[depth] = kind
  if (kind == "f") {
    in_function++
    starts[depth] = header_line > 0 ? header_line : NR_FILE
    names[depth] = function_name(header)
  }
  reset_header()
}

function close_brace() {
  if (depth == 0) {
    reset_header()
    return
  }
  if (kinds[depth] == "f") {
    in_function--
    printf "%s %d %d %d %s\n", FILENAME, starts[depth], NR_FILE, NR_FILE - starts[depth] + 1, names[depth]
  }
  depth--
  reset_header()
}

function text(c) {
  if (in_function == 0) add_header(c)
}

FNR == 1 {
  depth = 0
  in_function = 0
  in_comment = 0
  in_raw = 0
  continued = 0
  reset_header()
}

{
  NR_FILE = FNR
  line = $0
  sub(/\r$/, "", line)
  # Preprocessor lines and their continuations.
  if (!in_comment && !in_raw && (continued || line ~ /^[ \t]*#/)) {
    continued = line ~ /\\$/
    next
  }
  n = length(line)
  token_digit = 0
  for (i = 1; i <= n; i++) {
    c = substr(line, i, 1)
    if (in_comment) {
      if (c == "*" && substr(line, i + 1, 1) == "/") {
        in_comment = 0
        i++
      }
      continue
    }
    if (in_raw) {
      end = ")" raw_delim "\""
      p = index(substr(line, i), end)
      if (p == 0) {
        i = n
        continue
      }
      i += p + length(end) - 2
      in_raw = 0
      text("\"\"")
      continue
    }
    if (c == "/" && substr(line, i + 1, 1) == "/") break
    if (c == "/" && substr(line, i + 1, 1) == "*") {
      in_comment = 1
      i++
      continue
    }
    if (c == "\"") {
      prev = i > 1 ? substr(line, i - 1, 1) : ""
      prev2 = i > 2 ? substr(line, i - 2, 1) : ""
      if (prev == "R" && prev2 !~ /[A-Za-z0-9_]/ || prev == "R" && substr(line, 1, i - 1) ~ /(u8|u|U|L)R$/) {
        rest = substr(line, i + 1)
        p = index(rest, "(")
        raw_delim = substr(rest, 1, p - 1)
        in_raw = 1
        i += p
        continue
      }
      # An ordinary string literal, on this line.
      for (i++; i <= n; i++) {
        c = substr(line, i, 1)
        if (c == "\\") i++
        else if (c == "\"") break
      }
      text("\"\"")
      token_digit = 0
      continue
    }
    if (c == "'") {
      # A digit separator (1'000'000) or a character literal.
      if (token_digit && substr(line, i + 1, 1) ~ /[0-9A-Fa-f]/) continue
      for (i++; i <= n; i++) {
        c = substr(line, i, 1)
        if (c == "\\") i++
        else if (c == "'") break
      }
      text("' '")
      continue
    }
    if (c ~ /[A-Za-z0-9_.]/) {
      if (!(prevc ~ /[A-Za-z0-9_.]/)) token_digit = c ~ /[0-9]/
    } else {
      token_digit = 0
    }
    prevc = c
    if (in_function == 0 && c == "(") parens++
    else if (in_function == 0 && c == ")" && parens > 0) parens--
    # A brace inside parentheses (a default argument "= {}") or of a member initialiser is part of
    # the header.
    if (init_braces > 0 && c == "{") {
      init_braces++
      text(c)
    } else if (init_braces > 0 && c == "}") {
      init_braces--
      text(c)
    } else if (parens > 0 && (c == "{" || c == "}")) text(c)
    else if (c == "{") open_brace()
    else if (c == "}") close_brace()
    else if (c == ";") {
      if (in_function == 0 && !(depth > 0 && kinds[depth] == "i")) reset_header()
    } else text(c)
  }
  prevc = " "
  token_digit = 0
  text(" ")
}
