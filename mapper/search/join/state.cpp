// The join's state: keys, rows and the parent chains (state.hpp).

#include "mapper/search/join/state.hpp"

#include "common/user_error.hpp"

namespace npumap::search::join_internal {

const LiveEntry* find_live(const LiveKey& key, int tensor) {
  auto it = std::lower_bound(key.begin(), key.end(), tensor, [](const LiveEntry& e, int t) { return e.tensor < t; });
  if (it == key.end() || it->tensor != tensor || it->dead) return nullptr;
  return &*it;
}

void insert_live(LiveKey& key, const LiveEntry& entry) {
  auto it = std::lower_bound(key.begin(), key.end(), entry.tensor,
                             [](const LiveEntry& e, int t) { return e.tensor < t; });
  key.insert(it, entry);
}

bool has_open_cascade(const LiveKey& key) {
  bool open = false;
  for (const LiveEntry& e : key) open = open || (!e.dead && e.compat.residence == Residence::Rolling);
  return open;
}

std::size_t LiveKeyHash::operator()(const LiveKey& key) const {
  std::uint64_t h = 0x9e3779b97f4a7c15ull;
  for (const LiveEntry& e : key) {
    const std::uint64_t v = static_cast<std::uint64_t>(static_cast<std::uint32_t>(e.tensor)) |
                            static_cast<std::uint64_t>(e.compat.residence) << 32 |
                            static_cast<std::uint64_t>(e.compat.layout) << 36 |
                            static_cast<std::uint64_t>(e.compat.rows) << 40 |
                            static_cast<std::uint64_t>(static_cast<std::uint8_t>(e.compat.over_input)) << 56 |
                            static_cast<std::uint64_t>(e.dead) << 63;
    h = (h ^ v) * 0x100000001b3ull;
    h ^= h >> 29;
  }
  return static_cast<std::size_t>(h);
}

void TraceChain::keep_ancestors(int s) {
  if (s == 0) return;
  std::vector<TraceNode>& level = levels_[static_cast<std::size_t>(s)];
  std::vector<TraceNode>& before = levels_[static_cast<std::size_t>(s - 1)];
  std::vector<std::uint32_t> remap(before.size(), kNoTrace);
  for (const TraceNode& n : level) remap[n.parent] = 0;
  std::uint32_t kept = 0;
  for (std::uint32_t i = 0; i < before.size(); ++i) {
    if (remap[i] == kNoTrace) continue;
    before[kept] = before[i];
    remap[i] = kept++;
  }
  before.resize(kept);
  before.shrink_to_fit();
  for (TraceNode& n : level) n.parent = remap[n.parent];
}

void TraceChain::trace_back(std::uint32_t node, FrontPoint& point) const {
  const int num_steps = static_cast<int>(levels_.size());
  point.group.assign(static_cast<std::size_t>(num_steps), 0);
  point.row.assign(static_cast<std::size_t>(num_steps), 0);
  for (int s = num_steps - 1; s >= 0; --s) {
    NPUMAP_ASSERT(node != kNoTrace);
    const TraceNode& n = levels_[static_cast<std::size_t>(s)][node];
    point.group[static_cast<std::size_t>(s)] = n.group;
    point.row[static_cast<std::size_t>(s)] = n.row;
    node = n.parent;
  }
}

}  // namespace npumap::search::join_internal
