// Vela's system configs and memory modes (see vela_config.hpp): the built-in sections, the --config
// files merged over them, key lookup through `inherit` as Vela's _read_config does, the checks of
// every section, and the resolution of one section into a SystemConfig or MemoryMode.

#include "arch/vela_config.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "common/user_error.hpp"

namespace npumap::arch {
namespace {

// The built-in sections: the system configs and memory modes Arm ships in Vela's vela.ini (Vela 2.1,
// with the `<Mem>_max_reads` / `<Mem>_max_writes` limits and the Dedicated_Sram_256KB/384KB modes of
// Vela 4's file). The values are Arm's; the comments are ours. Bandwidths in the comments are per
// AXI port: 64 bits per cycle on an Ethos-U55, 128 on an Ethos-U65, times the clock scale.
const std::string kSystemConfigsIni = R"(; Vela's system configs, as Arm ships them in vela.ini (built into npu-mapper).
; Read back with: mapper --config FILE --system-config NAME ...
; internal-default (not a section): Ethos_U55_High_End_Embedded on an ethos-u55,
; Ethos_U65_Client_Server on an ethos-u65.

; Ethos-U55 at 200 MHz: SRAM 1.6 GB/s, off-chip flash 0.1 GB/s
[System_Config.Ethos_U55_Deep_Embedded]
core_clock=200e6
axi0_port=Sram
axi1_port=OffChipFlash
Sram_clock_scale=1.0
Sram_burst_length=32
Sram_read_latency=32
Sram_write_latency=32
Sram_max_reads=8
Sram_max_writes=8
OffChipFlash_clock_scale=0.0625
OffChipFlash_burst_length=128
OffChipFlash_read_latency=64
OffChipFlash_write_latency=64
OffChipFlash_max_reads=2
OffChipFlash_max_writes=2

; Ethos-U55 at 500 MHz: SRAM 4 GB/s, off-chip flash 0.5 GB/s
[System_Config.Ethos_U55_High_End_Embedded]
core_clock=500e6
axi0_port=Sram
axi1_port=OffChipFlash
Sram_clock_scale=1.0
Sram_burst_length=32
Sram_read_latency=32
Sram_write_latency=32
Sram_max_reads=4
Sram_max_writes=4
OffChipFlash_clock_scale=0.125
OffChipFlash_burst_length=128
OffChipFlash_read_latency=64
OffChipFlash_write_latency=64
OffChipFlash_max_reads=2
OffChipFlash_max_writes=2

; Ethos-U65 at 500 MHz: SRAM 8 GB/s, off-chip flash 0.5 GB/s
[System_Config.Ethos_U65_Embedded]
core_clock=500e6
axi0_port=Sram
axi1_port=OffChipFlash
Sram_clock_scale=1.0
Sram_burst_length=32
Sram_read_latency=32
Sram_write_latency=32
Sram_max_reads=8
Sram_max_writes=8
OffChipFlash_clock_scale=0.0625
OffChipFlash_burst_length=128
OffChipFlash_read_latency=64
OffChipFlash_write_latency=64
OffChipFlash_max_reads=2
OffChipFlash_max_writes=2

; Ethos-U65 at 500 MHz: SRAM 8 GB/s, DRAM 3.75 GB/s
[System_Config.Ethos_U65_Mid_End]
core_clock=500e6
axi0_port=Sram
axi1_port=Dram
Sram_clock_scale=1.0
Sram_burst_length=32
Sram_read_latency=32
Sram_write_latency=32
Sram_max_reads=8
Sram_max_writes=8
Dram_clock_scale=0.46875
Dram_burst_length=128
Dram_read_latency=500
Dram_write_latency=250
Dram_max_reads=12
Dram_max_writes=6

; Ethos-U65 at 1 GHz: SRAM 16 GB/s, DRAM 3.75 GB/s
[System_Config.Ethos_U65_High_End]
core_clock=1e9
axi0_port=Sram
axi1_port=Dram
Sram_clock_scale=1.0
Sram_burst_length=32
Sram_read_latency=32
Sram_write_latency=32
Sram_max_reads=16
Sram_max_writes=16
Dram_clock_scale=0.234375
Dram_burst_length=128
Dram_read_latency=500
Dram_write_latency=250
Dram_max_reads=24
Dram_max_writes=12

; Ethos-U65 at 1 GHz: SRAM 16 GB/s, DRAM 12 GB/s
[System_Config.Ethos_U65_Client_Server]
core_clock=1e9
axi0_port=Sram
axi1_port=Dram
Sram_clock_scale=1.0
Sram_burst_length=32
Sram_read_latency=32
Sram_write_latency=32
Sram_max_reads=16
Sram_max_writes=16
Dram_clock_scale=0.75
Dram_burst_length=128
Dram_read_latency=500
Dram_write_latency=250
Dram_max_reads=24
Dram_max_writes=12
)";

const std::string kMemoryModesIni = R"(; Vela's memory modes, as Arm ships them in vela.ini (built into npu-mapper).
; Read back with: mapper --config FILE --memory-mode NAME ...
; internal-default (not a section): Shared_Sram on an ethos-u55, Dedicated_Sram on an ethos-u65.

; Everything in the SRAM: one AXI port; Vela moves the constants to the other port and calls it
; OnChipFlash, timed as the SRAM
[Memory_Mode.Sram_Only]
const_mem_area=Axi0
arena_mem_area=Axi0
cache_mem_area=Axi0

; The arena in the SRAM, shared with the CPU; the constants in the other (read-only) memory
[Memory_Mode.Shared_Sram]
const_mem_area=Axi1
arena_mem_area=Axi0
cache_mem_area=Axi0

; The arena and the constants in the other (read-write) memory; the SRAM is the NPU's own cache
; (Ethos-U65 only)
[Memory_Mode.Dedicated_Sram]
const_mem_area=Axi1
arena_mem_area=Axi1
cache_mem_area=Axi0
arena_cache_size=393216

; Dedicated_Sram with a 256 KiB cache
[Memory_Mode.Dedicated_Sram_256KB]
inherit=Memory_Mode.Dedicated_Sram
arena_cache_size=262144

; Dedicated_Sram with a 384 KiB cache
[Memory_Mode.Dedicated_Sram_384KB]
inherit=Memory_Mode.Dedicated_Sram
arena_cache_size=393216

; Dedicated_Sram with a 512 KiB cache
[Memory_Mode.Dedicated_Sram_512KB]
inherit=Memory_Mode.Dedicated_Sram
arena_cache_size=524288
)";

