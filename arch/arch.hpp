#pragma once
// The NPU description every other part reads: accelerator constants (docs/design/npu-model.md §1), the memory
// system derived from a system config and a memory mode (§2), SHRAM constants (§8.1) and an energy
// table. All model constants live here as data; model/ holds no arch literals.
//
// Entry points: make_arch() builds an Arch from an accelerator, a system config and a memory mode
// (Vela's vela.ini sections, arch/vela_config.hpp; the built-in ones are Arm's shipped vela.ini);
// load_arch() (arch_loader.hpp) reads a preset name or a YAML file.

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/user_error.hpp"

namespace npumap::arch {

/// Memory areas; the numeric values are Vela's and are used in reference data (§2.1).
enum class MemArea : std::uint8_t { Unknown = 0, Sram = 1, Dram = 2, OnChipFlash = 3, OffChipFlash = 4, Shram = 5 };
inline constexpr int kNumMemAreas = 6;

/// The six accelerator configurations (§1.1).
enum class Accelerator : std::uint8_t { EthosU55_32, EthosU55_64, EthosU55_128, EthosU55_256, EthosU65_256, EthosU65_512 };
inline constexpr int kNumAccelerators = 6;

/// NPU block types (§1.3-1.4); index into sub-kernel limit tables.
enum class NpuBlockType : std::uint8_t { Default, VectorProduct, ConvolutionMxN, Pooling, ConvolutionDepthWise, ElementWise, ReduceSum };
inline constexpr int kNumNpuBlockTypes = 7;

/// AXI ports of the memory mode (§2.2).
enum class AxiPort : std::uint8_t { Axi0, Axi1 };

/// A block (width, height, depth); note Vela's constructor order is (W, H, D).
struct Block {
  int w = 0;
  int h = 0;
  int d = 0;
  friend bool operator==(const Block&, const Block&) = default;
};

/// SHRAM element types (§8.1), used to index granules and the byte/alignment tables.
enum class ShramElement : std::uint8_t { Ifm8, Ifm16, Ifm8Elementwise, Ifm16Elementwise, Ifm32, Acc16, Acc32, Acc40 };
inline constexpr int kNumShramElements = 8;

/// Per-accelerator constants (§1.1-§1.2).
struct AcceleratorConfig {
  Accelerator kind = Accelerator::EthosU55_256;
  std::string name;                         ///< e.g. "ethos-u55-256"
  int macs = 0;                             ///< MACs per cycle as named by the product
  int cores = 1;                            ///< ncores (2 on U65-512)
  Block ofm_ublock;                         ///< output micro-block
  Block ifm_ublock;                         ///< input micro-block
  int shram_banks = 0;                      ///< total SHRAM banks
  std::array<int, kNumShramElements> shram_granules{};  ///< bank granules per element type
  int elementwise_units = 0;
  std::array<double, 8> output_cycles_per_elem{};      ///< §1.2, indexed as in §6.2
  std::array<double, 3> activation_cycles_per_elem{};  ///< §1.2: 0 sigmoid/tanh/LUT, 1 relu family, 2 none
  bool is_u65() const { return kind == Accelerator::EthosU65_256 || kind == Accelerator::EthosU65_512; }
};

/// SHRAM allocation constants (§8.1).
struct ShramConstants {
  int bank_size_bytes = 1024;
  int reserved_output_banks = 2;
  int reserved_weight_banks = 0;
  std::array<int, kNumShramElements> byte_sizes{1, 2, 1, 2, 4, 2, 4, 5};
  std::array<int, kNumShramElements> pre_align{1, 1, 1, 1, 1, 8, 8, 8};
  std::array<int, kNumShramElements> post_align{8, 8, 8, 8, 8, 1, 1, 1};
  /// Block depths of the block-config map (§8.2).
  std::vector<int> block_config_depths{4, 8, 12, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, 128};
};

/// One memory area as the cycle model sees it (§2.2).
struct MemoryParams {
  double clock_scale = 1.0;
  double bandwidth_per_cycle = 0.0;  ///< bytes per NPU cycle = axi_port_width * clock_scale / 8
  int burst_length = 1;              ///< bytes
  int latency_read = 0;              ///< cycles
  int latency_write = 0;             ///< cycles
};

/// Energy per access and per MAC. The defaults are illustrative, not measured silicon figures.
struct EnergyTable {
  std::array<double, kNumMemAreas> read_pj_per_byte{};
  std::array<double, kNumMemAreas> write_pj_per_byte{};
  double pj_per_mac = 0.0;
};

/// Timing of one memory behind an AXI port: a system config's `<Mem>_clock_scale`, `_burst_length`,
/// `_read_latency` and `_write_latency` (§2.3-§2.4). Vela's values for a key no section sets.
struct MemoryTiming {
  double clock_scale = 1.0;
  int burst_length = 1;
  int read_latency = 0;
  int write_latency = 0;
};

/// A system config (a `[System_Config.<Name>]` section, resolved through `inherit`): the core clock
/// and the memory behind each AXI port, with Vela's value for every key the section does not set.
struct SystemConfig {
  std::string name;
  double core_clock = 1.0;                                     ///< Hz
  std::array<MemArea, 2> axi_port{MemArea::Sram, MemArea::Sram};  ///< axi0_port, axi1_port
  std::array<MemoryTiming, kNumMemAreas> memory{};             ///< by MemArea
  std::array<bool, kNumMemAreas> clock_scale_set{};            ///< `<Mem>_clock_scale` was stated
  bool builtin = true;                                         ///< one of Arm's shipped sections (or internal-default)
  /// Where the section and its port keys are (ini file:line; empty for a built-in), for errors.
  common::SourceLocation where;
  std::array<common::SourceLocation, 2> axi_where;
};

/// A memory mode (a `[Memory_Mode.<Name>]` section): which AXI port holds the constants, the arena
/// and the cache (§2.2), and the size of the arena or cache SRAM.
struct MemoryMode {
  std::string name;
  AxiPort const_port = AxiPort::Axi1;  ///< Vela's value when unset: MemPort(1)
  AxiPort arena_port = AxiPort::Axi1;
  AxiPort cache_port = AxiPort::Axi1;
  /// `arena_cache_size` (Vela 3 and later) or `cache_sram_size` (Vela 2.1): the cache when the mode
  /// spills, the arena's SRAM otherwise; unset: the arch's own rule (docs/arch-format.md).
  std::optional<std::int64_t> arena_cache_size;
  bool builtin = true;
  common::SourceLocation where;
  std::array<common::SourceLocation, 3> port_where;  ///< const, arena, cache
  common::SourceLocation size_where;
};

/// Where the names of an arch's system config and memory mode were given (an arch file's key, a
/// command-line flag, a sweep spec), so that a combination that cannot exist is reported there.
/// Empty: reported by key name only.
struct NameSources {
  common::SourceLocation system_config;
  std::string system_config_key = "system_config";
  common::SourceLocation memory_mode;
  std::string memory_mode_key = "memory_mode";
};

/// Why a (accelerator, system config, memory mode) combination cannot exist, if it cannot.
struct ArchProblem {
  enum class Blame : std::uint8_t { SystemConfig, MemoryMode };
  Blame blame = Blame::MemoryMode;
  std::string message;              ///< e.g. "memory mode `Dedicated_Sram` ... which an ethos-u55-256 does not have"
  common::SourceLocation where;     ///< the ini line at fault, when the section came from an ini file
  std::string key_path;             ///< e.g. "Memory_Mode.My_Mode.cache_mem_area" (ini) or empty
};

/// A complete NPU + memory-system description.
struct Arch {
  std::string name;            ///< preset name or file the arch came from
  AcceleratorConfig accel;
  std::string system_config;   ///< "internal-default" or a vela.ini section (§2.4)
  std::string memory_mode;     ///< "internal-default" or a vela.ini memory mode (§2.4)
  double core_clock = 0.0;     ///< Hz
  int axi_port_width_bits = 64;
  std::array<MemoryParams, kNumMemAreas> memory{};  ///< indexed by MemArea
  MemArea permanent_storage = MemArea::OffChipFlash;  ///< weights, biases, constants
  MemArea feature_map_storage = MemArea::Sram;        ///< the tensor arena
  MemArea fast_storage = MemArea::Sram;               ///< the cache (always SRAM)
  bool spilling_enabled = false;
  std::int64_t vela_sram_size = 0;    ///< Vela's `sram_size` (cache size with spilling, else 9999 MiB)
  /// Physical on-chip SRAM the mapper may reserve: Vela's cache size when spilling is enabled,
  /// otherwise 4 MiB (the whole arena lives in SRAM) unless an arch file overrides it.
  std::int64_t sram_capacity_bytes = 0;
  /// Network inputs and outputs may be placed in SRAM. Off (the default): they stay in the tensor
  /// arena, where the application hands them over, as Vela keeps them.
  bool network_io_in_sram = false;
  Block ofm_block_max{64, 32, 128};
  int ofm_split_depth = 16;
  Block default_sub_kernel_max{8, 8, 65536};
  /// Sub-kernel limits (kernel H, kernel W) per NpuBlockType (§1.3).
  std::array<std::array<int, 2>, kNumNpuBlockTypes> sub_kernel_limits{};
  ShramConstants shram;
  /// Scheduler weights (§2.5), kept for completeness of the arch data.
  std::array<double, kNumMemAreas> bandwidth_weights{};
  double cycles_weight = 40.0;
  double max_sram_used_weight = 1000.0;
  EnergyTable energy;

