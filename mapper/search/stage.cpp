// The per-layer stage.
//
// Flow: make_layer_space() for every layer -> one Job per (layer, template) -> jobs sorted by their
// number of candidates, longest first, and run with tbb::parallel_for inside a task arena of
// `threads` workers, each writing only its own pre-sized result slot -> per layer, job results are
// concatenated in template order and Pareto-filtered per compatibility -> keep-rate counters.
//
// Inside a job, the valid block configs are taken in chunks of `chunk_size`. Before a candidate is
// evaluated it must pass the cheap checks, each a named cause: the layer is supported at all
// (`unsupported`), the block config fits the SHRAM (`shram_capacity`: counted for the whole grid of
// §8.4 against the valid list), and the pass's own SRAM use fits (`sram_capacity`). Every chunk's
// rows are merged into the job's running Pareto front per compatibility right away, so memory stays
// proportional to the front, not the mapspace. A stop request (time limit, Ctrl-C) is honoured at
// chunk boundaries; candidates not reached are counted under `interrupted`.
//
// Determinism: a row's position in every table is fixed by (template index, block-config index),
// the canonical key of a pmapping, and the Pareto kernel breaks ties by position. Nothing depends on
// which thread ran what, or when.

#include "mapper/search/stage.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "common/user_error.hpp"
#include "mapper/search/layout_dominance.hpp"
#include "mapper/search/pareto.hpp"
#include "model/evaluate.hpp"

