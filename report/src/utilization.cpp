#include "utilization.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

namespace lbo::report {

namespace {

// "local:1" → "local", "rank3:0" → "rank3".
std::string group_of(const std::string& worker) { return worker.substr(0, worker.find(':')); }

}  // namespace

Utilization utilization(const History& history, bool running) {
  Utilization use;
  const std::size_t n = history.allocations.size();
  for (const Allocation& a : history.allocations) {
    const double length = std::max(0.0, a.last_seen - a.started);
    use.allocation_end.push_back(std::max(a.last_seen, a.started));
    use.wall_s += length;
    use.available_s += a.slots * length;
  }
  use.allocation_busy_s.assign(n, 0.0);
  std::map<std::string, double> busy;
  std::map<std::string, std::vector<std::set<std::string>>> slots_seen;  // per group and allocation
  for (const Attempt& a : history.attempts) {
    if (a.start <= 0 || a.allocation >= n) continue;
    const Allocation& in = history.allocations[a.allocation];
    double end = a.end;
    if (end <= 0) end = running && a.allocation + 1 == n ? history.last_activity : in.last_seen;
    const double time = std::max(0.0, std::min(end, use.allocation_end[a.allocation]) - std::max(a.start, in.started));
    const std::string group = group_of(a.worker);
    use.busy_s += time;
    use.allocation_busy_s[a.allocation] += time;
    busy[group] += time;
    auto& seen = slots_seen[group];
    if (seen.empty()) seen.resize(n);
    seen[a.allocation].insert(a.worker);
  }
  for (const auto& [group, seen] : slots_seen) {
    SlotGroupUse g{group, 0, busy[group], 0};
    for (std::size_t i = 0; i < n; ++i) {
      g.slots = std::max(g.slots, static_cast<int>(seen[i].size()));
      g.available_s += static_cast<double>(seen[i].size()) * (use.allocation_end[i] - history.allocations[i].started);
    }
    use.groups.push_back(g);
  }
  return use;
}

nlohmann::json utilization_json(const Utilization& use) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const SlotGroupUse& g : use.groups) {
    ranks.push_back({{"rank", g.group}, {"slots", g.slots}, {"busy", g.busy_s}, {"available", g.available_s}});
  }
  return {{"busy", use.busy_s},
          {"available", use.available_s},
          {"share", use.available_s > 0 ? nlohmann::json(use.busy_s / use.available_s) : nlohmann::json()},
          {"wall", use.wall_s},
          {"ranks", std::move(ranks)}};
}

}  // namespace lbo::report
