#include "curves.hpp"

#include <limits>

namespace lbo::report {

namespace {

bool feasible_ok(const orchestrator::Trial& t) { return t.outcome.status == workers::TrialStatus::ok && !t.infeasible; }

}  // namespace

std::map<std::string, std::vector<double>> best_so_far(const orchestrator::RunState& state, const jobs::Objective& objective) {
  std::map<std::string, std::vector<double>> out;
  const auto& tasks = state.job().tasks;
  for (int task = 0; task < static_cast<int>(tasks.size()); ++task) {
    std::vector<double>& curve = out[tasks[static_cast<std::size_t>(task)].name];
    double best = std::numeric_limits<double>::quiet_NaN();
    for (const std::int64_t id : state.task_trials(task)) {
      const orchestrator::Trial& t = state.trial(id);
      if (!t.finished) continue;
      if (feasible_ok(t) && objective.better(t.outcome.objective, best)) best = t.outcome.objective;
      curve.push_back(best);
    }
  }
  return out;
}

std::map<std::string, std::vector<std::vector<double>>> feasible_values(const orchestrator::RunState& state) {
  std::map<std::string, std::vector<std::vector<double>>> out;
  const auto& tasks = state.job().tasks;
  for (int task = 0; task < static_cast<int>(tasks.size()); ++task) {
    auto& values = out[tasks[static_cast<std::size_t>(task)].name];
    for (const std::int64_t id : state.task_trials(task)) {
      const orchestrator::Trial& t = state.trial(id);
      if (t.finished && feasible_ok(t)) values.push_back(state.values_of(t));
    }
  }
  return out;
}

std::map<std::string, std::vector<double>> hypervolume_so_far(const orchestrator::RunState& state,
                                                              const std::map<std::string, std::vector<double>>& reference) {
  const jobs::Objectives objectives = state.job().all_objectives();
  std::map<std::string, std::vector<double>> out;
  const auto& tasks = state.job().tasks;
  for (int task = 0; task < static_cast<int>(tasks.size()); ++task) {
    const std::string& name = tasks[static_cast<std::size_t>(task)].name;
    std::vector<double>& curve = out[name];
    const auto ref = reference.find(name);
    std::vector<std::vector<double>> front;  // the feasible results so far no other dominates
    double volume = 0;
    for (const std::int64_t id : state.task_trials(task)) {
      const orchestrator::Trial& t = state.trial(id);
      if (!t.finished) continue;
      if (feasible_ok(t) && ref != reference.end()) {
        std::vector<double> v = state.values_of(t);
        bool dominated = false;
        for (const auto& f : front) dominated = dominated || objectives.dominates(f, v) || f == v;
        if (!dominated) {  // only a result no other dominates changes the hypervolume
          std::erase_if(front, [&](const std::vector<double>& f) { return objectives.dominates(v, f); });
          front.push_back(std::move(v));
          volume = objectives.hypervolume(front, ref->second);
        }
      }
      curve.push_back(volume);
    }
  }
  return out;
}

}  // namespace lbo::report
