// Vela 2.1 weight compression, sizes only (weight_encoding.hpp; docs/design/lowering/weight-encoding.md).
// The codec part counts the bits the mlw encoder would write: every decision that changes the bit
// count (palette sections, zero-run mode, palette contents and order, the direct-offset mapping,
// the Golomb-Rice parameter search, the slice boundaries and the padding of the fixed-width unary
// chunk fields) is modelled; the order in which chunks interleave is not, because it moves bits
// without changing their number.

#include "workloads/tflite/weight_encoding.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>

#include "common/user_error.hpp"
#include "workloads/bias_scale.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace npumap::tflite {
namespace {

[[noreturn]] void fail(const std::string& key, const std::string& message, const std::string& hint = {}) {
  throw common::UserError({"weights", 0, 0}, key, message, hint);
}

std::int64_t round_up(std::int64_t v, std::int64_t q) { return (v + q - 1) / q * q; }

// ============================================================================================
// The mlw codec, bit counting only.
// ============================================================================================

// Field widths of the bitstream (weight-encoding.md, "The codec"): slice header ZDIV 3, SLICELEN 15, WDIV 3, WTRUNC 1, NEWPAL 1;
// a new palette adds DIROFS 5, PALSIZE 5, PALBITS 3 and the entries.
constexpr int kSliceHeaderBits = 3 + 15 + 3 + 1 + 1;
constexpr int kPaletteHeaderBits = 5 + 5 + 3;
constexpr int kEndOfStreamBits = 3;
constexpr int kMaxSliceValues = 32767;
// The parameter search charges 40 bits for a change of GRC parameters (its estimate of a new
// slice), except where the weight stream already changes.
constexpr int kParamChangeCost = 40;
constexpr std::int64_t kImpossible = 10000;
// Largest reordered stream accepted (2^27 values, 256 MiB as int16); real layers stay below 2^23.
constexpr std::int64_t kMaxStreamValues = std::int64_t{1} << 27;

// Weight-index GRC configurations: divisor 0..5 untruncated, 0..5 truncated, then uncompressed.
struct GrcParam {
  int div;
  int mode;  // 0 plain, 1 truncated, 2 uncompressed
};
constexpr std::array<GrcParam, 13> kWeightParams = {
    {{0, 0}, {1, 0}, {2, 0}, {3, 0}, {4, 0}, {5, 0}, {0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 1}, {0, 2}}};
// Zero-run configurations: divisor 0..3.
constexpr std::array<GrcParam, 4> kZeroRunParams = {{{0, 0}, {1, 0}, {2, 0}, {3, 0}}};

bool is_power_of_two(int x) { return ((x - 1) & x) == 0; }

// Index bits a palette of `size` entries needs (0 for size <= 1).
int palette_index_bits(int size) {
  for (int i = 7; i >= 0; --i) {
    if (size > (1 << i)) return i + 1;
  }
  return 0;
}

// Viterbi-like choice of one GRC configuration per run of values: each change costs 40 bits,
// except (for zero runs) where the weight stream already changes. The result is one (config, end)
// per run; ends are exclusive value positions, the last one is the number of values.
struct GrcRun {
  int cfg;
  int end;
};

// The search keeps each configuration's bit count relative to the best one so far: a lagging
// configuration switches to the best as soon as it is more than one change (40 bits) behind, so a
// difference never exceeds 40 plus one value's estimate. A weight value's estimate is at most
// 10000 (impossible), so the weight search runs 16 lanes of 16 bits (13 used); a zero run's is its
// length, so the zero-run search runs 4 lanes of 32 bits.
constexpr int kWeightLanes = 16;
constexpr int kZeroRunLanes = 4;
template <typename T, int Lanes>
using LaneCosts = std::array<T, Lanes>;
using WeightLanes = LaneCosts<std::int16_t, kWeightLanes>;
using ZeroRunLanes = LaneCosts<std::int32_t, kZeroRunLanes>;
// Unused weight lanes cost this much per value: never the best (a real lane's estimate is at most
// 10000) and their difference stays at 40 + this, within 16 bits.
constexpr std::int16_t kUnusedLane = 20000;

// Estimated bits of `value` under weight configuration j (the search's cost, not the real payload):
// q + 1 + div, truncated min(q + 1, 2) + div, impossible (10000) past the code's range, and the
// fixed width of uncompressed indices.
std::int16_t weight_cost_estimate(int value, int j, int uncompressed_bits) {
  const GrcParam& c = kWeightParams[static_cast<std::size_t>(j)];
  if (c.mode == 2) return static_cast<std::int16_t>(uncompressed_bits);
  const int q = value >> c.div;
  if ((c.mode == 1 && q > 2) || q > 31) return static_cast<std::int16_t>(kImpossible);
  return static_cast<std::int16_t>((c.mode == 1 ? std::min(q + 1, 2) : q + 1) + c.div);
}

// Scratch memory of the codec, reused by every stream one thread encodes.
struct CodecScratch {
  std::vector<int> weights, zruns;
  std::vector<std::uint16_t> switched;    // per value: the configurations that switched to the best
  std::vector<std::uint8_t> best_before;  // per value: the best configuration before it
  std::vector<WeightLanes> cost_rows;  // weight search: estimate per distinct value and lane
  std::vector<GrcRun> wruns, zruns_cfg;
  std::vector<int> restarts;
  std::vector<int> seen;  // palette scan: the distinct values seen so far (+256)
  std::vector<int> nonzero_pos;  // palette scan: positions of the non-zero values
};

CodecScratch& codec_scratch() {
  thread_local CodecScratch s;
  return s;
}

// Greedy scan for the positions where a new palette section starts (the first is always 0).
// The estimates (15/16 bits per index, 8 bits per palette entry, 20 bits of overhead, 90/16 bits
// per unpaletted value) are the codec's own; they must be kept as they are to reproduce its choice.
// The restarts go to sc.restarts.
void palette_sections(std::span<const std::int16_t> buf, CodecScratch& sc) {
  const int size = static_cast<int>(buf.size());
  std::vector<int>& restarts = sc.restarts;
  restarts.assign(1, 0);
  // The values seen since the last restart (+256): a window starts at or after it, so only these
  // can count towards a new palette.
  std::vector<int>& seen = sc.seen;
  seen.clear();
  std::vector<int>& nonzero_pos = sc.nonzero_pos;  // positions of the non-zero values so far
  nonzero_pos.clear();
  std::array<int, 512> prev_idx;  // last position of each value (+256), -1 = not seen
  prev_idx.fill(-1);
  const auto forget_before_restart = [&](int restart) {
    std::erase_if(seen, [&](int v) { return prev_idx[static_cast<std::size_t>(v)] < restart; });
  };
  int last_restart = 0, zero_cnt = 0, palette_size = 0;
  bool got_palette = false;
  // The count of distinct values seen at or after a window start, remembered per window size: a
  // zero does not move the windows (they are counted in non-zero values), so the same window is
  // tried again at every zero that follows a multiple of 32 non-zero values, and the count then
  // only needs the new zero. A count holds while no non-zero value has come since (its epoch is
  // the number of non-zero values when it was made).
  std::array<int, 5> window_start{};
  std::array<int, 5> window_count{};
  std::array<std::size_t, 5> window_epoch;
  window_epoch.fill(static_cast<std::size_t>(-1));
  for (int i = 0; i < size; ++i) {
    const int vi = buf[static_cast<std::size_t>(i)] + 256;
    if (vi == 256) {
      for (std::size_t k = 0; k < 5; ++k) {
        if (window_epoch[k] == nonzero_pos.size() && prev_idx[256] < window_start[k]) ++window_count[k];
      }
    }
    // Zeros are probably coded as runs (not in the palette) when more than a quarter of the
    // section so far is zero (integer quarter).
    const int exclude_zero = zero_cnt > (i - last_restart) / 4 ? 1 : 0;
    if (got_palette && prev_idx[static_cast<std::size_t>(vi)] < last_restart) {
      // A value the current palette lacks: one more entry; restart if that costs an index bit on
      // a long-lived palette, or overflows 32 entries.
      ++palette_size;
      if (is_power_of_two(palette_size - 1 - exclude_zero) &&
          ((i - last_restart - zero_cnt) > 512 || (palette_size - exclude_zero) > 32)) {
        restarts.push_back(i);
        last_restart = i;
        got_palette = false;
        zero_cnt = 0;
        seen.clear();
      }
    }
    if (prev_idx[static_cast<std::size_t>(vi)] < last_restart) seen.push_back(vi);
    prev_idx[static_cast<std::size_t>(vi)] = i;
    if (vi == 256) {
      ++zero_cnt;
    } else {
      nonzero_pos.push_back(i);
    }

    // Every Nth non-zero value (N = 32, 64, ... 512, doubled while a palette is active) a palette
    // covering the last N non-zero values is tried; every N is a multiple of 32, so nothing
    // happens at other counts.
    const int nonzeros_now = i - last_restart - zero_cnt;
    if (nonzeros_now <= 0 || nonzeros_now % 32 != 0) {
      if (vi == 256) {
        // The zeros that follow change nothing but their count and the last position of 0: none
        // is new to a palette (0 was just seen), none moves a window, and none reaches a window
        // test (the non-zero count stays where this one left it).
        int j = i + 1;
        while (j < size && buf[static_cast<std::size_t>(j)] == 0) ++j;
        zero_cnt += j - 1 - i;
        i = j - 1;
        prev_idx[256] = i;
      }
      continue;
    }
    for (int k = 0; k < 5; ++k) {
      const int n = (32 << k) * (got_palette ? 2 : 1);
      const int nonzeros = i - last_restart - zero_cnt;
      if (nonzeros <= 0 || nonzeros % n != 0) continue;
      // The window starts at the (n + 2)-th most recent non-zero value after the last restart,
      // or at the last restart when there are fewer.
      const std::size_t nz_count = nonzero_pos.size();
      const std::size_t back = static_cast<std::size_t>(n) + 2;
      int restart_idx = last_restart;
      if (nz_count >= back && nonzero_pos[nz_count - back] > last_restart) restart_idx = nonzero_pos[nz_count - back];
      int new_palette_size = 0;
      const std::size_t sk = static_cast<std::size_t>(k);
      if (window_epoch[sk] == nz_count && window_start[sk] == restart_idx) {
        new_palette_size = window_count[sk];
      } else {
        for (int v : seen) {
          if (prev_idx[static_cast<std::size_t>(v)] >= restart_idx) ++new_palette_size;
        }
        window_epoch[sk] = nz_count;
        window_start[sk] = restart_idx;
        window_count[sk] = new_palette_size;
      }
      bool create = false;
      if (got_palette) {
        const int new_bits = palette_index_bits(new_palette_size - exclude_zero);
        const int old_bits = palette_index_bits(palette_size - exclude_zero);
        const int savings = n * (old_bits * 15 - new_bits * 15) / 16 - new_palette_size * 8 - 20;
        create = savings > 0;
      } else if (new_palette_size - exclude_zero <= 32) {
        const int new_bits = palette_index_bits(new_palette_size - exclude_zero);
        const int savings = n * (90 - new_bits * 15) / 16 - new_palette_size * 8 - 20;
        create = savings > 0;
      }
      if (create) {
        palette_size = new_palette_size;
        got_palette = true;
        last_restart = restart_idx;
        if (restarts.back() != last_restart) restarts.push_back(last_restart);
        forget_before_restart(last_restart);
        zero_cnt = 0;
        for (int m = last_restart; m <= i; ++m) {
          if (buf[static_cast<std::size_t>(m)] == 0) ++zero_cnt;
        }
      }
    }
  }
}

// One section's palette and its value -> index mapping.
struct Palette {
  int size = 0;           // entries (0 = no palette)
  int bits = 2;           // PALBITS: entry width, or the direct width when there is no palette
  int direct_offset = 0;  // unused sign-magnitude codes skipped at the bottom of the direct range
  bool zero_runs = false;
  bool only_zeros = false;
  bool only_palette = false;
  std::array<int, 512> index{};  // value + 256 -> coded weight index
};

Palette make_palette(std::span<const std::int16_t> buf) {
  std::array<int, 512> freq{};
  for (std::int16_t v : buf) ++freq[static_cast<std::size_t>(v + 256)];

  // Zero runs when 0 is the most frequent value and more than 4x the second (ties: lowest value).
  int f0 = 0, f1 = 0, v0 = 0;
  for (int i = 0; i < 512; ++i) {
    if (freq[i] > f0) {
      f1 = f0;
      f0 = freq[i];
      v0 = i - 256;
    } else if (freq[i] > f1) {
      f1 = freq[i];
    }
  }
  Palette p;
  p.zero_runs = v0 == 0 && f0 > 4 * f1;

  // Sign-magnitude codes (|v| << 1 | sign), keyed by (frequency, code) so ties favour the larger code.
  std::array<std::uint64_t, 512> keyed{};
  int all_count = 0, all_max = 0;
  for (int v = -255; v < 256; ++v) {
    if (v == 0 && p.zero_runs) continue;
    const int code = (std::abs(v) << 1) | (v < 0 ? 1 : 0);
    const int f = freq[v + 256];
    keyed[code] = (static_cast<std::uint64_t>(f) << 16) | static_cast<std::uint64_t>(code);
    all_count += f;
    if (f > 0) all_max = std::max(all_max, code);
  }
  int offset = 0;
  while (offset < 31 && (keyed[offset] >> 16) == 0) ++offset;
  p.direct_offset = offset;

  std::sort(keyed.begin(), keyed.end(), std::greater<>());
  p.only_zeros = (keyed[0] >> 16) == 0;
  if (p.only_zeros) p.direct_offset = 0;
  p.only_palette = (keyed[0] >> 16) > 0 && (keyed[32] >> 16) == 0;

  // Direct indices are code + palette size - offset and must stay <= 511.
  int max_size = 32;
  if (!p.only_palette) {
    max_size = std::min(32, 511 - all_max);
    if (max_size == 1) max_size = 0;  // a one-entry palette is not supported
  }
  std::array<int, 32> lut{};
  int n = 0, palette_max = 0, palette_count = 0;
  for (; n < max_size; ++n) {
    const int f = static_cast<int>(keyed[n] >> 16);
    if (f == 0) break;
    lut[n] = static_cast<int>(keyed[n] & 0xffff);
    palette_max = std::max(palette_max, lut[n]);
    palette_count += f;
  }
  if (n == 1) lut[n++] = 0;  // pad a one-entry palette to two

  // The palette is used only when it covers more than half of the coded values.
  int width_of = 0;
  if (palette_count > all_count / 2) {
    p.size = n;
    width_of = palette_max;
  } else {
    p.size = 0;
    width_of = all_max;
  }
  p.bits = 2;
  while ((1 << p.bits) <= width_of) ++p.bits;

  // Inverse mapping. Code 1 ("-0") is visited after code 0 and so decides the direct index of 0.
  for (int code = 0; code < 512; ++code) {
    const int mag = code >> 1;
    const int value = (code & 1) ? -mag : mag;
    p.index[value + 256] = code + p.size - p.direct_offset;
  }
  for (int i = 0; i < p.size; ++i) {
    const int mag = lut[i] >> 1;
    const int value = (lut[i] & 1) ? -mag : mag;
    p.index[value + 256] = i;
  }
  return p;
}

// What one step of the search decides.
struct GrcStep {
  std::uint16_t switched;  // the lanes that switched to the previous best configuration
  std::uint8_t best;       // the new best: the lowest lane of least cost (the codec's tie rule)
};

// One step of the search over all lanes: `rel` holds each configuration's bits minus the best's,
// `row` the estimate of the next value per lane, `change` the cost of switching; `rel` becomes
// relative to the new best. The plain form; the SSE2 forms below do the same arithmetic.
template <typename T, int Lanes>
GrcStep grc_step_scalar(LaneCosts<T, Lanes>& rel, const LaneCosts<T, Lanes>& row, T change) {
  LaneCosts<T, Lanes> next;
  std::uint16_t switched = 0;
  for (std::size_t j = 0; j < Lanes; ++j) {
    const bool sw = change < rel[j];
    next[j] = static_cast<T>((sw ? change : rel[j]) + row[j]);
    switched = static_cast<std::uint16_t>(switched | (sw ? 1u << j : 0u));
  }
  T best = next[0];
  for (std::size_t j = 1; j < Lanes; ++j) best = std::min(best, next[j]);
  std::uint8_t best_lane = Lanes;
  for (std::size_t j = 0; j < Lanes; ++j) {
    rel[j] = static_cast<T>(next[j] - best);
    if (rel[j] == 0 && best_lane == Lanes) best_lane = static_cast<std::uint8_t>(j);
  }
  return {switched, best_lane};
}

GrcStep grc_step(WeightLanes& rel, const WeightLanes& row, std::int16_t change) {
#if defined(__SSE2__)
  const __m128i chg = _mm_set1_epi16(change);
  const __m128i r0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(rel.data()));
  const __m128i r1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(rel.data() + 8));
  const __m128i sw0 = _mm_cmpgt_epi16(r0, chg);
  const __m128i sw1 = _mm_cmpgt_epi16(r1, chg);
  const __m128i n0 = _mm_add_epi16(_mm_min_epi16(r0, chg),
                                   _mm_loadu_si128(reinterpret_cast<const __m128i*>(row.data())));
  const __m128i n1 = _mm_add_epi16(_mm_min_epi16(r1, chg),
                                   _mm_loadu_si128(reinterpret_cast<const __m128i*>(row.data() + 8)));
  __m128i m = _mm_min_epi16(n0, n1);
  m = _mm_min_epi16(m, _mm_shuffle_epi32(m, _MM_SHUFFLE(1, 0, 3, 2)));
  m = _mm_min_epi16(m, _mm_shuffle_epi32(m, _MM_SHUFFLE(2, 3, 0, 1)));
  m = _mm_min_epi16(m, _mm_shufflelo_epi16(_mm_shufflehi_epi16(m, _MM_SHUFFLE(2, 3, 0, 1)), _MM_SHUFFLE(2, 3, 0, 1)));
  const __m128i d0 = _mm_sub_epi16(n0, m);
  const __m128i d1 = _mm_sub_epi16(n1, m);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(rel.data()), d0);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(rel.data() + 8), d1);
  const __m128i zero = _mm_setzero_si128();
  const auto switched = static_cast<unsigned>(_mm_movemask_epi8(_mm_packs_epi16(sw0, sw1)));
  const auto at_best = static_cast<unsigned>(
      _mm_movemask_epi8(_mm_packs_epi16(_mm_cmpeq_epi16(d0, zero), _mm_cmpeq_epi16(d1, zero))));
  return {static_cast<std::uint16_t>(switched), static_cast<std::uint8_t>(std::countr_zero(at_best))};
