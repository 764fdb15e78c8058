#pragma once
// A human summary of an Arch, printed at the head of reports and by `mapper --describe-arch`-style
// commands so a run records which NPU and memory system it assumed.

#include <cstdint>
#include <string>

#include "arch/arch.hpp"

namespace npumap::arch {

/// A short multi-line summary: accelerator, MACs, cores, clock, memories (bandwidth, burst,
/// latency), storage areas, SRAM capacity, SHRAM and the energy table. Ends with a newline.
std::string describe_arch(const Arch& arch);

/// A byte count as "1 MiB", "384 KiB" or "1000 B": the largest binary unit that divides it exactly.
std::string format_bytes(std::int64_t bytes);

}  // namespace npumap::arch