constexpr std::string_view kSystemPrefix = "System_Config.";
constexpr std::string_view kModePrefix = "Memory_Mode.";
constexpr std::string_view kInternalDefault = "internal-default";

enum class Kind : std::uint8_t { System, Mode, Other, Default };

Kind kind_of(std::string_view section) {
  if (section == kIniDefaultSection) return Kind::Default;
  if (section.substr(0, kSystemPrefix.size()) == kSystemPrefix) return Kind::System;
  if (section.substr(0, kModePrefix.size()) == kModePrefix) return Kind::Mode;
  return Kind::Other;
}

enum class Type : std::uint8_t { Float, Int, Area, Port, Section };

/// A key Vela reads: its spelling, the kind of section that reads it, the value's type and bound.
struct KeySpec {
  std::string name;
  Kind kind;  ///< System, Mode, or Other for keys every section may hold (`inherit`)
  Type type;
  std::int64_t min = 0;  ///< ints: the least value; floats: > 0 when 1
};

const std::vector<std::string> kAreas = {"Sram", "Dram", "OnChipFlash", "OffChipFlash"};
const std::vector<std::string> kTimingFields = {"clock_scale", "burst_length", "read_latency", "write_latency"};
const std::vector<std::string> kUnmodelledFields = {"max_reads", "max_writes", "ports_used"};

const std::vector<KeySpec>& key_specs() {
  static const std::vector<KeySpec> specs = [] {
    std::vector<KeySpec> v = {{"core_clock", Kind::System, Type::Float, 1},
                              {"axi0_port", Kind::System, Type::Area, 0},
                              {"axi1_port", Kind::System, Type::Area, 0}};
    for (const std::string& area : kAreas) {
      v.push_back({area + "_clock_scale", Kind::System, Type::Float, 1});
      v.push_back({area + "_burst_length", Kind::System, Type::Int, 1});
      v.push_back({area + "_read_latency", Kind::System, Type::Int, 0});
      v.push_back({area + "_write_latency", Kind::System, Type::Int, 0});
      v.push_back({area + "_max_reads", Kind::System, Type::Int, 0});
      v.push_back({area + "_max_writes", Kind::System, Type::Int, 0});
      v.push_back({area + "_ports_used", Kind::System, Type::Int, 1});
    }
    v.push_back({"const_mem_area", Kind::Mode, Type::Port, 0});
    v.push_back({"arena_mem_area", Kind::Mode, Type::Port, 0});
    v.push_back({"cache_mem_area", Kind::Mode, Type::Port, 0});
    v.push_back({"arena_cache_size", Kind::Mode, Type::Int, 0});
    v.push_back({"cache_sram_size", Kind::Mode, Type::Int, 0});
    v.push_back({"inherit", Kind::Other, Type::Section, 0});
    return v;
  }();
  return specs;
}

const KeySpec* find_spec(std::string_view key) {
  const std::string k = ini_key(key);
  for (const KeySpec& s : key_specs())
    if (ini_key(s.name) == k) return &s;
  return nullptr;
}

std::string join_names(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::System: return "System_Config";
    case Kind::Mode: return "Memory_Mode";
    case Kind::Default: return "DEFAULT";
    case Kind::Other: break;
  }
  return "other";
}

