#include "transfer.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lbo/jobs/objective.hpp"

namespace lbo::report {

namespace {

using nlohmann::json;

// One run's finished trials of one task in trial-id order: the objective, larger is better
// (nullopt: not successful).
using Sequence = std::vector<std::optional<double>>;

Sequence sequence_of(const json& run, int task, const jobs::Objective& objective) {
  std::vector<std::pair<std::int64_t, std::optional<double>>> finished;
  for (const json& t : run.value("trials", json::array())) {
    if (t.value("task", -1) != task) continue;
    const std::string status = t.value("status", "");
    if (status == "running" || status == "queued") continue;
    std::optional<double> value;
    if (status == "ok" && t.contains("objective") && t["objective"].is_number()) value = objective.oriented(t["objective"].get<double>());
    finished.emplace_back(t.value("id", std::int64_t{0}), value);
  }
  std::sort(finished.begin(), finished.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  Sequence out;
  for (const auto& [id, value] : finished) out.push_back(value);
  return out;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// Normalized regret after each trial of `seq` (see transfer.hpp).
std::vector<double> regrets(const Sequence& seq, double best, double gap) {
  std::vector<double> out;
  std::optional<double> so_far;
  for (const std::optional<double>& v : seq) {
    if (v && (!so_far || *v > *so_far)) so_far = v;
    if (!so_far) {
      out.push_back(1);
    } else {
      out.push_back(gap > 0 ? std::clamp((best - *so_far) / gap, 0.0, 1.0) : 0.0);
    }
  }
  return out;
}

}  // namespace

json transfer_json(const json& runs) {
  json out{{"gap", kTargetGap}, {"tasks", json::array()}, {"notes", json::array()}};
  if (!runs.is_array() || runs.empty()) return out;
  const std::string direction = runs[0]["job"].value("direction", "maximize");
  const jobs::Objective objective(direction == "minimize" ? jobs::Direction::minimize : jobs::Direction::maximize);
  std::vector<bool> compared(runs.size(), true);
  std::vector<std::string> names;  // every task, by name, in order of first appearance
  for (std::size_t r = 0; r < runs.size(); ++r) {
    if (runs[r]["job"].value("direction", "maximize") != direction) {
      compared[r] = false;
      out["notes"].push_back(runs[r].value("name", "run " + std::to_string(r + 1)) + " " +
                             runs[r]["job"].value("direction", "maximize") + "s, the first run " + direction +
                             "s: it is left out of the comparison");
      continue;
    }
    for (const json& t : runs[r]["job"].value("tasks", json::array())) {
      const std::string name = t.value("name", "");
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
  }
  for (const std::string& name : names) {
    std::vector<std::optional<Sequence>> seqs(runs.size());
    std::vector<double> pooled;
    for (std::size_t r = 0; r < runs.size(); ++r) {
      if (!compared[r]) continue;
      const json tasks = runs[r]["job"].value("tasks", json::array());
      for (std::size_t i = 0; i < tasks.size(); ++i) {
        if (tasks[i].value("name", "") != name) continue;
        seqs[r] = sequence_of(runs[r], static_cast<int>(i), objective);
        for (const auto& v : *seqs[r]) {
          if (v) pooled.push_back(*v);
        }
      }
    }
    json task{{"name", name}, {"runs", json::array()}};
    std::optional<std::size_t> fewest;
    for (const auto& seq : seqs) {
      if (seq && !seq->empty()) fewest = std::min(fewest.value_or(seq->size()), seq->size());
    }
    std::optional<double> best, gap;
    if (!pooled.empty()) {
      best = *std::max_element(pooled.begin(), pooled.end());
      double typical = median(pooled);
      if (!(typical < *best)) typical = *std::min_element(pooled.begin(), pooled.end());
      gap = *best - typical;
      task["best"] = objective.oriented(*best);  // oriented back: its own inverse
      task["typical"] = objective.oriented(typical);
      task["target"] = objective.oriented(*best - kTargetGap * *gap);
    }
    if (fewest) task["compared"] = *fewest;
    for (const auto& seq : seqs) {
      if (!seq) {
        task["runs"].push_back(nullptr);
        continue;
      }
      json entry{{"finished", seq->size()}, {"trials_to_target", nullptr}, {"mean_regret", nullptr}, {"first_regret", nullptr}};
      if (best && !seq->empty()) {
        const std::vector<double> r = regrets(*seq, *best, *gap);
        const auto reached = std::find_if(r.begin(), r.end(), [](double x) { return x <= kTargetGap; });
        if (reached != r.end()) entry["trials_to_target"] = reached - r.begin() + 1;
        double sum = 0;
        for (std::size_t k = 0; k < *fewest; ++k) sum += r[k];
        entry["mean_regret"] = sum / static_cast<double>(*fewest);
        entry["first_regret"] = r.front();
      }
      task["runs"].push_back(std::move(entry));
    }
    out["tasks"].push_back(std::move(task));
  }
  return out;
}

}  // namespace lbo::report