namespace npumap::search {
namespace {

using CompatKey = std::vector<TensorCompat>;

/// Filters `rows` to its Pareto front in place (order kept).
void prune(std::vector<PmappingRow>& rows, const std::vector<Column>& cols, ParetoWorkspace& ws,
           std::vector<std::uint32_t>& survivors, std::vector<double>& table) {
  // The table only grows: pareto_front reads the first rows * cols values, which are all written
  // here, so zero-filling on every resize would be wasted.
  const std::size_t nc = cols.size();
  if (table.size() < rows.size() * nc) table.resize(rows.size() * nc);
  for (std::size_t c = 0; c < nc; ++c) {
    const Column col = cols[c];
    for (std::size_t r = 0; r < rows.size(); ++r) table[r * nc + c] = rows[r].value(col);
  }
  pareto_front(table.data(), rows.size(), nc, ws, survivors);
  for (std::size_t i = 0; i < survivors.size(); ++i) rows[i] = rows[survivors[i]];
  rows.resize(survivors.size());
}

/// SRAM held by the pass's own whole feature maps: the first input, any other input, the output.
/// A tensor that becomes a rolling buffer is the join's business, so callers leave it out.
struct FmSram {
  std::int64_t first_input = 0;
  std::int64_t other_inputs = 0;
  std::int64_t output = 0;
};

FmSram own_fm_sram(const arch::Arch& arch, const workloads::Workload& w, int layer, const Template& t) {
  const auto& l = w.layers[static_cast<std::size_t>(layer)];
  const bool arena_is_sram = arch.feature_map_storage == arch.fast_storage;
  const auto bytes = [&](int tensor, const FmChoice& c) -> std::int64_t {
    if (!(c.residence == Residence::Sram || arena_is_sram)) return 0;
    const auto& info = w.tensors[static_cast<std::size_t>(tensor)];
    if (info.is_constant) return 0;  // read in place from permanent storage
    return fm_storage_bytes(info.shape, workloads::data_type_bytes(info.dtype), c.layout);
  };
  FmSram out;
  out.first_input = bytes(l.inputs[0], t.inputs[0]);
  for (std::size_t i = 1; i < l.inputs.size(); ++i) {
    // A tensor read twice (x + x) is stored once.
    const auto first = l.inputs.begin();
    if (std::find(first, first + static_cast<std::ptrdiff_t>(i), l.inputs[i]) == first + static_cast<std::ptrdiff_t>(i)) {
      out.other_inputs += bytes(l.inputs[i], t.inputs[i]);
    }
  }
  out.output = bytes(l.output, t.output);
  return out;
}

bool operator==(const FmSram& a, const FmSram& b) {
  return a.first_input == b.first_input && a.other_inputs == b.other_inputs && a.output == b.output;
}

/// A layer as the per-layer stage sees it: its mapspace and, per template, its own feature maps' SRAM.
struct StageInput {
  LayerSpace space;
  std::vector<FmSram> fm;
};

StageInput make_stage_input(const arch::Arch& arch, const workloads::Workload& w, int layer, const SpaceOptions& options) {
  StageInput in;
  in.space = make_layer_space(arch, w, layer, options);
  for (const Template& t : in.space.templates) in.fm.push_back(own_fm_sram(arch, w, layer, t));
  return in;
}

/// Everything the stage reads of a layer is equal (the layer index itself is not read), the
/// weights' encoded sizes per variant included: two layers of one shape whose weights encode to
/// other sizes (real weights: person_detect's depthwise convolutions 8, 10, 11) cost otherwise.
bool same_stage_input(const StageInput& a, const StageInput& b) {
  const LayerSpace& x = a.space;
  const LayerSpace& y = b.space;
  return x.num_inputs == y.num_inputs && x.cpu == y.cpu && x.batch_repeat == y.batch_repeat &&
         x.input_constant == y.input_constant &&
         x.block_config_grid == y.block_config_grid && x.unsupported == y.unsupported && x.base == y.base &&
         x.block_configs == y.block_configs && x.templates == y.templates && x.weight_variants == y.weight_variants &&
         a.fm == b.fm;
}

/// One job: a layer (of the stage computed) and one of its templates. Its counters are
/// StageResult::counters at its index in the list of jobs.
struct Job {
  int layer = -1;
  std::uint32_t template_index = 0;
};

struct JobOutput {
  std::map<CompatKey, std::vector<PmappingRow>> groups;
  bool stopped = false;
  /// The least SRAM any candidate of the job needs by itself (-1: no candidate was considered).
  std::int64_t min_sram_bytes = -1;
};

void note_sram_need(JobOutput& out, std::int64_t bytes) {
  if (out.min_sram_bytes < 0 || bytes < out.min_sram_bytes) out.min_sram_bytes = bytes;
}

/// A CPU operator's job: one pmapping that costs the NPU nothing, with every feature map in the
/// arena in linear layout; it exists only if those feature maps fit the SRAM (when the arena is SRAM).
JobOutput run_cpu_job(const arch::Arch& arch, const LayerSpace& space, const FmSram& fm, std::uint32_t template_index,
                      KeepCounters& k, StageProgress* progress) {
  JobOutput out;
  k.apply(Cause::ShramCapacity, 1, 0);
  note_sram_need(out, fm.first_input + fm.other_inputs + fm.output);
  const bool fits = out.min_sram_bytes <= arch.sram_capacity_bytes;
  k.apply(Cause::SramCapacity, 1, fits ? 0 : 1);
  k.apply(Cause::Interrupted, 1, 0);
  k.valid = fits ? 1 : 0;
  k.evaluated = k.valid;
  if (fits) {
    PmappingRow row;
    row.template_index = template_index;
    row.candidate = 0;
    const CompatKey key(static_cast<std::size_t>(space.num_inputs) + 1, TensorCompat{Residence::Arena, Layout::Linear, 0});
    out.groups[key].push_back(row);
  }
  if (progress != nullptr) progress->evaluated.fetch_add(k.evaluated, std::memory_order_relaxed);
  return out;
}

/// A worker thread's scratch memory for Pareto filtering, reused by every job it runs.
struct PruneScratch {
  ParetoWorkspace ws;
  std::vector<std::uint32_t> survivors;
  std::vector<double> table;
};

JobOutput run_job(const arch::Arch& arch, const LayerSpace& space, const FmSram& fm, const Job& job, KeepCounters& k,
                  const StageOptions& options, PruneScratch& scratch, StageProgress* progress) {
  JobOutput out;
  const Template& tpl = space.templates[job.template_index];
  const std::uint64_t grid = space.block_config_grid;
  k.total = grid;
  if (!space.unsupported.empty()) {
    k.apply(Cause::Unsupported, grid, grid);
    return out;
  }
  k.apply(Cause::Unsupported, grid, 0);
  if (space.cpu) return run_cpu_job(arch, space, fm, job.template_index, k, progress);
  const std::uint64_t valid_configs = space.block_configs.size();
  k.apply(Cause::ShramCapacity, grid, grid - valid_configs);

  const std::vector<Column> cols = stage_columns(options.objectives);
  const std::int64_t capacity = arch.sram_capacity_bytes;
  const double repeat = space.batch_repeat;
  CompatKey base_key;
  for (int i = 0; i < space.num_inputs; ++i) base_key.push_back({tpl.inputs[i].residence, tpl.inputs[i].layout, 0});
  base_key.push_back({tpl.output.residence, tpl.output.layout, 0, static_cast<std::int8_t>(tpl.output_over_input)});
  const std::size_t out_slot = base_key.size() - 1;

  // Within a job only the rolling variants vary: a packed integer names the group, so the hot loop
  // builds no key vectors. A job has few variants, so a flat list searched linearly beats a map.
  struct VariantGroup {
    std::uint64_t variant = 0;
    std::vector<PmappingRow> rows;
    std::size_t pruned_size = 0;
  };
  std::vector<VariantGroup> groups;
  std::uint64_t sram_rejected = 0;
  std::uint64_t evaluated = 0;
  std::uint64_t interrupted = 0;
  const std::size_t n = space.block_configs.size();
  // The template's pass is built once; each candidate only sets its block config on it.
  model::Pass pass = make_template_pass(arch, space, tpl);
  // Without a weight double buffer (whose size follows the block's OFM depth) the pass's own SRAM
  // does not depend on the block config.
  const std::int64_t fixed_transient = transient_sram_bytes(pass);
  const model::PreparedPass prepared = model::prepare_pass(arch, pass);
  // A layer with encoded weight sizes reads a size per (traversal, streamed, block depth): the pass
  // is prepared once per size the job meets (prepare_pass reads the compression scale), sized up
  // front so the loop below never allocates.
  std::vector<model::PreparedPass> prepared_variant(space.weight_variants.size());
  std::vector<char> variant_ready(space.weight_variants.size(), 0);
  for (std::size_t start = 0; start < n; start += options.chunk_size) {
    const std::size_t end = std::min(n, start + options.chunk_size);
    if (options.stop.stop_requested()) {
      interrupted = n - start;
      out.stopped = true;
      break;
    }
    for (std::size_t c = start; c < end; ++c) {
      const model::BlockConfig& bc = space.block_configs[c];
      apply_block_config(pass, space, tpl, bc);
      const int wv = weight_variant_index(space, tpl, bc);
      const model::PreparedPass* prep = &prepared;
      double double_buffer_scale = 0.0;
      if (wv >= 0) {
        const auto v = static_cast<std::size_t>(wv);
        if (variant_ready[v] == 0) {
          prepared_variant[v] = model::prepare_pass(arch, pass);
          variant_ready[v] = 1;
        }
        prep = &prepared_variant[v];
        double_buffer_scale = space.weight_variants[v].worst_scale;
      }
      const std::int64_t transient = (wv >= 0 || pass.weights_double_buffer_depth)
                                         ? transient_sram_bytes(pass, double_buffer_scale)
                                         : fixed_transient;
      // The row as it is, and with each rolling-capable tensor as a rolling buffer; each variant
      // must fit the SRAM with the whole tensors it keeps.
      bool fits[2][2] = {{false, false}, {false, false}};
      bool any_fits = false;
      for (int in_roll = 0; in_roll <= (tpl.input_may_roll[0] ? 1 : 0); ++in_roll) {
        for (int out_roll = 0; out_roll <= (tpl.output_may_roll ? 1 : 0); ++out_roll) {
          const std::int64_t bytes =
              transient + (in_roll ? 0 : fm.first_input) + fm.other_inputs +
              (out_roll || tpl.output_over_input >= 0 ? 0 : fm.output);  // in place: the input's storage
          fits[in_roll][out_roll] = bytes <= capacity;
          any_fits = any_fits || fits[in_roll][out_roll];
          note_sram_need(out, bytes);
        }
      }
      if (!any_fits) {
        ++sram_rejected;
        continue;
      }
      const model::PassCost cost = model::evaluate_cost(arch, *prep, pass);
      ++evaluated;
      PmappingRow row;
      row.cycles = cost.total_cycles * repeat;
      row.offchip_bytes = cost.off_chip_bytes * repeat;
      row.energy_pj = cost.energy_pj * repeat;
      row.sram_bytes = static_cast<double>(transient);
      row.template_index = job.template_index;
      row.candidate = static_cast<std::uint32_t>(c);
      const int in_rows = tpl.input_may_roll[0] ? rolling_consumer_rows(arch, space, bc) : 0;
      for (int in_roll = 0; in_roll <= (tpl.input_may_roll[0] ? 1 : 0); ++in_roll) {
        for (int out_roll = 0; out_roll <= (tpl.output_may_roll ? 1 : 0); ++out_roll) {
          if (!fits[in_roll][out_roll]) continue;
          const std::uint64_t variant = (static_cast<std::uint64_t>(in_roll) << 48) |
                                        (static_cast<std::uint64_t>(out_roll) << 40) |
                                        (static_cast<std::uint64_t>(in_roll ? in_rows : 0) << 20) |
                                        static_cast<std::uint64_t>(out_roll ? bc.ofm_h : 0);
          auto it = std::find_if(groups.begin(), groups.end(), [&](const VariantGroup& g) { return g.variant == variant; });
          if (it == groups.end()) {
            it = groups.insert(groups.end(), VariantGroup{variant, {}, 0});
            it->rows.reserve(std::min<std::size_t>(options.chunk_size, n));  // a chunk's rows on top of the front, mostly
          }
          it->rows.push_back(row);
        }
      }
    }
    // Merge the chunk into the running fronts right away.
    for (auto& g : groups) {
      if (g.rows.size() != g.pruned_size) {
        prune(g.rows, cols, scratch.ws, scratch.survivors, scratch.table);
        g.pruned_size = g.rows.size();
      }
    }
  }
  for (VariantGroup& g : groups) {
    const std::uint64_t variant = g.variant;
    CompatKey key = base_key;
    const bool in_roll = (variant >> 48) & 1;
    const bool out_roll = (variant >> 40) & 1;
    if (in_roll) key[0] = {Residence::Rolling, Layout::Nhcwb16, static_cast<std::uint16_t>((variant >> 20) & 0xFFFFF)};
    if (out_roll) key[out_slot] = {Residence::Rolling, Layout::Nhcwb16, static_cast<std::uint16_t>(variant & 0xFFFFF)};
    // The rows were reserved for a chunk on top of the front; the job's output keeps only the
    // front (14,521 jobs of yolo-fastest_1.1_320 held 277 MB of unused capacity until the per-layer
    // merge, most of the run's peak memory and page faults).
    g.rows.shrink_to_fit();
    out.groups[key] = std::move(g.rows);
  }
  k.apply(Cause::SramCapacity, valid_configs - interrupted, sram_rejected);
  k.apply(Cause::Interrupted, valid_configs, interrupted);
  k.valid = valid_configs - sram_rejected - interrupted;
  k.evaluated = evaluated;
  if (progress != nullptr) progress->evaluated.fetch_add(evaluated, std::memory_order_relaxed);
  return out;
}

/// The stage over `inputs` (one LayerResult each), in the caller's oneTBB arena.
StageResult run_stage(const arch::Arch& arch, std::vector<StageInput>& inputs, const StageOptions& options,
                      StageProgress* progress) {
  StageResult result;
  const int num_layers = static_cast<int>(inputs.size());
  result.layers.resize(inputs.size());
  // Jobs numbered in layer then template order: a layer's are [first_counter, + its templates).
  std::vector<Job> jobs;
  for (int l = 0; l < num_layers; ++l) {
    LayerResult& lr = result.layers[static_cast<std::size_t>(l)];
    lr.space = std::move(inputs[static_cast<std::size_t>(l)].space);
    lr.first_counter = static_cast<std::uint32_t>(jobs.size());
    for (std::uint32_t t = 0; t < lr.space.templates.size(); ++t) jobs.push_back(Job{l, t});
  }
  const std::size_t num_jobs = jobs.size();
  result.num_jobs = num_jobs;
  result.counters.resize(num_jobs);
  if (progress != nullptr) progress->jobs_total.fetch_add(num_jobs);

  // Longest first: a job's cost is its number of block configs.
  std::vector<std::uint32_t> order(num_jobs);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return result.layers[static_cast<std::size_t>(jobs[a].layer)].space.block_configs.size() >
           result.layers[static_cast<std::size_t>(jobs[b].layer)].space.block_configs.size();
  });