#else
  return grc_step_scalar<std::int16_t, kWeightLanes>(rel, row, change);
#endif
}

GrcStep grc_step(ZeroRunLanes& rel, const ZeroRunLanes& row, std::int32_t change) {
#if defined(__SSE2__)
  // SSE2 has no 32-bit min: compare and select.
  const __m128i chg = _mm_set1_epi32(change);
  const __m128i r = _mm_loadu_si128(reinterpret_cast<const __m128i*>(rel.data()));
  const __m128i sw = _mm_cmpgt_epi32(r, chg);
  const __m128i next = _mm_add_epi32(_mm_or_si128(_mm_and_si128(sw, chg), _mm_andnot_si128(sw, r)),
                                     _mm_loadu_si128(reinterpret_cast<const __m128i*>(row.data())));
  const auto min4 = [](__m128i a, __m128i b) {
    const __m128i gt = _mm_cmpgt_epi32(a, b);
    return _mm_or_si128(_mm_and_si128(gt, b), _mm_andnot_si128(gt, a));
  };
  __m128i m = min4(next, _mm_shuffle_epi32(next, _MM_SHUFFLE(1, 0, 3, 2)));
  m = min4(m, _mm_shuffle_epi32(m, _MM_SHUFFLE(2, 3, 0, 1)));
  const __m128i d = _mm_sub_epi32(next, m);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(rel.data()), d);
  const auto switched = static_cast<unsigned>(_mm_movemask_ps(_mm_castsi128_ps(sw)));
  const auto at_best = static_cast<unsigned>(_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(d, _mm_setzero_si128()))));
  return {static_cast<std::uint16_t>(switched), static_cast<std::uint8_t>(std::countr_zero(at_best))};