/// Python's float(): optional sign, digits with single underscores between them, a fraction, an
/// exponent; or inf / nan (rejected by the callers' bounds).
std::optional<double> python_float(std::string_view s) {
  std::string digits;
  std::size_t i = 0;
  const auto digit = [&](std::size_t k) { return k < s.size() && s[k] >= '0' && s[k] <= '9'; };
  const auto run = [&]() {  // digits with single '_' between two digits
    const std::size_t start = digits.size();
    while (digit(i) || (i < s.size() && s[i] == '_' && i > 0 && digit(i - 1) && digit(i + 1))) {
      if (s[i] != '_') digits += s[i];
      ++i;
    }
    return digits.size() > start;
  };
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) digits += s[i++];
  const bool whole = run();
  bool frac = false;
  if (i < s.size() && s[i] == '.') {
    digits += s[i++];
    frac = run();
  }
  if (!whole && !frac) return std::nullopt;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    digits += s[i++];
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) digits += s[i++];
    if (!run()) return std::nullopt;
  }
  if (i != s.size()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(digits.c_str(), &end);
  if (end != digits.c_str() + digits.size()) return std::nullopt;
  return v;
}

/// Python's int() in base 10: optional sign, digits with single underscores between them; nothing
/// else. Values beyond 2^62 are refused as too large.
std::optional<std::int64_t> python_int(std::string_view s, bool& too_large) {
  too_large = false;
  std::size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  if (i >= s.size()) return std::nullopt;
  std::int64_t v = 0;
  bool any = false;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '_' && any && i + 1 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '9') continue;
    if (c < '0' || c > '9') return std::nullopt;
    any = true;
    if (v > (std::int64_t{1} << 62) / 10) {
      too_large = true;
      return std::nullopt;
    }
    v = v * 10 + (c - '0');
  }
  if (!any) return std::nullopt;
  return negative ? -v : v;
}

/// One option found by a lookup: the option, the section it is read in (for interpolation), the
/// store's [DEFAULT] and the file it came from.
struct Hit {
  const IniOption* option = nullptr;
  const IniSection* section = nullptr;
  const IniSection* defaults = nullptr;
  std::string file;
  bool builtin = false;
};

const VelaConfig::Store& builtin_store() {
  static const VelaConfig::Store store = [] {
    VelaConfig::Store s;
    for (const std::string* text : {&kSystemConfigsIni, &kMemoryModesIni}) {
      const IniFile file = parse_ini(*text, "(built-in vela.ini)");
      for (const IniSection& sec : file.sections) {
        s.sections.push_back(sec);
        s.option_file.emplace_back(sec.options.size(), file.path);
        s.section_file.push_back(file.path);
      }
    }
    return s;
  }();
  return store;
}

const IniSection* find_in(const VelaConfig::Store& store, std::string_view name, std::size_t* index = nullptr) {
  for (std::size_t i = 0; i < store.sections.size(); ++i) {
    if (store.sections[i].name == name) {
      if (index) *index = i;
      return &store.sections[i];
    }
  }
  return nullptr;
}

/// Everything a lookup needs: the user store (the --config files) over the built-in one.
struct Stores {
  const VelaConfig::Store& user;
  const VelaConfig::Store& builtin;

  /// The section `name` and its store: the files' first, then the built-ins.
  std::pair<const IniSection*, const VelaConfig::Store*> section(std::string_view name) const {
    if (const IniSection* s = find_in(user, name)) return {s, &user};
    if (const IniSection* s = find_in(builtin, name)) return {s, &builtin};
    return {nullptr, nullptr};
  }

  /// configparser's has_option + get: the section's own option, else its store's [DEFAULT].
  std::optional<Hit> own(const IniSection& sec, const VelaConfig::Store& store, std::string_view key) const {
    const bool is_builtin = &store == &builtin;
    std::size_t si = 0;
    find_in(store, sec.name, &si);
    for (std::size_t i = 0; i < sec.options.size(); ++i) {
      if (ini_key(sec.options[i].key) == ini_key(key))
        return Hit{&sec.options[i], &sec, &store.defaults, store.option_file[si][i], is_builtin};
    }
    for (std::size_t i = 0; i < store.defaults.options.size(); ++i) {
      if (ini_key(store.defaults.options[i].key) == ini_key(key))
        return Hit{&store.defaults.options[i], &sec, &store.defaults, store.defaults_file[i], is_builtin};
    }
    return std::nullopt;
  }

