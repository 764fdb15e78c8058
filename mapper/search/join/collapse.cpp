// Release and collapse (collapse.hpp): what collapse drops and why that is safe is said there.

#include "mapper/search/join/collapse.hpp"

#include <algorithm>

namespace npumap::search::join_internal {

double release_finished(const PassContext& ctx, LiveKey& key, int st, bool output_rolling) {
  double held = 0.0;
  for (LiveEntry& e : key) {
    if (e.dead) continue;
    const JoinTensor& t = ctx.tensor(e.tensor);
    if (!t.network_output && t.last_consumer_step <= st) {
      e.dead = true;
      if (output_rolling) held += ctx.reserved(e.tensor, e.compat);
    }
  }
  if (ctx.speedups.collapse) {
    key.erase(std::remove_if(key.begin(), key.end(), [](const LiveEntry& e) { return e.dead; }), key.end());
  }
  return held;
}

}  // namespace npumap::search::join_internal