#else
  return grc_step_scalar<std::int32_t, kZeroRunLanes>(rel, row, change);
#endif
}

// The search over `n` values whose per-lane estimates `row(i)` gives; `existing` are the run ends
// of the weight stream (free changes for the zero runs). Writes the runs to `runs`.
template <typename Lanes, typename RowOf>
void search_grc(std::size_t n, int ncfg, RowOf row, std::span<const GrcRun> existing, CodecScratch& sc,
                std::vector<GrcRun>& runs) {
  using T = typename Lanes::value_type;
  sc.switched.resize(n);
  sc.best_before.resize(n);
  Lanes rel;
  rel.fill(static_cast<T>(kUnusedLane));
  for (int j = 0; j < ncfg; ++j) rel[static_cast<std::size_t>(j)] = 0;
  std::uint8_t best = 0;
  std::size_t existing_idx = 0;
  for (std::size_t i = 0; i < n; ++i) {
    T change = kParamChangeCost;
    if (existing_idx < existing.size() && existing[existing_idx].end == static_cast<int>(i) + 1) {
      change = 0;
      ++existing_idx;
    }
    sc.best_before[i] = best;
    const GrcStep step = grc_step(rel, row(i), change);
    sc.switched[i] = step.switched;
    best = step.best;
  }
  // Trace back from the best final configuration; a run starts where a state's predecessor differs.
  runs.clear();
  int cfg = best;
  int end = static_cast<int>(n);
  for (std::size_t i = n + 1; i-- > 0;) {
    int p = cfg;  // the predecessor of state (i, cfg)
    if (i > 0 && ((sc.switched[i - 1] >> cfg) & 1u) != 0) p = sc.best_before[i - 1];
    if (p != cfg || i == 0) {
      runs.push_back({cfg, end});
      cfg = p;
      end = static_cast<int>(i) - 1;
    }
  }
  std::reverse(runs.begin(), runs.end());
}