  /// Vela's _read_config: the `inherit` chain's value first, then the section's own. `chain` holds the
  /// sections being read (a loop is refused; check() reports loops with their location first).
  std::optional<Hit> read(std::string_view name, std::string_view key, std::vector<std::string>& chain) const {
    const auto [sec, store] = section(name);
    NPUMAP_ASSERT(sec != nullptr);
    std::optional<Hit> result;
    if (const std::optional<Hit> inh = own(*sec, *store, "inherit")) {
      const std::string parent = value(*inh);
      if (section(parent).first == nullptr) {
        throw common::UserError({inh->file, inh->option->line, inh->option->value_column}, std::string(name) + ".inherit",
                                fmt::format("inherits from [{}], which no --config file or built-in section defines", parent),
                                "give the full section name, e.g. Memory_Mode.Dedicated_Sram");
      }
      chain.emplace_back(name);
      if (std::find(chain.begin(), chain.end(), parent) != chain.end()) {
        throw common::UserError({inh->file, inh->option->line, inh->option->value_column}, std::string(name) + ".inherit",
                                fmt::format("inheriting [{}] loops back to [{}]", parent, parent),
                                "a section may not inherit from itself, directly or through others");
      }
      result = read(parent, key, chain);
      chain.pop_back();
    }
    if (std::optional<Hit> h = own(*sec, *store, key)) result = h;
    return result;
  }

  std::optional<Hit> read(std::string_view name, std::string_view key) const {
    std::vector<std::string> chain;
    return read(name, key, chain);
  }

  static std::string value(const Hit& h) { return interpolate(*h.option, *h.section, h.defaults, h.file); }

  /// The sections `name` inherits from, itself first.
  std::vector<std::string> chain_of(std::string_view name) const {
    std::vector<std::string> out{std::string(name)};
    for (;;) {
      const auto [sec, store] = section(out.back());
      if (sec == nullptr) break;
      const std::optional<Hit> inh = own(*sec, *store, "inherit");
      if (!inh) break;
      const std::string parent = value(*inh);
      if (std::find(out.begin(), out.end(), parent) != out.end()) break;
      out.push_back(parent);
    }
    return out;
  }
};

[[noreturn]] void value_error(const Hit& h, const std::string& message, const std::string& hint) {
  throw common::UserError({h.file, h.option->line, h.option->value_column}, h.section->name + "." + h.option->key, message,
                          hint);
}

/// A value checked against its key's type; the parsed number in `number` (floats and ints).
void check_value(const Hit& h, const KeySpec& spec, const Stores& stores, double* number = nullptr) {
  const std::string v = Stores::value(h);
  const std::string continuation_hint =
      v.find('\n') != std::string::npos ? "; a line indented deeper than the key's line continues its value, as in Python's configparser: unindent it"
                                        : "";
  switch (spec.type) {
    case Type::Float: {
      const std::optional<double> f = python_float(v);
      const std::string what = spec.name == "core_clock" ? "the NPU clock in Hz, e.g. 500e6" : "a number, e.g. 0.5";
      if (!f) {
        const bool comment = v.find(';') != std::string::npos || v.find('#') != std::string::npos;
        value_error(h, fmt::format("expected a number, got `{}`", v),
                    comment ? "configparser (and Vela) keeps everything after `=` in the value: put the comment on a line of its own"
                            : "write " + what + continuation_hint);
      }
      if (!std::isfinite(*f) || !(*f > 0.0)) value_error(h, fmt::format("must be a positive number, got `{}`", v), "write " + what);
      if (number) *number = *f;
      return;
    }
    case Type::Int: {
      bool too_large = false;
      const std::optional<std::int64_t> i = python_int(v, too_large);
      const bool bytes = spec.name == "arena_cache_size" || spec.name == "cache_sram_size";
      if (!i) {
        const bool comment = v.find(';') != std::string::npos || v.find('#') != std::string::npos;
        value_error(h, too_large ? fmt::format("`{}` is too large", v) : fmt::format("expected a whole number, got `{}`", v),
                    comment ? "configparser (and Vela) keeps everything after `=` in the value: put the comment on a line of its own"
                    : bytes ? "write a number of bytes as Vela reads it, e.g. 393216 (no unit)" + continuation_hint
                            : "write a whole number, e.g. 32" + continuation_hint);
      }
      if (*i < spec.min) value_error(h, fmt::format("must be at least {}, got {}", spec.min, *i), "");
      const std::int64_t limit = bytes ? (std::int64_t{1} << 48) : std::numeric_limits<int>::max();
      if (*i > limit) value_error(h, fmt::format("{} is too large (at most {})", *i, limit), "");
      if (number) *number = static_cast<double>(*i);
      return;
    }
    case Type::Area: {
      if (std::find(kAreas.begin(), kAreas.end(), v) != kAreas.end()) return;
      const std::string near = common::closest_match(v, kAreas);
      value_error(h, fmt::format("unknown memory `{}`", v),
                  (near.empty() ? std::string() : fmt::format("did you mean `{}`? ", near)) + "memories: " + join_names(kAreas) +
                      " (names are case-sensitive, as Vela's MemArea)");
    }
    case Type::Port: {
      if (v == "Axi0" || v == "Axi1") return;
      value_error(h, fmt::format("unknown AXI port `{}`", v), "ports: Axi0, Axi1 (case-sensitive, as Vela's MemPort)");
    }
    case Type::Section: {
      if (stores.section(v).first != nullptr) return;
      std::vector<std::string> names;
      for (const auto* store : {&stores.user, &stores.builtin})
        for (const IniSection& s : store->sections) names.push_back(s.name);
      const std::string near = common::closest_match(v, names);
      value_error(h, fmt::format("inherits from [{}], which no --config file or built-in section defines", v),
                  near.empty() ? "give the full section name, e.g. Memory_Mode.Dedicated_Sram"
                               : fmt::format("did you mean `{}`?", near));
    }
  }
}