  std::vector<JobOutput> outputs(num_jobs);
  tbb::enumerable_thread_specific<PruneScratch> scratch;
  tbb::parallel_for(
      tbb::blocked_range<std::size_t>(0, num_jobs, 1),
      [&](const tbb::blocked_range<std::size_t>& range) {
        for (std::size_t i = range.begin(); i != range.end(); ++i) {
          const std::uint32_t j = order[i];
          const Job& job = jobs[j];
          const auto l = static_cast<std::size_t>(job.layer);
          outputs[j] = run_job(arch, result.layers[l].space, inputs[l].fm[job.template_index], job, result.counters[j],
                               options, scratch.local(), progress);
          if (progress != nullptr) progress->jobs_done.fetch_add(1, std::memory_order_relaxed);
        }
      },
      tbb::simple_partitioner());

  // Per layer: concatenate job fronts in template order, Pareto per compatibility.
  const std::vector<Column> cols = stage_columns(options.objectives);
  tbb::parallel_for(0, num_layers, [&](int l) {
    LayerResult& lr = result.layers[static_cast<std::size_t>(l)];
    const std::size_t num_templates = lr.space.templates.size();
    std::map<CompatKey, std::vector<PmappingRow>> merged;
    for (std::size_t t = 0; t < num_templates; ++t) {
      JobOutput& out = outputs[lr.first_counter + t];
      if (out.min_sram_bytes >= 0 && (lr.min_sram_bytes < 0 || out.min_sram_bytes < lr.min_sram_bytes)) {
        lr.min_sram_bytes = out.min_sram_bytes;
      }
      for (auto& [key, rows] : out.groups) {
        auto& dst = merged[key];
        dst.insert(dst.end(), rows.begin(), rows.end());
      }
    }
    ParetoWorkspace ws;
    std::vector<std::uint32_t> survivors;
    std::vector<double> table;
    // A job's evaluated candidate survives if it is in at least one group's front.
    std::map<std::pair<std::uint32_t, std::uint32_t>, char> kept;
    std::vector<PmappingGroup> groups;
    for (auto& [key, rows] : merged) {
      prune(rows, cols, ws, survivors, table);
      for (const auto& r : rows) kept[{r.template_index, r.candidate}] = 1;
      groups.push_back(PmappingGroup{key, std::move(rows)});
    }
    lr.groups = std::move(groups);
    std::vector<std::uint64_t> survivors_per_job(num_templates, 0);
    for (const auto& [id, _] : kept) ++survivors_per_job[id.first];
    KeepRatesSum rates;
    for (std::size_t t = 0; t < num_templates; ++t) {
      KeepCounters& k = result.counters[lr.first_counter + t];
      k.pareto = survivors_per_job[t];
      k.apply(Cause::Dominated, k.evaluated, k.evaluated - k.pareto);
      rates.add(k);
    }
    lr.rates = rates.rates();
  });
  KeepRatesSum overall;
  for (const auto& k : result.counters) overall.add(k);
  result.overall = overall.rates();
  for (const auto& o : outputs) result.partial = result.partial || o.stopped;
  return result;
}

}  // namespace