// The GRC search of a section's weight indices (13 configurations).
void search_weight_grc(std::span<const int> values, int uncompressed_bits, CodecScratch& sc) {
  // Estimates per distinct value, looked up per position.
  int max_value = 0;
  for (int v : values) max_value = std::max(max_value, v);
  sc.cost_rows.resize(static_cast<std::size_t>(max_value) + 1);
  for (int v = 0; v <= max_value; ++v) {
    auto& r = sc.cost_rows[static_cast<std::size_t>(v)];
    r.fill(kUnusedLane);
    for (int j = 0; j < static_cast<int>(kWeightParams.size()); ++j)
      r[static_cast<std::size_t>(j)] = weight_cost_estimate(v, j, uncompressed_bits);
  }
  search_grc<WeightLanes>(
      values.size(), static_cast<int>(kWeightParams.size()),
      [&](std::size_t i) -> const WeightLanes& { return sc.cost_rows[static_cast<std::size_t>(values[i])]; },
      {}, sc, sc.wruns);
}

// The GRC search of a section's zero runs (4 configurations: q + 1 + div bits each), with the
// weight runs' ends free.
void search_zero_run_grc(std::span<const int> runs, CodecScratch& sc) {
  ZeroRunLanes row{};
  search_grc<ZeroRunLanes>(
      runs.size(), kZeroRunLanes,
      [&](std::size_t i) -> const ZeroRunLanes& {
        for (int j = 0; j < kZeroRunLanes; ++j) row[static_cast<std::size_t>(j)] = (runs[i] >> j) + 1 + j;
        return row;
      },
      sc.wruns, sc, sc.zruns_cfg);
}

// Unary parts travel in chunks of fixed-width fields. A weight chunk always spends 12 bits on its
// first unary field, one bit per "position": a value with quotient q takes q/2 + 1 positions
// (truncated codes: one), and each position whose running quotient is still positive adds one bit
// to a second, variable-width field (so ceil(q/2) bits; truncated: one bit when q > 0). The last
// chunk of a slice is padded to the full 12 positions. Zero runs have one field per chunk, 12 bits
// wide for divisors 0-2 and 8 bits for divisor 3, one position per unit of quotient plus one, the
// last chunk padded likewise. Remainders add `div` bits per value.
constexpr int kWeightUnaryField = 12;
int zero_run_unary_field(int div) { return div < 3 ? 12 : 8; }

// Bits of one slice's weight indices under configuration `c`.
std::int64_t weight_payload_bits(std::span<const int> values, const GrcParam& c, int uncompressed_bits) {
  const auto n = static_cast<std::int64_t>(values.size());
  if (c.mode == 2) return n * uncompressed_bits;  // raw indices, no unary part
  std::int64_t positions = 0, second_field = 0;
  for (int v : values) {
    const int q = v >> c.div;
    if (c.mode == 1) {
      positions += 1;
      second_field += q > 0 ? 1 : 0;
    } else {
      positions += q / 2 + 1;
      second_field += (q + 1) / 2;
    }
  }
  return round_up(positions, kWeightUnaryField) + second_field + n * c.div;
}

// Bits of one slice's zero runs under configuration `c`.
std::int64_t zero_run_payload_bits(std::span<const int> runs, const GrcParam& c) {
  std::int64_t unary = 0;
  for (int r : runs) unary += (r >> c.div) + 1;
  return round_up(unary, zero_run_unary_field(c.div)) + static_cast<std::int64_t>(runs.size()) * c.div;
}

// Bits of one palette section: its values as weight indices and zero runs, cut into slices.
std::int64_t section_bits(std::span<const std::int16_t> buf, const Palette& p, CodecScratch& sc) {
  // Uncompressed indices are possible only with every value in the palette, or with no palette.
  int uncompressed_bits = 100;
  if (p.only_palette) {
    uncompressed_bits = 0;
    while ((1 << uncompressed_bits) < p.size) ++uncompressed_bits;
  } else if (p.size == 0) {
    uncompressed_bits = p.bits;
  }

  std::vector<int>& weights = sc.weights;
  std::vector<int>& zruns = sc.zruns;
  weights.clear();
  zruns.clear();
  std::size_t i = 0;
  while (true) {
    if (p.zero_runs) {
      int run = 0;
      // An all-zero section still codes one value, so the slice length cannot be 0.
      if (!p.only_zeros || i > 0) {
        while (i < buf.size() && buf[i] == 0) {
          ++run;
          ++i;
        }
      }
      zruns.push_back(run);
    }
    if (i == buf.size()) break;
    weights.push_back(p.index[static_cast<std::size_t>(buf[i] + 256)]);
    ++i;
  }
  const int nw = static_cast<int>(weights.size());

  search_weight_grc(weights, uncompressed_bits, sc);
  if (nw == 0) sc.wruns.clear();
  sc.zruns_cfg.clear();
  if (p.zero_runs) search_zero_run_grc(zruns, sc);
  const std::vector<GrcRun>& wruns = sc.wruns;
  const std::vector<GrcRun>& zruns_cfg = sc.zruns_cfg;

  std::int64_t bits = 0;
  int pos = 0;
  std::size_t iw = 0, iz = 0;
  bool new_palette = true;
  while (pos < nw || new_palette) {
    int end = pos + kMaxSliceValues;
    if (iw < wruns.size() && wruns[iw].end < end) end = wruns[iw].end;
    if (iz < zruns_cfg.size() && zruns_cfg[iz].end < end) end = zruns_cfg[iz].end;
    if (nw < end) end = nw;

    bits += kSliceHeaderBits;
    if (new_palette) bits += kPaletteHeaderBits + static_cast<std::int64_t>(p.size) * p.bits;
    const GrcParam wc = kWeightParams[static_cast<std::size_t>(iw < wruns.size() ? wruns[iw].cfg : 0)];
    const GrcParam zc = kZeroRunParams[static_cast<std::size_t>(iz < zruns_cfg.size() ? zruns_cfg[iz].cfg : 0)];
    bits += weight_payload_bits(
        std::span<const int>(weights).subspan(static_cast<std::size_t>(pos), static_cast<std::size_t>(end - pos)), wc,
        uncompressed_bits);
    if (p.zero_runs) {
      // The first slice codes the runs before and after each value; later ones only after.
      const std::size_t first = static_cast<std::size_t>(new_palette ? pos : pos + 1);
      bits += zero_run_payload_bits(
          std::span<const int>(zruns).subspan(first, static_cast<std::size_t>(end) + 1 - first), zc);
    }
    new_palette = false;
    if (iw < wruns.size() && wruns[iw].end == end) ++iw;
    if (iz < zruns_cfg.size() && zruns_cfg[iz].end == end) ++iz;
    pos = end;
  }
  return bits;
}

}  // namespace

std::int64_t mlw_encoded_stream_bytes(std::span<const std::int16_t> stream) {
  if (stream.empty()) return 0;
  for (std::size_t i = 0; i < stream.size(); ++i) {
    if (stream[i] < -255 || stream[i] > 255) {
      fail(fmt::format("stream[{}]", i),
           fmt::format("weight value {} outside the codec's range [-255, 255]", stream[i]));
    }
  }
  CodecScratch& sc = codec_scratch();
  palette_sections(stream, sc);
  const std::vector<int>& restarts = sc.restarts;
  std::int64_t bits = 0;
  for (std::size_t s = 0; s < restarts.size(); ++s) {
    const std::size_t begin = static_cast<std::size_t>(restarts[s]);
    const std::size_t end = s + 1 < restarts.size() ? static_cast<std::size_t>(restarts[s + 1]) : stream.size();
    const std::span<const std::int16_t> section = stream.subspan(begin, end - begin);
    bits += section_bits(section, make_palette(section), sc);
  }
  // End-of-stream marker, byte alignment, then 0xFF padding to a multiple of 16 bytes.
  return round_up(bits + kEndOfStreamBits, 128) / 8;
}

