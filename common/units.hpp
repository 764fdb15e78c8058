#pragma once
// Human units for reports: bytes in B / KiB / MiB and counts with SI prefixes.

#include <string>

namespace npumap::common {

/// "8.11 MiB", "980.0 KiB", "512 B": MiB with 2 decimals, KiB with `kib_decimals`, bytes whole.
std::string format_bytes(double bytes, int kib_decimals = 1);
/// The shortest form that is exact for round sizes: "512 KiB", "1.5 MiB", "64 B" (axis labels).
std::string format_bytes_short(double bytes);
/// 1234567 -> "1.23M" (3 significant digits with k, M, G, T). Below 1000: whole numbers ("950") when
/// `whole_below_1000`, else 3 significant digits ("0.5").
std::string format_si(double value, bool whole_below_1000 = true);

}  // namespace npumap::common