namespace {

/// The distinct stage inputs seen so far, found by a cheap key, then compared whole.
struct Deduplicator {
  std::map<std::tuple<std::uint64_t, std::size_t, std::size_t, std::array<int, 4>>, std::vector<std::uint32_t>> buckets;
};

/// Moves the distinct inputs of `all` (in order of first appearance) into `distinct`, and appends
/// for each input the index of its distinct one to `distinct_of`; inputs equal to an earlier one are
/// dropped. With `share` false every input is its own.
void deduplicate(std::vector<StageInput>& all, std::vector<StageInput>& distinct, bool share, Deduplicator& seen,
                 std::vector<std::uint32_t>& distinct_of) {
  auto& buckets = seen.buckets;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const model::Pass& b = all[i].space.base;
    const auto key = std::make_tuple(all[i].space.block_config_grid, all[i].space.templates.size(),
                                     all[i].space.block_configs.size(), b.ofm.shape.dims);
    auto& bucket = buckets[key];
    std::uint32_t found = static_cast<std::uint32_t>(distinct.size());
    for (std::uint32_t d : share ? bucket : std::vector<std::uint32_t>{}) {
      if (same_stage_input(distinct[d], all[i])) {
        found = d;
        break;
      }
    }
    if (found == distinct.size()) {
      bucket.push_back(found);
      distinct.push_back(std::move(all[i]));
    }
    distinct_of.push_back(found);
    all[i] = StageInput();  // a copy of a distinct one: its mapspace goes now
  }
}

}  // namespace