// ============================================================================================
// Reordering (weight-encoding.md, "Brick order")
// ============================================================================================

std::string_view weight_traversal_name(WeightTraversal t) {
  switch (t) {
    case WeightTraversal::DepthFirst:
      return "DepthFirst";
    case WeightTraversal::PartKernelFirst:
      return "PartKernelFirst";
    case WeightTraversal::DepthWise:
      return "DepthWise";
  }
  return "unknown";
}

WeightAccelerator weight_accelerator(std::string_view config) {
  static constexpr std::array<std::string_view, 6> kKnown = {"ethos-u55-32",  "ethos-u55-64",  "ethos-u55-128",
                                                             "ethos-u55-256", "ethos-u65-256", "ethos-u65-512"};
  WeightAccelerator a;
  if (config == "ethos-u55-32") {
    a.ofm_ublock_depth = 4;
  } else if (config == "ethos-u65-512") {
    a.cores = 2;
  } else if (std::find(kKnown.begin(), kKnown.end(), config) == kKnown.end()) {
    fail("accelerator", fmt::format("unknown accelerator config '{}'", config),
         "one of ethos-u55-32, -64, -128, -256, ethos-u65-256, -512");
  }
  return a;
}

WeightTraversal choose_traversal(WeightBlockType type, int kernel_h, int kernel_w, int ifm_depth, int ifm_bits) {
  if (type == WeightBlockType::Depthwise) return WeightTraversal::DepthWise;
  if (type == WeightBlockType::FullyConnected) return WeightTraversal::DepthFirst;
  if (kernel_h <= 0 || kernel_w <= 0 || ifm_depth <= 0) fail("shape", "kernel and IFM depth must be positive");
  if (ifm_bits != 8 && ifm_bits != 16) fail("ifm_bits", fmt::format("IFM bit depth {} is not 8 or 16", ifm_bits));
  // Pick the traversal that wastes fewer MAC slots: depth-first pads I to 32 (16 for 16-bit),
  // part-kernel-first pads I to 8 and the kernel to a multiple of 4 (2 for 16-bit).
  const bool ifm8 = ifm_bits == 8;
  const double k = static_cast<double>(kernel_h) * kernel_w;
  const double in = ifm_depth;
  const double depth_util = in / static_cast<double>(round_up(ifm_depth, ifm8 ? 32 : 16));
  const double pkf_util =
      (in / static_cast<double>(round_up(ifm_depth, 8))) *
      (k / static_cast<double>(round_up(static_cast<std::int64_t>(kernel_h) * kernel_w, ifm8 ? 4 : 2)));
  return (pkf_util >= depth_util || ifm_depth <= 8) ? WeightTraversal::PartKernelFirst : WeightTraversal::DepthFirst;
}