std::string note_text(const Hit& h, const std::string& reason) {
  return fmt::format("{}:{}: [{}] {} = {}: {}", h.file, h.option->line, h.section->name, h.option->key, h.option->value, reason);
}

void add_note(std::vector<std::string>* notes, std::string text) {
  if (notes && std::find(notes->begin(), notes->end(), text) == notes->end()) notes->push_back(std::move(text));
}

/// The options of the user sections in `chain` (and the user [DEFAULT]s of `kind`) that no used
/// key's lookup returned: each gets a note saying why the model does not use it.
void note_unused(const Stores& stores, const std::vector<std::string>& chain, Kind kind, const std::set<const IniOption*>& used,
                 const std::set<std::string>& read_keys, const std::function<std::string(const std::string&)>& reason,
                 std::vector<std::string>* notes) {
  if (!notes) return;
  for (const std::string& name : chain) {
    const auto [sec, store] = stores.section(name);
    if (sec == nullptr || store != &stores.user) continue;
    for (const IniOption& o : sec->options) {
      const std::string k = ini_key(o.key);
      if (k == "inherit" || used.count(&o) || read_keys.count(k)) continue;  // used, or overridden by a child
      const std::optional<Hit> h = stores.own(*sec, *store, o.key);
      add_note(notes, note_text(*h, reason(k)));
    }
  }
  const VelaConfig::Store& user = stores.user;
  for (std::size_t i = 0; i < user.defaults.options.size(); ++i) {
    const IniOption& o = user.defaults.options[i];
    const KeySpec* spec = find_spec(o.key);
    if (spec == nullptr || spec->kind != kind || used.count(&o) || read_keys.count(ini_key(o.key))) continue;
    add_note(notes, note_text(Hit{&o, &user.defaults, &user.defaults, user.defaults_file[i], false}, reason(ini_key(o.key))));
  }
}

}  // namespace

VelaConfig::VelaConfig() = default;

VelaConfig::VelaConfig(const std::vector<std::string>& files) {
  for (const std::string& f : files) {
    add(read_ini_file(f));
    files_.push_back(f);
  }
  check();
}

VelaConfig VelaConfig::from_texts(const std::vector<std::pair<std::string, std::string>>& texts) {
  VelaConfig c;
  for (const auto& [text, name] : texts) {
    c.add(parse_ini(text, name));
    c.files_.push_back(name);
  }
  c.check();
  return c;
}

const VelaConfig& VelaConfig::builtin() {
  static const VelaConfig c;
  return c;
}

void VelaConfig::add(const IniFile& file) {
  // configparser's read() of one more file: new sections are appended, known ones get the file's
  // options added or replaced key by key; [DEFAULT] likewise.
  const auto merge = [&](IniSection& into, std::vector<std::string>& files, const IniSection& from) {
    for (const IniOption& o : from.options) {
      auto it = std::find_if(into.options.begin(), into.options.end(),
                             [&](const IniOption& x) { return ini_key(x.key) == ini_key(o.key); });
      if (it == into.options.end()) {
        into.options.push_back(o);
        files.push_back(file.path);
      } else {
        *it = o;
        files[static_cast<std::size_t>(it - into.options.begin())] = file.path;
      }
    }
  };
  for (const IniSection& sec : file.sections) {
    if (sec.name == kIniDefaultSection) {
      merge(user_.defaults, user_.defaults_file, sec);
      continue;
    }
    std::size_t index = 0;
    if (find_in(user_, sec.name, &index) == nullptr) {
      IniSection fresh;
      fresh.name = sec.name;
      fresh.line = sec.line;
      user_.sections.push_back(fresh);
      user_.option_file.emplace_back();
      user_.section_file.push_back(file.path);
      index = user_.sections.size() - 1;
    }
    merge(user_.sections[index], user_.option_file[index], sec);
  }
}

