#include "mapper/search/objectives.hpp"

#include <fmt/format.h>

#include "common/user_error.hpp"

namespace npumap::search {

const char* objective_name(Objective o) {
  switch (o) {
    case Objective::Cycles: return "cycles";
    case Objective::OffchipBytes: return "offchip_bytes";
    case Objective::Sram: return "sram";
    case Objective::Energy: return "energy";
  }
  return "unknown";
}

std::vector<Objective> all_objectives() {
  return {Objective::Cycles, Objective::OffchipBytes, Objective::Sram, Objective::Energy};
}

std::vector<Objective> default_objectives() { return {Objective::Cycles, Objective::OffchipBytes}; }

std::vector<Column> stage_columns(const std::vector<Objective>& objectives) {
  // Peak SRAM is a join quantity; per pass, the transient SRAM column below stands for it.
  std::vector<Column> cols;
  for (Objective o : all_objectives()) {
    if (o == Objective::Sram) continue;
    for (Objective chosen : objectives) {
      if (chosen == o) cols.push_back(column_of(o));
    }
  }
  cols.push_back(Column::Sram);
  return cols;
}

std::vector<Column> join_columns(const std::vector<Objective>& objectives, bool open_cascade) {
  std::vector<Column> cols;
  for (Objective o : objectives) cols.push_back(column_of(o));
  if (open_cascade) cols.push_back(Column::CascadeSram);
  return cols;
}

std::vector<Objective> parse_objectives(const std::string& text) {
  std::vector<std::string> names;
  for (Objective o : all_objectives()) names.emplace_back(objective_name(o));
  std::vector<Objective> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string word = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    bool found = false;
    for (Objective o : all_objectives()) {
      if (word == objective_name(o)) {
        for (Objective seen : out) {
          if (seen == o) throw common::UserError({}, "--objectives", fmt::format("objective `{}` given twice", word), "list each once");
        }
        out.push_back(o);
        found = true;
      }
    }
    if (!found) {
      const std::string near = common::closest_match(word, names);
      throw common::UserError({}, "--objectives", fmt::format("unknown objective `{}`", word),
                      near.empty() ? "one of: cycles, offchip_bytes, sram, energy" : "did you mean `" + near + "`?");
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace npumap::search