namespace {

void check_reorder_parameters(int ofm_depth, int kernel_h, int kernel_w, int ifm_depth, int ifm_bits,
                              int ofm_block_depth, const WeightAccelerator& accel, int dilation_h, int dilation_w) {
  if (ofm_depth <= 0 || kernel_h <= 0 || kernel_w <= 0 || ifm_depth <= 0) {
    fail("shape", fmt::format("weight shape [{}, {}, {}, {}] has a non-positive dimension", ofm_depth, kernel_h,
                              kernel_w, ifm_depth));
  }
  if (ifm_bits != 8 && ifm_bits != 16) fail("ifm_bits", fmt::format("IFM bit depth {} is not 8 or 16", ifm_bits));
  if (ofm_block_depth <= 0) fail("ofm_block_depth", "the OFM block depth must be positive");
  if (accel.ifm_ublock_depth <= 0 || accel.ofm_ublock_depth <= 0)
    fail("accelerator", "micro-block depths must be positive");
  if (dilation_h < 1 || dilation_h > 8 || dilation_w < 1 || dilation_w > 8) {
    fail("dilation", fmt::format("dilation {}x{} outside 1..8", dilation_h, dilation_w));
  }
}

// The weights of one core in a brick: channel c of the stream is OHWI channel first + c * step of `w`.
struct ChannelView {
  const std::int16_t* w = nullptr;
  int first = 0;
  int step = 1;
};

// The reorder of 7.4 into `stream` (its old contents are replaced); parameters already checked.
void reorder_into(std::vector<std::int16_t>& stream, const ChannelView& view, int ofm_depth, int kernel_h,
                  int kernel_w, int ifm_depth, WeightTraversal traversal, int ifm_bits, int ofm_block_depth,
                  const WeightAccelerator& accel, int dilation_h, int dilation_w) {
  const bool depthwise = traversal == WeightTraversal::DepthWise;
  const bool part_kernel = traversal == WeightTraversal::PartKernelFirst;
  // Sub-kernels are at most 8x8 hardware taps, i.e. floor(8 / dilation) weights each way.
  const int decomp_h = 8 / dilation_h, decomp_w = 8 / dilation_w;
  const int ifm_block_depth = (part_kernel || ifm_bits == 16) ? 16 : 32;
  const int iub = accel.ifm_ublock_depth, oub = accel.ofm_ublock_depth;

  // The length follows from the shapes alone; refuse absurd ones before allocating (a hostile
  // shape such as O = I = 1 with a huge kernel expands 2048-fold).
  std::int64_t length = 0;
  for (int ofm_block = 0; ofm_block < ofm_depth; ofm_block += ofm_block_depth) {
    const std::int64_t ofm_block_len = std::min(ofm_block_depth, ofm_depth - ofm_block);
    const std::int64_t ofm_part = (ofm_block_len + oub - 1) / oub * oub;
    std::int64_t elements = 0;
    for (int sy = 0; sy < kernel_h; sy += decomp_h) {
      for (int sx = 0; sx < kernel_w; sx += decomp_w) {
        const std::int64_t e =
            static_cast<std::int64_t>(std::min(kernel_h - sy, decomp_h)) * std::min(kernel_w - sx, decomp_w);
        elements += part_kernel ? round_up(e, ifm_bits == 16 ? 2 : 4) : depthwise ? round_up(e, 4) : e;
      }
    }
    if (depthwise) {
      length += elements * ofm_part;
    } else {
      for (int ifm_block = 0; ifm_block < ifm_depth; ifm_block += ifm_block_depth) {
        const std::int64_t len = part_kernel ? std::min(ifm_block_depth, ifm_depth - ifm_block) : ifm_block_depth;
        length += elements * ofm_part * ((len + iub - 1) / iub * iub);
      }
    }
    if (length > kMaxStreamValues) {
      fail("shape", fmt::format("the reordered weight stream would exceed {} values", kMaxStreamValues),
           "check the weight shape, block depth and micro-block depths");
    }
  }

  const std::size_t row = static_cast<std::size_t>(kernel_h) * static_cast<std::size_t>(kernel_w) *
                          static_cast<std::size_t>(ifm_depth);
  auto at = [&](int o, int y, int x, int i) -> std::int16_t {
    const std::size_t channel = static_cast<std::size_t>(view.first) + static_cast<std::size_t>(o) * static_cast<std::size_t>(view.step);
    return view.w[channel * row +
                  (static_cast<std::size_t>(y) * static_cast<std::size_t>(kernel_w) + static_cast<std::size_t>(x)) *
                      static_cast<std::size_t>(ifm_depth) +
                  static_cast<std::size_t>(i)];
  };

  stream.resize(static_cast<std::size_t>(length));
  std::size_t pos = 0;
  for (int ofm_block = 0; ofm_block < ofm_depth; ofm_block += ofm_block_depth) {
    const int ofm_block_len = std::min(ofm_block_depth, ofm_depth - ofm_block);
    for (int ifm_block = 0; ifm_block < (depthwise ? 1 : ifm_depth); ifm_block += ifm_block_depth) {
      // Depth-first always feeds a whole IFM block; part-kernel-first only up to I.
      const int ifm_block_len = depthwise     ? iub
                                : part_kernel ? std::min(ifm_block_depth, ifm_depth - ifm_block)
                                              : ifm_block_depth;
      for (int sy = 0; sy < kernel_h; sy += decomp_h) {
        const int sub_h = std::min(kernel_h - sy, decomp_h);
        for (int sx = 0; sx < kernel_w; sx += decomp_w) {
          const int sub_w = std::min(kernel_w - sx, decomp_w);
          int elements = sub_w * sub_h;
          if (part_kernel) {
            elements = static_cast<int>(round_up(elements, ifm_bits == 16 ? 2 : 4));
          } else if (depthwise) {
            elements = static_cast<int>(round_up(elements, 4));
          }
          const int outer_len = part_kernel ? ifm_block_len : 1;
          const int inner_len = part_kernel ? 1 : ifm_block_len;
          for (int ub_outer = 0; ub_outer < outer_len; ub_outer += iub) {
            for (int ofm_ub = 0; ofm_ub < ofm_block_len; ofm_ub += oub) {
              for (int e = 0; e < elements; ++e) {
                const int kx = e % sub_w, ky = e / sub_w;
                for (int ub_inner = 0; ub_inner < inner_len; ub_inner += iub) {
                  for (int oz = 0; oz < oub; ++oz) {
                    for (int iz = 0; iz < (depthwise ? 1 : iub); ++iz) {
                      const int ifm_z = ifm_block + ub_inner + ub_outer + iz;
                      const int ofm_z = ofm_block + ofm_ub + oz;
                      stream[pos++] = (ifm_z >= ifm_depth || ofm_z >= ofm_depth || ky >= sub_h)
                                          ? std::int16_t{0}
                                          : at(ofm_z, sy + ky, sx + kx, ifm_z);
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  NPUMAP_ASSERT(static_cast<std::int64_t>(pos) == length);
}

}  // namespace

std::vector<std::int16_t> reorder_weight_stream(std::span<const std::int16_t> ohwi, int ofm_depth, int kernel_h,
                                                int kernel_w, int ifm_depth, WeightTraversal traversal, int ifm_bits,
                                                int ofm_block_depth, const WeightAccelerator& accel, int dilation_h,
                                                int dilation_w) {
  check_reorder_parameters(ofm_depth, kernel_h, kernel_w, ifm_depth, ifm_bits, ofm_block_depth, accel, dilation_h,
                           dilation_w);
  if (static_cast<std::int64_t>(ohwi.size()) !=
      static_cast<std::int64_t>(ofm_depth) * kernel_h * kernel_w * ifm_depth) {
    fail("values", fmt::format("{} values for OHWI shape [{}, {}, {}, {}]", ohwi.size(), ofm_depth, kernel_h, kernel_w,
                               ifm_depth));
  }
  std::vector<std::int16_t> stream;
  reorder_into(stream, ChannelView{ohwi.data(), 0, 1}, ofm_depth, kernel_h, kernel_w, ifm_depth, traversal, ifm_bits,
               ofm_block_depth, accel, dilation_h, dilation_w);
  return stream;
}

// ============================================================================================
// Whole tensor (weight-encoding.md, "When Vela encodes" and "Compression scale")
// ============================================================================================

namespace {

void check_traversal(WeightBlockType type, WeightTraversal traversal) {
  switch (type) {
    case WeightBlockType::Depthwise:
      if (traversal != WeightTraversal::DepthWise) fail("traversal", "depthwise weights need the DepthWise traversal");
      break;
    case WeightBlockType::FullyConnected:
      if (traversal != WeightTraversal::DepthFirst) fail("traversal", "fully-connected weights are DepthFirst");
      break;
    default:
      if (traversal == WeightTraversal::DepthWise)
        fail("traversal", "the DepthWise traversal is for depthwise weights only");
  }
}

}  // namespace

WeightEncoder::WeightEncoder(const WeightEncodingInput& in)
    : o_(in.ofm_depth),
      kh_(in.kernel_h),
      kw_(in.kernel_w),
      ci_(in.ifm_depth),
      type_(in.block_type),
      ifm_bits_(in.ifm_bits),
      accel_(in.accelerator),
      dilation_h_(in.dilation_h),
      dilation_w_(in.dilation_w) {
  const int o = o_, kh = kh_, kw = kw_, ci = ci_;
  if (o <= 0 || kh <= 0 || kw <= 0 || ci <= 0) {
    fail("shape", fmt::format("weight shape OHWI [{}, {}, {}, {}] has a non-positive dimension", o, kh, kw, ci));
  }
  const std::int64_t count = static_cast<std::int64_t>(o) * kh * kw * ci;
  if (static_cast<std::int64_t>(in.values.size()) != count) {
    fail("values", fmt::format("{} values for OHWI shape [{}, {}, {}, {}] ({} expected)", in.values.size(), o, kh, kw,
                               ci, count));
  }
  if (!in.zero_points.empty() && in.zero_points.size() != 1 && in.zero_points.size() != static_cast<std::size_t>(o)) {
    fail("zero_points", fmt::format("{} zero points for {} output channels", in.zero_points.size(), o),
         "give none, one, or one per output channel");
  }
  if (in.accelerator.cores < 1 || in.accelerator.cores > 16) fail("accelerator.cores", "core count outside 1..16");
  if (type_ == WeightBlockType::Depthwise && ci != 1)
    fail("shape", "depthwise weights must have I = 1 (Vela's [kh, kw, 1, C])");
  // A block depth of 8 stands in for the variants' checks of everything but the block depth.
  check_reorder_parameters(o, kh, kw, ci, ifm_bits_, 8, accel_, dilation_h_, dilation_w_);

  // Zero-point subtraction (per output channel when given per channel), and the transpose conv flip.
  w_.resize(static_cast<std::size_t>(count));
  const std::int64_t per_o = static_cast<std::int64_t>(kh) * kw * ci;
  for (int oc = 0; oc < o; ++oc) {
    const std::int64_t zp = in.zero_points.empty()       ? 0
                            : in.zero_points.size() == 1 ? in.zero_points[0]
                                                         : in.zero_points[static_cast<std::size_t>(oc)];
    for (int y = 0; y < kh; ++y) {
      for (int x = 0; x < kw; ++x) {
        const int sy = type_ == WeightBlockType::TransposeConv ? kh - 1 - y : y;
        const int sx = type_ == WeightBlockType::TransposeConv ? kw - 1 - x : x;
        for (int i = 0; i < ci; ++i) {
          const std::size_t src =
              static_cast<std::size_t>(oc * per_o + (static_cast<std::int64_t>(sy) * kw + sx) * ci + i);
          const std::size_t dst =
              static_cast<std::size_t>(oc * per_o + (static_cast<std::int64_t>(y) * kw + x) * ci + i);
          const std::int64_t v = static_cast<std::int64_t>(in.values[src]) - zp;
          if (v < -255 || v > 255) {
            fail(fmt::format("values[{}]", src),
                 fmt::format("weight {} minus zero point {} = {} is outside [-255, 255]", in.values[src], zp, v));
          }
          w_[dst] = static_cast<std::int16_t>(v);
        }
      }
    }
  }
}

WeightVariant WeightEncoder::canonical(const WeightVariant& v) const {
  if (v.block_depth <= 0) fail("ofm_block_depth", "the OFM block depth must be positive");
  WeightVariant c = v;
  // A block at least as deep as the tensor is the whole depth: one OFM block, one brick.
  c.block_depth = std::min(v.block_depth, o_);
  c.streamed = v.streamed && c.block_depth < o_;
  if (c.streamed || c.block_depth == o_) return c;
  // One brick whose stream does not depend on the block depth: when nothing of the reorder
  // (7.4) sits between the OFM-block loop and the OFM micro-block loop (one IFM block, one
  // sub-kernel, one part-kernel-first IFM micro-block) and every core's block depth is a whole
  // number of micro-blocks, the stream is the micro-blocks in channel order whatever the block
  // depth, so the whole-depth block stands for it.
  const bool depthwise = c.traversal == WeightTraversal::DepthWise;
  const bool part_kernel = c.traversal == WeightTraversal::PartKernelFirst;
  const int ifm_block_depth = (part_kernel || ifm_bits_ == 16) ? 16 : 32;
  const bool one_ifm_block = depthwise || ci_ <= ifm_block_depth;
  const bool one_outer_ublock = !part_kernel || ci_ <= accel_.ifm_ublock_depth;
  const bool one_sub_kernel = kh_ <= 8 / dilation_h_ && kw_ <= 8 / dilation_w_;
  bool whole_ublocks = true;
  const int ncores = accel_.cores;
  for (int core = 0; core < std::min(ncores, o_); ++core) {
    const int depth = (c.block_depth + ncores - 1 - core) / ncores;
    whole_ublocks = whole_ublocks && depth % accel_.ofm_ublock_depth == 0;
  }
  if (one_ifm_block && one_outer_ublock && one_sub_kernel && whole_ublocks) c.block_depth = o_;
  return c;
}

WeightEncoding WeightEncoder::encode(const WeightVariant& variant) const {
  check_traversal(type_, variant.traversal);
  if (variant.block_depth <= 0) fail("ofm_block_depth", "the OFM block depth must be positive");
  return encode_bricks(variant.traversal, variant.block_depth, variant.streamed ? variant.block_depth : 0);
}

WeightEncoding WeightEncoder::encode_bricks(WeightTraversal traversal, int ofm_block_depth, int depth_step) const {
  if (ofm_block_depth <= 0) fail("ofm_block_depth", "the OFM block depth must be positive");
  if (depth_step < 0) fail("depth_step", "the depth step must be positive (or 0 for the whole depth)");
  check_traversal(type_, traversal);
  const int o = o_;
  const std::int64_t per_o = static_cast<std::int64_t>(kh_) * kw_ * ci_;
  WeightEncoding out;
  out.traversal = traversal;
  const int step = depth_step == 0 ? o : depth_step;
  const int ncores = accel_.cores;
  out.elements_in_brick = per_o * std::min(o, step);
  thread_local std::vector<std::int16_t> stream;
  for (int first = 0; first < o; first += step) {
    EncodedBrick brick;
    brick.first_channel = first;
    brick.channels = std::min(step, o - first);
    // One sub-stream per core: brick channels core, core + ncores, ...; idle cores emit nothing.
    for (int core = 0; core < std::min(ncores, o); ++core) {
      const int block_depth = (ofm_block_depth + ncores - 1 - core) / ncores;
      const int core_o = brick.channels > core ? (brick.channels - core + ncores - 1) / ncores : 0;
      std::int64_t bytes = 0, reordered = 0;
      if (block_depth != 0 && core_o > 0) {
        reorder_into(stream, ChannelView{w_.data(), first + core, ncores}, core_o, kh_, kw_, ci_, traversal, ifm_bits_,
                     block_depth, accel_, dilation_h_, dilation_w_);
        reordered = static_cast<std::int64_t>(stream.size());
        bytes = mlw_encoded_stream_bytes(stream);
      }
      brick.core_bytes.push_back(bytes);
      brick.core_reordered.push_back(reordered);
      brick.bytes += bytes;
      out.reordered_values += reordered;
    }
    brick.scale = static_cast<double>(brick.bytes) / static_cast<double>(out.elements_in_brick);
    out.total_bytes += brick.bytes;
    out.worst_scale = std::max(out.worst_scale, brick.scale);
    out.mean_scale += brick.scale;
    out.bricks.push_back(std::move(brick));
  }
  out.mean_scale /= static_cast<double>(out.bricks.size());
  return out;
}

WeightEncoding encode_weights(const WeightEncodingInput& in) {
  if (in.ofm_block_depth <= 0) fail("ofm_block_depth", "the OFM block depth must be positive");
  if (in.depth_step < 0) fail("depth_step", "the depth step must be positive (or 0 for the whole depth)");
  check_traversal(in.block_type, in.traversal);
  const WeightEncoder encoder(in);
  return encoder.encode_bricks(in.traversal, in.ofm_block_depth, in.depth_step);
}

BiasScaleSize packed_bias_scale_size(int ofm_depth, int cores, int depth_step) {
  if (ofm_depth <= 0) fail("ofm_depth", "the OFM depth must be positive");
  if (cores < 1 || cores > 16) fail("cores", "core count outside 1..16");
  if (depth_step < 0) fail("depth_step", "the depth step must be positive (or 0 for the whole depth)");
  return workloads::packed_bias_scale_size(ofm_depth, cores, depth_step);
}

// ============================================================================================
// TFLite operators
// ============================================================================================

WeightEncodingInput operator_weight_input(const Model& model, int subgraph, int op_index,
                                          const OperatorWeightOptions& options) {
  const std::string where = fmt::format("subgraphs[{}].operators[{}]", subgraph, op_index);
  auto bad = [&](const std::string& message) -> void { throw common::UserError({model.name, 0, 0}, where, message); };
  if (subgraph < 0 || static_cast<std::size_t>(subgraph) >= model.subgraphs.size()) {
    throw common::UserError({model.name, 0, 0}, fmt::format("subgraphs[{}]", subgraph), "subgraph index out of range");
  }
  const Subgraph& sg = model.subgraphs[static_cast<std::size_t>(subgraph)];
  if (op_index < 0 || static_cast<std::size_t>(op_index) >= sg.operators.size()) bad("operator index out of range");
  const Operator& op = sg.operators[static_cast<std::size_t>(op_index)];
  auto tensor = [&](std::size_t input, const char* role) -> const Tensor& {
    if (input >= op.inputs.size() || op.inputs[input] < 0 ||
        static_cast<std::size_t>(op.inputs[input]) >= sg.tensors.size()) {
      bad(fmt::format("missing {} input", role));
    }
    return sg.tensors[static_cast<std::size_t>(op.inputs[input])];
  };

  const bool transpose = op.code == BuiltinOperator::TRANSPOSE_CONV;
  if (op.code != BuiltinOperator::CONV_2D && op.code != BuiltinOperator::DEPTHWISE_CONV_2D && !transpose &&
      op.code != BuiltinOperator::FULLY_CONNECTED) {
    bad(fmt::format("{} has no encoded weights", operator_name(op.code)));
  }
  // TRANSPOSE_CONV's inputs are (output shape, weights, IFM[, bias]).
  const Tensor& ifm = tensor(transpose ? 2 : 0, "IFM");
  const Tensor& wt = tensor(1, "weight");
  if (const std::int64_t n = wt.element_count(); n > kMaxWeightElements) {
    // Checked before the 32-bit working copy (4 bytes per weight) and the reordered streams are allocated.
    throw common::UserError({model.name, 0, 0}, where + ".inputs[1]",
                            fmt::format("the weight tensor has {} elements, over the {} a weight tensor may have "
                                        "(256 MiB as 32-bit values)",
                                        n, kMaxWeightElements),
                            "is the model corrupt? real layers have under 8 million weights");
  }
  const std::span<const std::uint8_t> data = model.tensor_data(wt);
  if (data.empty()) bad("the weights are not constant");
  const int bits = tensor_type_bits(wt.type);
  if (bits != 8 || (wt.type != TensorType::INT8 && wt.type != TensorType::UINT8)) {
    bad(fmt::format("weights of type {} cannot be encoded (int8 or uint8 only)", tensor_type_name(wt.type)));
  }
  if (static_cast<std::int64_t>(data.size()) != wt.element_count()) bad("weight buffer size does not match its shape");
  const int ifm_bits = tensor_type_bits(ifm.type);
  if (ifm_bits != 8 && ifm_bits != 16) bad(fmt::format("IFM type {} is not 8- or 16-bit", tensor_type_name(ifm.type)));

  WeightEncodingInput in;
  in.ifm_bits = ifm_bits;
  in.ofm_block_depth = options.ofm_block_depth;
  in.depth_step = options.depth_step;
  in.accelerator = options.accelerator;
  in.zero_points = wt.quantization.zero_point;
  const bool is_signed = wt.type == TensorType::INT8;
  in.values.resize(data.size());
  for (std::size_t i = 0; i < data.size(); ++i) {
    in.values[i] = is_signed ? static_cast<std::int32_t>(static_cast<std::int8_t>(data[i])) : data[i];
  }
  const std::vector<std::int32_t>& s = wt.shape;
  // The IFM's last four dimensions, padded with leading 1s (N, H, W, C).
  std::vector<std::int32_t> ifm4(
      ifm.shape.end() - static_cast<std::ptrdiff_t>(std::min<std::size_t>(ifm.shape.size(), 4)), ifm.shape.end());
  while (ifm4.size() < 4) ifm4.insert(ifm4.begin(), 1);

  if (op.code == BuiltinOperator::FULLY_CONNECTED) {
    if (s.size() != 2) bad("FULLY_CONNECTED weights must be 2-D [O, I]");
    in.ofm_depth = s[0];
    in.ifm_depth = s[1];
    in.block_type = WeightBlockType::FullyConnected;
  } else if (op.code == BuiltinOperator::DEPTHWISE_CONV_2D) {
    if (s.size() != 4 || s[0] != 1) bad("DEPTHWISE_CONV_2D weights must be [1, H, W, C*M]");
    const int channels = s[3];
    const int ifm_c = ifm4[3];
    const auto* o = std::get_if<DepthwiseConv2DOptions>(&op.options);
    const int mult = (o && o->depth_multiplier > 0) ? o->depth_multiplier : (ifm_c > 0 ? channels / ifm_c : 1);
    in.kernel_h = s[1];
    in.kernel_w = s[2];
    in.ofm_depth = channels;
    if (o) {
      in.dilation_h = o->dilation_h;
      in.dilation_w = o->dilation_w;
    }
    // [1, H, W, C] read as OHWI [1, H, W, C] must become O = C, I = 1: transpose.
    std::vector<std::int32_t> t(in.values.size());
    for (int y = 0; y < s[1]; ++y) {
      for (int x = 0; x < s[2]; ++x) {
        for (int c = 0; c < channels; ++c) {
          t[static_cast<std::size_t>((c * s[1] + y) * s[2] + x)] =
              in.values[static_cast<std::size_t>((y * s[2] + x) * channels + c)];
        }
      }
    }
    in.values = std::move(t);
    in.ifm_depth = 1;
    if (mult > 1 && ifm_c == 1) {
      in.block_type = WeightBlockType::Conv;  // depth multiplier M on one channel: a conv, HWIO [kh, kw, 1, M]
    } else {
      in.block_type = WeightBlockType::Depthwise;
    }
  } else {
    if (s.size() != 4) bad("convolution weights must be 4-D OHWI");
    in.ofm_depth = s[0];
    in.kernel_h = s[1];
    in.kernel_w = s[2];
    in.ifm_depth = s[3];
    in.block_type = transpose ? WeightBlockType::TransposeConv : WeightBlockType::Conv;
    if (const auto* o = std::get_if<Conv2DOptions>(&op.options)) {
      in.dilation_h = o->dilation_h;
      in.dilation_w = o->dilation_w;
    }
    // A 1x1 conv on a 1x1 IFM runs as a fully-connected layer (lowering/convolution.md).
    if (op.code == BuiltinOperator::CONV_2D && in.kernel_h == 1 && in.kernel_w == 1 && ifm4[1] == 1 && ifm4[2] == 1) {
      in.block_type = WeightBlockType::FullyConnected;
    }
  }

  // First-layer stride-2 rewrite (lowering/graph-rewrites.md): op 0, a conv (a DW with a multiplier
  // too) with stride_w 2 on an even-width IFM of depth <= 4 and kernel width >= 2 folds pixel pairs
  // into channels: width padded to even with the zero point, then [kh, kw'/2, 2I, O].
  if (options.first_layer_rewrite && op_index == 0 && in.block_type == WeightBlockType::Conv) {
    int stride_w = 0;
    if (const auto* o = std::get_if<Conv2DOptions>(&op.options)) stride_w = o->stride_w;
    if (const auto* o = std::get_if<DepthwiseConv2DOptions>(&op.options)) stride_w = o->stride_w;
    if (stride_w == 2 && ifm4[3] <= 4 && ifm4[2] % 2 == 0 && in.kernel_w >= 2) {
      const int kw2 = (in.kernel_w + 1) / 2;
      const int ci2 = in.ifm_depth * 2;
      std::vector<std::int32_t> t(static_cast<std::size_t>(in.ofm_depth) * in.kernel_h * kw2 * ci2);
      for (int oc = 0; oc < in.ofm_depth; ++oc) {
        const std::int64_t zp = in.zero_points.empty()       ? 0
                                : in.zero_points.size() == 1 ? in.zero_points[0]
                                                             : in.zero_points[static_cast<std::size_t>(oc)];
        for (int y = 0; y < in.kernel_h; ++y) {
          for (int x = 0; x < 2 * kw2; ++x) {
            for (int i = 0; i < in.ifm_depth; ++i) {
              const std::int32_t v = x < in.kernel_w
                                         ? in.values[static_cast<std::size_t>(
                                               ((oc * in.kernel_h + y) * in.kernel_w + x) * in.ifm_depth + i)]
                                         : static_cast<std::int32_t>(zp);
              t[static_cast<std::size_t>(((oc * in.kernel_h + y) * kw2 + x / 2) * ci2 + (x % 2) * in.ifm_depth + i)] =
                  v;
            }
          }
        }
      }
      in.values = std::move(t);
      in.kernel_w = kw2;
      in.ifm_depth = ci2;
    }
  }
  in.traversal = choose_traversal(in.block_type, in.kernel_h, in.kernel_w, in.ifm_depth, in.ifm_bits);
  if (in.block_type == WeightBlockType::FullyConnected) in.traversal = WeightTraversal::DepthFirst;
  return in;
}

WeightEncoding encode_operator_weights(const Model& model, int subgraph, int op_index,
                                       const OperatorWeightOptions& options) {
  return encode_weights(operator_weight_input(model, subgraph, op_index, options));
}

}  // namespace npumap::tflite
