#pragma once
// Future SRAM bound (JoinSpeedups::future_sram_bound; docs/design/search.md "Join", step 8).
//
// Drops: rows whose peak SRAM no completion can reveal. While a key's rows are pruned, peak SRAM is
// compared as max(peak, future, cascade + next) instead of the peak, where `future` and `next` are
// lower bounds of the SRAM in use at any later step and at the next step (`next` while a cascade is
// open: the next step reads its rolling buffer). So two rows whose peaks differ only below what every
// completion will use anyway compare as equal in SRAM, and one of them is dropped.
//
// Safe: the final peak of a completion is max(peak, the later usages); every later usage is at least
// these bounds, and the usages of two rows of one key under the same completion differ only by their
// cascade (the rest is a function of the key and the completion). So rows whose bounded values compare
// a <= b reach final peaks a <= b under every completion: pruning on the bounded value keeps, for
// every completion, a row at least as good. Rows keep their true values. The bound must never exceed
// a real later usage, or a row with the smaller true peak is lost (and, through the incumbent bound,
// which reads the bounded peak, every row of a key can be lost).
//
// The bound of a later step t: the reserved bytes of the key's entries still live at t + the cheapest
// group of t in the tensors t touches that no key of this step holds yet (its inputs produced later,
// the network inputs it introduces, and its output unless an earlier writer already made it live) +
// that group's smallest own SRAM. A tensor several layers write (a concatenation) is live from its
// first writer on, so for every step between its first and its last writer the key holds it, and its
// later writers' output is not fresh: counting it again put the floor
// one whole tensor above the real usage of the later writers' steps. On
// mlzoo__ssd_mobilenet_v3_int8.tflite on ethos-u55-128 with cycles and peak SRAM, the floor at the
// first writer of `concat_1` (2034 x 91 bytes, written by six layers) exceeded the peak of every
// mapping the quick passes had found; the incumbent bound, which reads the bounded peak, then found
// every row dominated by a real mapping with less SRAM, and the join reported no valid mapping
// (without the incumbent bound the front lost two of its three points instead).
// The second part (`fresh`) is the same for every key of a step; it depends on the step only through
// which of t's tensors are live, so it is cached per t by that set. The key's live bytes are a step
// function of t (constant between two last consumers), so `future` is one range maximum of `fresh`
// (a max segment tree) per range. From one step to the next, only the later steps that touch the
// tensors the step made live (its output, its network inputs) change their fresh part: begin_step
// updates those (linear in the layers over a join, not quadratic).

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "mapper/search/join/pass_context.hpp"
#include "mapper/search/join/state.hpp"

namespace npumap::search::join_internal {

/// Lower bounds of a key's later SRAM usage: at any later step, and at the next step without the
/// open cascade.
struct SramFloor {
  double future = 0.0;
  double next = 0.0;
};

class FutureSramBound {
 public:
  explicit FutureSramBound(const PassContext& ctx);
  /// Prepares the keys after step s; `introduced` marks the network inputs read up to step s.
  void begin_step(int s, const std::vector<char>& introduced);
  /// The floor of a key after the step of begin_step (zeros when the bound is off or s is the last).
  SramFloor floor_of(const LiveKey& key) const;

 private:
  /// The largest fresh part of steps a..b (a <= b).
  double fresh_max(int a, int b) const;
  /// The fresh part of later step t after step s (cached per t by the set of t's tensors live).
  double fresh_of(int t, int s, const std::vector<char>& introduced);
  void set_fresh(int t, double v);

  const PassContext& ctx_;
  const bool on_;
  int s_ = -1;
  /// Per step, per group: its rows' least own SRAM. A function of the step's groups alone, so steps
  /// that share their list of groups (identical layers) share one table (least_by_groups_, keyed by
  /// the list's buffer).
  std::vector<const std::vector<double>*> least_own_sram_;
  std::map<const void*, std::vector<double>> least_by_groups_;
  /// Per step: the fresh part by the set of its tensors live (bit i: input i < 63; bit 63: the output).
  std::vector<std::vector<std::pair<std::uint64_t, double>>> fresh_cache_;
  std::vector<std::vector<int>> touching_;            ///< per tensor: the steps that read or write it
  std::size_t fresh_size_ = 0;                        ///< leaves of the tree (the number of steps)
  /// Fresh part per step, as a max segment tree: leaves at [fresh_size_, 2 * fresh_size_), updated
  /// step by step and queried by range in O(log steps).
  std::vector<double> fresh_tree_;
};

}  // namespace npumap::search::join_internal