void VelaConfig::check() const {
  const Stores stores{user_, builtin_store()};
  const auto check_option = [&](const Hit& h, Kind kind) {
    const IniOption& o = *h.option;
    const KeySpec* spec = find_spec(o.key);
    const std::string path = h.section->name + "." + o.key;
    if (spec == nullptr) {
      std::vector<std::string> names;
      for (const KeySpec& s : key_specs())
        if (kind == Kind::Other || kind == Kind::Default || s.kind == kind || s.kind == Kind::Other) names.push_back(s.name);
      const std::string near = common::closest_match(o.key, names);
      std::string listing = kind == Kind::System ? "core_clock, axi0_port, axi1_port, <Mem>_clock_scale, <Mem>_burst_length, "
                                                   "<Mem>_read_latency, <Mem>_write_latency, <Mem>_max_reads, "
                                                   "<Mem>_max_writes, <Mem>_ports_used, inherit (Mem: Sram, Dram, OnChipFlash, OffChipFlash)"
                            : kind == Kind::Mode ? "const_mem_area, arena_mem_area, cache_mem_area, arena_cache_size, "
                                                   "cache_sram_size, inherit"
                                                 : "the keys of System_Config and Memory_Mode sections";
      throw common::UserError({h.file, o.line, o.key_column}, path, fmt::format("unknown key `{}`", o.key),
                              (near.empty() ? std::string() : fmt::format("did you mean `{}`? ", near)) + "keys of a " +
                                  kind_name(kind) + " section: " + listing);
    }
    if ((kind == Kind::System || kind == Kind::Mode) && spec->kind != Kind::Other && spec->kind != kind) {
      throw common::UserError({h.file, o.line, o.key_column}, path,
                              fmt::format("`{}` is a {} key: Vela does not read it in [{}]", spec->name, kind_name(spec->kind),
                                          h.section->name),
                              fmt::format("move it to a [{}.<Name>] section", kind_name(spec->kind)));
    }
    check_value(h, *spec, stores);
  };
  for (std::size_t i = 0; i < user_.defaults.options.size(); ++i)
    check_option(Hit{&user_.defaults.options[i], &user_.defaults, &user_.defaults, user_.defaults_file[i], false}, Kind::Default);
  for (const IniSection& sec : user_.sections) {
    const Kind kind = kind_of(sec.name);
    for (const IniOption& o : sec.options) check_option(*stores.own(sec, user_, o.key), kind);
    // The inherit chain ends (no loop): reading it throws at the looping `inherit`.
    std::vector<std::string> chain;
    stores.read(sec.name, "inherit", chain);
  }
}

std::vector<std::string> VelaConfig::system_config_names() const {
  std::vector<std::string> out{std::string(kInternalDefault)};
  for (const auto* store : {&user_, &builtin_store()}) {
    for (const IniSection& s : store->sections) {
      if (kind_of(s.name) != Kind::System) continue;
      const std::string name = s.name.substr(kSystemPrefix.size());
      if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
    }
  }
  return out;
}

std::vector<std::string> VelaConfig::memory_mode_names() const {
  std::vector<std::string> out{std::string(kInternalDefault)};
  for (const auto* store : {&user_, &builtin_store()}) {
    for (const IniSection& s : store->sections) {
      if (kind_of(s.name) != Kind::Mode) continue;
      const std::string name = s.name.substr(kModePrefix.size());
      if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
    }
  }
  return out;
}

