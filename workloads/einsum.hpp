#pragma once
// Einsum notation for matmul-style layers: "Z[m,n] = A[m,k] * B[k,n]". The loader parses the text
// here, then lowers it onto one NPU operation using the roles of the ranks (docs/workload-format.md):
// ranks in A, B and Z are batch ranks, in A and Z only are M ranks, in B and Z only are N ranks, in
// A and B only are contracted (K) ranks.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace npumap::workloads {

/// One tensor of an Einsum: its name and its rank names in written order.
struct EinsumOperand {
  std::string tensor;
  std::vector<std::string> ranks;
};

/// A parsed binary Einsum Z = A * B.
struct EinsumExpr {
  EinsumOperand out;
  EinsumOperand a;
  EinsumOperand b;
};

/// Parses "Z[m,n] = A[m,k] * B[k,n]" (blanks allowed between tokens). On failure returns nullopt and
/// sets `error` to a message naming the 1-based character position.
std::optional<EinsumExpr> parse_einsum(std::string_view text, std::string& error);

/// The roles of an Einsum's ranks, each list in the order the ranks first appear in Z, then A, then B.
struct EinsumRoles {
  std::vector<std::string> batch;  ///< in A, B and Z
  std::vector<std::string> m;      ///< in A and Z
  std::vector<std::string> n;      ///< in B and Z
  std::vector<std::string> k;      ///< in A and B, summed over
};

/// Classifies the ranks; on failure (a rank repeated within one tensor, or a rank that only one
/// tensor uses) returns nullopt and sets `error`.
std::optional<EinsumRoles> classify_einsum(const EinsumExpr& expr, std::string& error);

}  // namespace npumap::workloads
