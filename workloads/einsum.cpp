#include "workloads/einsum.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace npumap::workloads {
namespace {

// A tiny recursive-descent parser over the text; `pos` is 0-based, messages report it 1-based.
class Parser {
 public:
  Parser(std::string_view text, std::string& error) : text_(text), error_(error) {}

  std::optional<EinsumExpr> parse() {
    EinsumExpr e;
    if (!operand(e.out) || !expect('=') || !operand(e.a) || !expect('*') || !operand(e.b)) return std::nullopt;
    skip_blanks();
    if (pos_ != text_.size()) return fail("unexpected text after the second operand");
    return e;
  }

 private:
  void skip_blanks() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  std::optional<EinsumExpr> fail(const std::string& what) {
    error_ = fmt::format("{} at character {}", what, pos_ + 1);
    return std::nullopt;
  }

  bool identifier(std::string& out, const char* what) {
    skip_blanks();
    const std::size_t start = pos_;
    if (pos_ < text_.size() && (std::isalpha(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      ++pos_;
      while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) ++pos_;
    }
    if (pos_ == start) {
      fail(fmt::format("expected {}", what));
      return false;
    }
    out = std::string(text_.substr(start, pos_ - start));
    return true;
  }

  bool expect(char c) {
    skip_blanks();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    fail(fmt::format("expected `{}`", c));
    return false;
  }

  bool operand(EinsumOperand& out) {
    if (!identifier(out.tensor, "a tensor name")) return false;
    if (!expect('[')) return false;
    while (true) {
      std::string rank;
      if (!identifier(rank, "a rank name")) return false;
      out.ranks.push_back(rank);
      skip_blanks();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      return expect(']');
    }
  }

  std::string_view text_;
  std::string& error_;
  std::size_t pos_ = 0;
};

bool contains(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

}  // namespace

std::optional<EinsumExpr> parse_einsum(std::string_view text, std::string& error) { return Parser(text, error).parse(); }

std::optional<EinsumRoles> classify_einsum(const EinsumExpr& expr, std::string& error) {
  for (const EinsumOperand* op : {&expr.out, &expr.a, &expr.b}) {
    for (std::size_t i = 0; i < op->ranks.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        if (op->ranks[i] == op->ranks[j]) {
          error = fmt::format("rank `{}` appears twice in `{}`", op->ranks[i], op->tensor);
          return std::nullopt;
        }
      }
    }
  }
  EinsumRoles roles;
  std::vector<std::string> seen;
  for (const EinsumOperand* op : {&expr.out, &expr.a, &expr.b}) {
    for (const auto& r : op->ranks) {
      if (contains(seen, r)) continue;
      seen.push_back(r);
      const bool in_z = contains(expr.out.ranks, r);
      const bool in_a = contains(expr.a.ranks, r);
      const bool in_b = contains(expr.b.ranks, r);
      if (in_a && in_b && in_z) {
        roles.batch.push_back(r);
      } else if (in_a && in_z) {
        roles.m.push_back(r);
      } else if (in_b && in_z) {
        roles.n.push_back(r);
      } else if (in_a && in_b) {
        roles.k.push_back(r);
      } else if (in_z) {
        error = fmt::format("rank `{}` of the output `{}` appears in neither operand", r, expr.out.tensor);
        return std::nullopt;
      } else {
        error = fmt::format("rank `{}` appears only in `{}`; a sum over one operand is not a matrix product", r,
                            in_a ? expr.a.tensor : expr.b.tensor);
        return std::nullopt;
      }
    }
  }
  return roles;
}

}  // namespace npumap::workloads