StageResult stage_of_workload(const SharedStage& shared, std::size_t first_ref, std::size_t num_layers) {
  // Every layer gets its distinct layer's result: its space (whose templates and block configs are
  // shared), its groups (shared: a row names its template, not its layer) and its jobs' counters
  // (shared: first_counter), so a layer repeated costs a LayerResult, not its rows and jobs again.
  // The result is the one each layer computed on its own would give, only cheaper.
  const StageResult& computed = shared.stage;
  StageResult result;
  result.layers.resize(num_layers);
  KeepRatesSum overall;
  for (std::size_t l = 0; l < num_layers; ++l) {
    const LayerResult& src = computed.layers[shared.distinct_of[first_ref + l]];
    LayerResult& dst = result.layers[l];
    dst = src;
    dst.space.layer = static_cast<int>(l);
    result.num_jobs += src.space.templates.size();
    for (std::size_t t = 0; t < src.space.templates.size(); ++t) overall.add(computed.counters_of(src, t));
  }
  result.counters = computed.counters;
  result.overall = overall.rates();
  result.partial = computed.partial;
  return result;
}

StageResult run_per_layer(const arch::Arch& arch, const workloads::Workload& w, const StageOptions& options,
                          StageProgress* progress) {
  std::vector<LayerRef> refs;
  for (int l = 0; l < static_cast<int>(w.layers.size()); ++l) refs.push_back(LayerRef{&w, l});
  // Identical layers (resnet50's repeated bottlenecks, for one) are computed once.
  tbb::task_arena arena(std::max(1, options.threads));
  StageResult result;
  arena.execute([&] { result = stage_of_workload(run_shared_stage(arch, refs, options, progress), 0, refs.size()); });
  return result;
}