bool VelaConfig::has_system_config(std::string_view name) const {
  const auto names = system_config_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool VelaConfig::has_memory_mode(std::string_view name) const {
  const auto names = memory_mode_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

SystemConfig VelaConfig::system_config(std::string_view name, const AcceleratorConfig& accel,
                                       std::vector<std::string>* notes) const {
  const Stores stores{user_, builtin_store()};
  std::string section = std::string(kSystemPrefix) + std::string(name);
  if (name == kInternalDefault && find_in(user_, section) == nullptr) {
    // Vela's _set_default_sys_config, which equals these shipped sections.
    section = std::string(kSystemPrefix) + (accel.is_u65() ? "Ethos_U65_Client_Server" : "Ethos_U55_High_End_Embedded");
  }
  const auto [sec, store] = stores.section(section);
  if (sec == nullptr) {
    const auto names = system_config_names();
    const std::string near = common::closest_match(std::string(name), names);
    throw common::UserError({}, "system_config", fmt::format("unknown system config `{}`", name),
                            (near.empty() ? std::string() : fmt::format("did you mean `{}`? ", near)) + "one of: " + join_names(names));
  }
  // A built-in section resolves the same way every time (and has no notes): kept once resolved.
  static std::mutex cache_mutex;
  static std::map<std::pair<std::string, std::string>, SystemConfig> cache;  // (name, section) -> resolved
  const auto cache_key = std::make_pair(std::string(name), section);
  if (store == &builtin_store()) {
    const std::lock_guard<std::mutex> lock(cache_mutex);
    if (const auto it = cache.find(cache_key); it != cache.end()) return it->second;
  }
  SystemConfig sys;
  sys.name = std::string(name);
  sys.builtin = store == &builtin_store();
  if (!sys.builtin) sys.where = {user_.section_file[static_cast<std::size_t>(sec - user_.sections.data())], sec->line, 1};

  std::set<const IniOption*> used;
  std::set<std::string> read_keys;
  const auto get = [&](const std::string& key) -> std::optional<Hit> {
    std::optional<Hit> h = stores.read(section, key);
    read_keys.insert(ini_key(key));
    if (h) used.insert(h->option);
    return h;
  };
  const auto number = [&](const Hit& h) {
    double v = 0.0;
    check_value(h, *find_spec(h.option->key), stores, &v);
    return v;
  };
  if (const auto h = get("core_clock")) {
    sys.core_clock = number(*h);
  } else if (!sys.builtin) {
    throw common::UserError(sys.where, section + ".core_clock",
                            fmt::format("[{}] sets no core_clock (Vela would take 1 Hz, which makes every time meaningless)", section),
                            "add core_clock=<the NPU clock in Hz>, e.g. core_clock=500e6");
  }
  for (int p = 0; p < 2; ++p) {
    const std::string key = p == 0 ? "axi0_port" : "axi1_port";
    if (const auto h = get(key)) {
      check_value(*h, *find_spec(key), stores);
      parse_mem_area(Stores::value(*h), sys.axi_port[static_cast<std::size_t>(p)]);
      if (!h->builtin) sys.axi_where[static_cast<std::size_t>(p)] = {h->file, h->option->line, h->option->value_column};
    } else if (!sys.builtin) {
      sys.axi_where[static_cast<std::size_t>(p)] = sys.where;
      add_note(notes, fmt::format("{}:{}: [{}] sets no {}: Sram, as Vela", sys.where.file, sys.where.line, section, key));
    }
  }
  for (const MemArea area : sys.axi_port) {
    const std::string mem(mem_area_name(area));
    MemoryTiming& t = sys.memory[static_cast<int>(area)];
    for (const std::string& field : kTimingFields) {
      const std::string key = mem + "_" + field;
      const std::optional<Hit> h = get(key);
      if (!h) {
        if (!sys.builtin && field != "clock_scale") {
          add_note(notes, fmt::format("{}:{}: [{}] sets no {}: {}, as Vela", sys.where.file, sys.where.line, section, key,
                                      field == "burst_length" ? "1 byte" : "0 cycles"));
        }
        continue;
      }
      const double v = number(*h);
      if (field == "clock_scale") {
        t.clock_scale = v;
        sys.clock_scale_set[static_cast<int>(area)] = true;
      } else if (field == "burst_length") {
        t.burst_length = static_cast<int>(v);
      } else if (field == "read_latency") {
        t.read_latency = static_cast<int>(v);
      } else {
        t.write_latency = static_cast<int>(v);
      }
    }
  }
  if (!sys.builtin) {
    const auto on_port = [&](const std::string& mem) {
      return std::any_of(sys.axi_port.begin(), sys.axi_port.end(), [&](MemArea a) { return mem_area_name(a) == mem; });
    };
    note_unused(stores, stores.chain_of(section), Kind::System, used, read_keys,
                [&](const std::string& key) -> std::string {
                  for (const std::string& mem : kAreas) {
                    if (key.rfind(ini_key(mem) + "_", 0) != 0) continue;
                    const std::string field = key.substr(mem.size() + 1);
                    if (field == "max_reads" || field == "max_writes")
                      return "not modelled: the cycle model does not limit outstanding AXI transactions";
                    if (field == "ports_used") return "not modelled: one AXI port per memory";
                    if (!on_port(mem)) return fmt::format("not used: no AXI port of this system config is {}", mem);
                  }
                  return "not used by a System_Config";
                },
                notes);
  } else {
    const std::lock_guard<std::mutex> lock(cache_mutex);
    cache.emplace(cache_key, sys);
  }
  return sys;
}

MemoryMode VelaConfig::memory_mode(std::string_view name, const AcceleratorConfig& accel, std::vector<std::string>* notes) const {
  const Stores stores{user_, builtin_store()};
  std::string section = std::string(kModePrefix) + std::string(name);
  if (name == kInternalDefault && find_in(user_, section) == nullptr) {
    // Vela's _set_default_mem_mode, which equals these shipped sections.
    section = std::string(kModePrefix) + (accel.is_u65() ? "Dedicated_Sram" : "Shared_Sram");
  }
  const auto [sec, store] = stores.section(section);
  if (sec == nullptr) {
    const auto names = memory_mode_names();
    const std::string near = common::closest_match(std::string(name), names);
    throw common::UserError({}, "memory_mode", fmt::format("unknown memory mode `{}`", name),
                            (near.empty() ? std::string() : fmt::format("did you mean `{}`? ", near)) + "one of: " + join_names(names));
  }
  static std::mutex cache_mutex;
  static std::map<std::pair<std::string, std::string>, MemoryMode> cache;  // (name, section) -> resolved
  const auto cache_key = std::make_pair(std::string(name), section);
  if (store == &builtin_store()) {
    const std::lock_guard<std::mutex> lock(cache_mutex);
    if (const auto it = cache.find(cache_key); it != cache.end()) return it->second;
  }
  MemoryMode mode;
  mode.name = std::string(name);
  mode.builtin = store == &builtin_store();
  if (!mode.builtin) mode.where = {user_.section_file[static_cast<std::size_t>(sec - user_.sections.data())], sec->line, 1};

  std::set<const IniOption*> used;
  std::set<std::string> read_keys;
  const auto get = [&](const std::string& key) -> std::optional<Hit> {
    std::optional<Hit> h = stores.read(section, key);
    read_keys.insert(ini_key(key));
    if (h) used.insert(h->option);
    return h;
  };
  static const char* const port_keys[] = {"const_mem_area", "arena_mem_area", "cache_mem_area"};
  AxiPort* ports[] = {&mode.const_port, &mode.arena_port, &mode.cache_port};
  for (std::size_t i = 0; i < 3; ++i) {
    if (const auto h = get(port_keys[i])) {
      check_value(*h, *find_spec(port_keys[i]), stores);
      *ports[i] = Stores::value(*h) == "Axi0" ? AxiPort::Axi0 : AxiPort::Axi1;
      if (!h->builtin) mode.port_where[i] = {h->file, h->option->line, h->option->value_column};
    } else if (!mode.builtin) {
      mode.port_where[i] = mode.where;
      add_note(notes, fmt::format("{}:{}: [{}] sets no {}: Axi1, as Vela", mode.where.file, mode.where.line, section, port_keys[i]));
    }
  }
  const std::optional<Hit> size = get("arena_cache_size");
  const std::optional<Hit> size21 = get("cache_sram_size");
  const bool spills = mode.cache_port != mode.arena_port;
  const auto bytes = [&](const Hit& h) {
    double v = 0.0;
    check_value(h, *find_spec(h.option->key), stores, &v);
    return static_cast<std::int64_t>(v);
  };
  // Vela 3 and later: arena_cache_size is the cache when the mode spills, else the arena's SRAM.
  // Vela 2.1: cache_sram_size is the cache, read only when the mode spills.
  if (size) {
    mode.arena_cache_size = bytes(*size);
    if (!size->builtin) mode.size_where = {size->file, size->option->line, size->option->value_column};
  }
  if (size21) {
    const std::int64_t v = bytes(*size21);
    if (spills && size && v != *mode.arena_cache_size) {
      throw common::UserError({size21->file, size21->option->line, size21->option->value_column},
                              section + "." + size21->option->key,
                              fmt::format("cache_sram_size (Vela 2.1) is {} but arena_cache_size (Vela 3 and later) is {}: "
                                          "both size the cache of this spilling mode",
                                          v, *mode.arena_cache_size),
                              "keep one of them, or make them equal");
    }
    if (spills && !size) {
      mode.arena_cache_size = v;
      if (!size21->builtin) mode.size_where = {size21->file, size21->option->line, size21->option->value_column};
    } else {
      used.erase(size21->option);
    }
  }
  if (!mode.builtin) {
    read_keys.erase("cache_sram_size");
    note_unused(stores, stores.chain_of(section), Kind::Mode, used, read_keys,
                [&](const std::string& key) -> std::string {
                  if (key == "cache_sram_size")
                    return spills ? "not used: arena_cache_size gives the cache size"
                                  : "not used: the mode does not spill (Vela 2.1 reads it only for a dedicated SRAM cache)";
                  return "not used by a Memory_Mode";
                },
                notes);
  } else {
    const std::lock_guard<std::mutex> lock(cache_mutex);
    cache.emplace(cache_key, mode);
  }
  return mode;
}

Arch VelaConfig::make_arch(const AcceleratorConfig& accel, std::string_view system_config, std::string_view memory_mode,
                           const NameSources& sources, std::vector<std::string>* notes) const {
  const SystemConfig sys = this->system_config(system_config, accel, notes);
  const MemoryMode mode = this->memory_mode(memory_mode, accel, notes);
  const auto hint = [&](const ArchProblem& problem) {
    std::vector<std::string> ok;
    if (problem.blame == ArchProblem::Blame::MemoryMode) {
      for (const std::string& name : memory_mode_names()) {
        try {
          if (!combination_problem(accel, sys, this->memory_mode(name, accel))) ok.push_back(name);
        } catch (const common::UserError&) {
        }
      }
      return ok.empty() ? fmt::format("no memory mode works with {} and system config `{}`: choose another system config",
                                      accel.name, sys.name)
                        : fmt::format("memory modes for {} with system config `{}`: {}", accel.name, sys.name, join_names(ok));
    }
    for (const std::string& name : system_config_names()) {
      try {
        if (!combination_problem(accel, this->system_config(name, accel), mode)) ok.push_back(name);
      } catch (const common::UserError&) {
      }
    }
    return ok.empty() ? fmt::format("no system config works with {} and memory mode `{}`: choose another memory mode",
                                    accel.name, mode.name)
                      : fmt::format("system configs for {} with memory mode `{}`: {}", accel.name, mode.name, join_names(ok));
  };
  return arch::make_arch(accel, sys, mode, sources, hint);
}

const std::string& builtin_system_configs_ini() { return kSystemConfigsIni; }
const std::string& builtin_memory_modes_ini() { return kMemoryModesIni; }

}  // namespace npumap::arch