  const MemoryParams& mem(MemArea a) const { return memory[static_cast<int>(a)]; }
  int ncores() const { return accel.cores; }
  /// Total usable SHRAM banks (§8.1): banks - reserved_unused.
  int total_shram_banks() const;
  /// available_shram_banks(uses_lut) of §8.1.
  int available_shram_banks(bool uses_lut) const;
};

/// Accelerator constants by name ("ethos-u55-256"); throws common::UserError for an unknown name.
const AcceleratorConfig& accelerator_config(std::string_view name);
const AcceleratorConfig& accelerator_config(Accelerator kind);
/// Names of the six accelerators, in enum order.
std::vector<std::string> accelerator_names();
/// Names of the built-in system configs and memory modes (§2.3-2.4), "internal-default" first.
std::vector<std::string> system_config_names();
std::vector<std::string> memory_mode_names();
/// Vela's name of an accelerator config, as its summary CSV writes it ("Ethos_U55_256").
std::string vela_accelerator_name(const AcceleratorConfig& accel);

/// The default energy table (illustrative figures, documented in docs/arch-format.md), by accelerator.
EnergyTable default_energy_table(const AcceleratorConfig& accel);

/// Build an arch from names of built-in sections: accelerator, system config, memory mode (§2).
/// Unknown names and combinations that cannot exist (combination_problem) throw common::UserError.
Arch make_arch(std::string_view accelerator, std::string_view system_config = "internal-default",
               std::string_view memory_mode = "internal-default");
/// Build an arch from resolved sections (§2), as Vela's ArchitectureFeatures does. A combination that
/// cannot exist throws common::UserError at the ini line at fault, else at `sources`; `valid_hint`
/// (may be null) words the hint from the problem (the names that would work).
Arch make_arch(const AcceleratorConfig& accel, const SystemConfig& sys, const MemoryMode& mode,
               const NameSources& sources = {},
               const std::function<std::string(const ArchProblem&)>& valid_hint = nullptr);

/// Why the combination cannot exist, or nothing: Vela's own checks (constants in Dram or a flash,
/// the arena in Sram or Dram, the cache in Sram), a memory the system does not describe (an AXI port's
/// memory with no `<Mem>_clock_scale` in an ini section), and what an Ethos-U55 lacks: a DRAM port
/// and a dedicated SRAM (a cache on another port than the arena).
std::optional<ArchProblem> combination_problem(const AcceleratorConfig& accel, const SystemConfig& sys,
                                               const MemoryMode& mode);

std::string_view mem_area_name(MemArea a);
/// Parses "Sram", "Dram", "OnChipFlash", "OffChipFlash" (and "Unknown", "Shram"); false if unknown.
bool parse_mem_area(std::string_view name, MemArea& out);

}  // namespace npumap::arch
