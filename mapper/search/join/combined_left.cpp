// Combined left tables (combined_left.hpp): what they drop and why that is safe is said there.

#include "mapper/search/join/combined_left.hpp"

#include <map>
#include <unordered_map>

#include <tbb/parallel_for.h>

#include "common/user_error.hpp"
#include "mapper/search/join/prune.hpp"

namespace npumap::search::join_internal {
namespace {

/// (the layer reads a rolling buffer, (left group, its buffer) per source): what a table combines.
using Signature = std::pair<bool, std::vector<std::pair<std::uint32_t, double>>>;

/// Rewrites one key's pairs; new signatures get the next table numbers.
void rewrite_key(std::vector<PairTask>& pairs, std::uint32_t num_left, std::map<Signature, std::uint32_t>& signature_index,
                 std::vector<const Signature*>& signatures) {
  std::unordered_map<std::uint32_t, std::size_t> slot_of_right;
  std::vector<std::vector<const PairTask*>> by_right;  // in order of first appearance
  for (const PairTask& t : pairs) {
    const auto [it, fresh] = slot_of_right.try_emplace(t.right, by_right.size());
    if (fresh) by_right.emplace_back();
    by_right[it->second].push_back(&t);
  }
  if (by_right.size() == pairs.size()) return;  // every layer group meets one left group
  std::vector<PairTask> rewritten;
  rewritten.reserve(by_right.size());
  for (const std::vector<const PairTask*>& list : by_right) {
    PairTask task = *list.front();
    if (list.size() > 1) {
      Signature sig{task.input_rolling, {}};
      for (const PairTask* p : list) {
        // The same new key and layer group: the same whole tensors, held bytes and cascade flags.
        NPUMAP_ASSERT(p->full_bytes == task.full_bytes && p->held_bytes == task.held_bytes &&
                      p->input_rolling == task.input_rolling && p->output_rolling == task.output_rolling);
        sig.second.emplace_back(p->left, task.input_rolling ? p->rolling_bytes : 0.0);
      }
      const auto [it, fresh] = signature_index.try_emplace(std::move(sig), static_cast<std::uint32_t>(signatures.size()));
      if (fresh) signatures.push_back(&it->first);
      task.left = num_left + it->second;
      task.rolling_bytes = 0.0;
    }
    rewritten.push_back(task);
  }
  pairs = std::move(rewritten);
}

}  // namespace

std::vector<LeftGroup> combine_left_tables(const PassContext& ctx, const std::vector<LeftGroup>& left, StepPairs& tasks) {
  std::map<Signature, std::uint32_t> signature_index;
  std::vector<const Signature*> signatures;
  for (auto& [key, pairs] : tasks) rewrite_key(pairs, static_cast<std::uint32_t>(left.size()), signature_index, signatures);
  std::vector<LeftGroup> combined(signatures.size());
  const bool tiebreak = ctx.obj.sram_tiebreak();
  ctx.arena.run([&] {
    tbb::parallel_for(std::size_t{0}, signatures.size(), [&](std::size_t j) {
      const auto& [rolling, sources] = *signatures[j];
      std::vector<JoinRow> rows;
      std::size_t total = 0;
      for (const auto& source : sources) total += left[source.first].rows.size();
      rows.reserve(total);
      for (const auto& [g, buffer] : sources) {
        for (const JoinRow& r : left[g].rows) {
          JoinRow x = r;
          x.cascade = rolling ? r.cascade + buffer : 0.0;  // the cascade SRAM this layer sees
          rows.push_back(x);
        }
      }
      std::vector<Column> cols = ctx.obj.columns;
      if (rolling) cols.push_back(Column::CascadeSram);
      PruneScratch& x = prune_scratch();
      exact_front(rows, cols, tiebreak, x.ws, x.tab, x.keep, !ctx.slack(0).exact());
      std::vector<JoinRow>& out = combined[j].rows;
      out.reserve(x.keep.size());
      for (std::uint32_t i : x.keep) out.push_back(rows[i]);
    });
  });
  return combined;
}

}  // namespace npumap::search::join_internal