SharedStage run_shared_stage(const arch::Arch& arch, const std::vector<LayerRef>& layers, const StageOptions& options,
                             StageProgress* progress, bool share_identical) {
  // The layers' mapspaces are made in blocks and deduplicated block by block, so a long chain of
  // identical layers never holds more than a block of copies (each a few kilobytes).
  constexpr std::size_t kBlock = 1024;
  SharedStage shared;
  std::vector<StageInput> distinct;
  Deduplicator seen;
  std::vector<StageInput> block;
  for (std::size_t first = 0; first < layers.size(); first += kBlock) {
    block.resize(std::min(kBlock, layers.size() - first));
    tbb::parallel_for(std::size_t{0}, block.size(), [&](std::size_t i) {
      const LayerRef& ref = layers[first + i];
      block[i] = make_stage_input(arch, *ref.workload, ref.layer, options.space);
    });
    deduplicate(block, distinct, share_identical, seen, shared.distinct_of);
  }
  shared.stage = run_stage(arch, distinct, options, progress);
  return shared;
}

JoinProblem make_join_problem(const arch::Arch& arch, const workloads::Workload& w, const StageResult& stage,
                              bool allow_fusion, bool keep_all_layouts) {
  NPUMAP_ASSERT(stage.layers.size() == w.layers.size());
  JoinProblem p;
  p.arena_is_sram = arch.feature_map_storage == arch.fast_storage;
  p.sram_capacity = arch.sram_capacity_bytes;
  std::vector<int> step_of(w.layers.size(), -1);
  for (std::size_t s = 0; s < w.topological_order.size(); ++s) step_of[static_cast<std::size_t>(w.topological_order[s])] = static_cast<int>(s);
  for (std::size_t ti = 0; ti < w.tensors.size(); ++ti) {
    const auto& t = w.tensors[ti];
    JoinTensor jt;
    jt.long_lived = !p.arena_is_sram && long_lived_feature_map(arch, w, static_cast<int>(ti));
    const int elem = workloads::data_type_bytes(t.dtype);
    jt.linear_bytes = fm_storage_bytes(t.shape, elem, Layout::Linear);
    jt.nhcwb16_bytes = fm_storage_bytes(t.shape, elem, Layout::Nhcwb16);
    jt.height = static_cast<int>(t.shape.h);
    jt.width = static_cast<int>(t.shape.w);
    jt.channels = static_cast<int>(t.shape.c);
    jt.element_bytes = elem;
    // Live from the first writer to run (a concatenation has several).
    jt.producer_step = -1;
    for (int writer : t.writers) {
      const int step = step_of[static_cast<std::size_t>(writer)];
      jt.producer_step = jt.producer_step < 0 ? step : std::min(jt.producer_step, step);
    }
    for (int c : t.consumers) jt.last_consumer_step = std::max(jt.last_consumer_step, step_of[static_cast<std::size_t>(c)]);
    jt.network_output = t.is_network_output();
    jt.constant = t.is_constant;
    p.tensors.push_back(jt);
  }
  // A step shares its layer's groups; without fusion, a layer with rolling groups gets a copy of the
  // others, made once per list of groups (identical layers share theirs, and then the copy).
  std::map<const void*, SharedVector<PmappingGroup>> without_rolling;
  for (int layer : w.topological_order) {
    const auto& lr = stage.layers[static_cast<std::size_t>(layer)];
    JoinStep step;
    const auto is_rolling = [](const PmappingGroup& g) {
      return std::any_of(g.compat.begin(), g.compat.end(), [](const TensorCompat& c) { return c.residence == Residence::Rolling; });
    };
    if (allow_fusion || std::none_of(lr.groups.begin(), lr.groups.end(), is_rolling)) {
      step.groups = lr.groups;
    } else {
      auto [it, added] = without_rolling.try_emplace(lr.groups.buffer());
      if (added) {
        std::vector<PmappingGroup> kept;
        for (const auto& g : lr.groups) {
          if (!is_rolling(g)) kept.push_back(g);
        }
        it->second = std::move(kept);
      }
      step.groups = it->second;
    }
    step.inputs = w.layers[static_cast<std::size_t>(layer)].inputs;
    step.output = w.layers[static_cast<std::size_t>(layer)].output;
    p.steps.push_back(step);
  }
  if (!keep_all_layouts) drop_dominated_layouts(p);
  return p;
}

model::Pass pass_of(const arch::Arch& arch, const StageResult& stage, int layer, const PmappingRow& row) {
  const LayerSpace& space = stage.layers[static_cast<std::size_t>(layer)].space;
  return make_pass(arch, space, space.templates[row.template_index], space.block_configs[row.candidate]);
}

}  // namespace npumap::search
