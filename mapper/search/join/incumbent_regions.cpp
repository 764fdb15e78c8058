// The incumbent bound's rest sets and regions (incumbent_regions.hpp).

#include "mapper/search/join/incumbent_regions.hpp"

#include <algorithm>

namespace npumap::search::join_internal {

void UpSet::index() {
  grid.build([this](std::size_t i) { return gens[i].first; }, gens.size());
  indexed = true;
}

UpSet UpSet::shifted(double dx, double dy) const {
  UpSet out;
  out.everything = everything;
  out.gens.reserve(gens.size());
  for (const auto& [x, y] : gens) out.push(x + dx, y + dy);
  return out;
}

void UpSet::push(double x, double y) {
  if (!gens.empty() && gens.back().first == x) {
    if (y < gens.back().second) gens.back().second = y;
    while (gens.size() >= 2 && gens[gens.size() - 2].second <= gens.back().second) gens.pop_back();
    return;
  }
  if (gens.empty() || y < gens.back().second) gens.emplace_back(x, y);
}

UpSet UpSet::intersect(const UpSet& a, const UpSet& b) {
  if (a.everything) return b;
  if (b.everything) return a;
  UpSet out;
  const double inf = std::numeric_limits<double>::infinity();
  double ta = inf;
  double tb = inf;
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.gens.size() || j < b.gens.size()) {
    const double x = j == b.gens.size() || (i < a.gens.size() && a.gens[i].first <= b.gens[j].first) ? a.gens[i].first
                                                                                                    : b.gens[j].first;
    while (i < a.gens.size() && a.gens[i].first == x) ta = a.gens[i++].second;
    while (j < b.gens.size() && b.gens[j].first == x) tb = b.gens[j++].second;
    const double y = std::max(ta, tb);
    if (y < inf) out.push(x, y);
  }
  return out;
}

namespace {

/// Keeps the 2-D Pareto front of `pts`, sorted by x.
void front_2d(std::vector<Point>& pts) {
  std::sort(pts.begin(), pts.end());
  std::size_t out = 0;
  for (const Point& p : pts) {
    if (out == 0 || p.second < pts[out - 1].second) pts[out++] = p;
  }
  pts.resize(out);
}

}  // namespace

std::vector<Point> sum_bound(std::vector<Point>& here, const std::vector<Point>& after) {
  front_2d(here);
  std::vector<Point> sum;
  sum.reserve(here.size() * after.size());
  for (const Point& a : after)
    for (const Point& h : here) sum.emplace_back(a.first + h.first, a.second + h.second);
  front_2d(sum);
  if (sum.size() > kRestPoints) {
    const std::size_t run = (sum.size() + kRestPoints - 1) / kRestPoints;
    std::vector<Point> thin;
    for (std::size_t i = 0; i < sum.size(); i += run) {
      const std::size_t last = std::min(sum.size(), i + run) - 1;
      thin.emplace_back(sum[i].first, sum[last].second);  // x ascending, y descending: the run's corner
    }
    sum = std::move(thin);
  }
  return sum;
}

UpSet region_of(const std::vector<Point>& points, const UpSet& base) {
  UpSet region;
  region.everything = true;  // no completion: nothing to dominate
  for (const Point& p : points) {
    region = UpSet::intersect(region, base.shifted(-p.first, -p.second));
    if (!region.everything && region.gens.empty()) break;
  }
  return region;
}

}  // namespace npumap::search::join_internal
