#include "earlier_best.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>

#include <Eigen/Core>

namespace lbo::orchestrator {

namespace {

// The warm task's feasible values: of objective `k` of this job's several (w.values), or with
// one objective its own (w.objectives); NaN where a result broke a limit, so never the best.
std::vector<double> feasible_values(const WarmTask& w, std::optional<std::size_t> k) {
  std::vector<double> feasible = w.objectives;
  if (k) {
    for (std::size_t i = 0; i < w.values.size() && i < feasible.size(); ++i) feasible[i] = w.values[i][*k];
  }
  for (std::size_t i = 0; i < w.infeasible.size() && i < feasible.size(); ++i) {
    if (w.infeasible[i] != 0) feasible[i] = std::numeric_limits<double>::quiet_NaN();
  }
  return feasible;
}

// One earlier task as the portfolio scores it: its feasible results' encoded points (columns)
// and each one's quantile among them (0 the best, 1 the worst; equal values share theirs).
struct ScoredTask {
  Eigen::MatrixXd points;
  Eigen::VectorXd quantile;
};

// `oriented`: larger is better, NaN a result that is no candidate (broke a limit, or none).
void add_scored(std::vector<ScoredTask>& tasks, const std::vector<jobs::Config>& configs,
                const std::vector<double>& oriented, const jobs::Encoder& encoder) {
  std::vector<std::size_t> kept;
  for (std::size_t i = 0; i < configs.size() && i < oriented.size(); ++i) {
    if (std::isfinite(oriented[i])) kept.push_back(i);
  }
  if (kept.size() < 2) return;  // a quantile needs two results
  std::vector<std::size_t> order(kept.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return oriented[kept[a]] > oriented[kept[b]]; });
  ScoredTask t;
  t.points.resize(encoder.dimension(), static_cast<Eigen::Index>(kept.size()));
  t.quantile.resize(static_cast<Eigen::Index>(kept.size()));
  const double last = static_cast<double>(kept.size() - 1);
  for (std::size_t r = 0; r < order.size();) {
    std::size_t end = r + 1;  // equal values share the mean of their ranks
    while (end < order.size() && oriented[kept[order[end]]] == oriented[kept[order[r]]]) ++end;
    const double q = (static_cast<double>(r + end - 1) / 2) / last;
    for (std::size_t i = r; i < end; ++i) t.quantile(static_cast<Eigen::Index>(order[i])) = q;
    r = end;
  }
  for (std::size_t i = 0; i < kept.size(); ++i) {
    const std::vector<double> x = encoder.encode(configs[kept[i]]);
    t.points.col(static_cast<Eigen::Index>(i)) = Eigen::Map<const Eigen::VectorXd>(x.data(), static_cast<Eigen::Index>(x.size()));
  }
  tasks.push_back(std::move(t));
}

// A point's quantile on `t`, from the results nearest to it. By brute force, not nanoflann: a
// task's results are searched once for each earlier best (a few dozen queries), fewer than a
// k-d tree's build would pay for.
double standing(const ScoredTask& t, const Eigen::VectorXd& x) {
  constexpr Eigen::Index kNearest = 3;
  const Eigen::VectorXd d2 = (t.points.colwise() - x).colwise().squaredNorm().transpose();
  std::vector<Eigen::Index> index(static_cast<std::size_t>(d2.size()));
  std::iota(index.begin(), index.end(), Eigen::Index{0});
  const auto k = std::min<Eigen::Index>(kNearest, d2.size());
  std::partial_sort(index.begin(), index.begin() + k, index.end(), [&](Eigen::Index a, Eigen::Index b) {
    return d2(a) < d2(b) || (d2(a) == d2(b) && a < b);
  });
  double sum = 0;
  double weights = 0;
  for (Eigen::Index i = 0; i < k; ++i) {
    const Eigen::Index j = index[static_cast<std::size_t>(i)];
    const double w = 1 / (d2(j) + 1e-12);
    sum += w * t.quantile(j);
    weights += w;
  }
  return sum / weights;
}

// The earlier tasks of `task` whose results a portfolio is scored on: the run's tasks before it,
// then the warm-start tasks.
std::vector<ScoredTask> scored_tasks(const RunState& state, int task, const std::vector<WarmTask>& warm,
                                     const jobs::Encoder& encoder) {
  std::vector<ScoredTask> tasks;
  const jobs::Objectives objectives = state.job().all_objectives();
  for (int k = std::min(task, static_cast<int>(state.tasks().size())); k-- > 0;) {
    std::vector<jobs::Config> configs;
    std::vector<double> oriented;
    for (const std::int64_t id : state.task_trials(k)) {
      const Trial& t = state.trial(id);
      if (!t.finished || t.outcome.status != workers::TrialStatus::ok || t.infeasible) continue;
      configs.push_back(t.config);
      oriented.push_back(objectives.primary().oriented(state.values_of(t)[0]));
    }
    add_scored(tasks, configs, oriented, encoder);
  }
  for (auto w = warm.rbegin(); w != warm.rend(); ++w) {
    const bool several = state.several_objectives() && w->values.size() == w->objectives.size();
    const jobs::Objective by = several ? objectives.primary() : jobs::Objective(w->direction);
    std::vector<double> oriented = feasible_values(*w, several ? std::optional<std::size_t>(0) : std::nullopt);
    for (double& v : oriented) v = by.oriented(v);
    add_scored(tasks, w->configs, oriented, encoder);
  }
  return tasks;
}

}  // namespace

std::vector<jobs::Config> earlier_bests(const RunState& state, int task, const std::vector<WarmTask>& warm,
                                        std::size_t count) {
  std::vector<jobs::Config> bests;
  const auto add = [&](const jobs::Config& c) {
    if (bests.size() < count && std::find(bests.begin(), bests.end(), c) == bests.end()) bests.push_back(c);
  };
  for (int k = std::min(task, static_cast<int>(state.tasks().size())); k-- > 0;) {
    if (const auto best = state.tasks()[static_cast<std::size_t>(k)].best_trial) add(state.trial(*best).config);
  }
  // With several objectives, then the other ends of the earlier tasks' Pareto sets: for each
  // objective past the first, the member best in it (the newest task's first).
  if (state.several_objectives()) {
    const jobs::Objectives objectives = state.job().all_objectives();
    for (int k = std::min(task, static_cast<int>(state.tasks().size())); k-- > 0;) {
      const std::vector<std::int64_t>& front = state.tasks()[static_cast<std::size_t>(k)].pareto;
      for (std::size_t i = 1; i < objectives.size() && !front.empty(); ++i) {
        std::vector<double> values;
        for (const std::int64_t id : front) values.push_back(state.values_of(state.trial(id))[i]);
        if (const std::ptrdiff_t best = objectives[i].best_of(values); best >= 0) {
          add(state.trial(front[static_cast<std::size_t>(best)]).config);
        }
      }
    }
  }
  // Earlier runs' tasks: each one's best (by the first of this job's objectives, when it has
  // several and the warm task their values), then the ends of their Pareto sets likewise.
  const jobs::Objectives objectives = state.job().all_objectives();
  const auto add_best = [&](const WarmTask& w, std::optional<std::size_t> k) {
    const jobs::Objective by = k ? objectives[*k] : jobs::Objective(w.direction);
    const std::ptrdiff_t i = by.best_of(feasible_values(w, k));
    if (i >= 0 && static_cast<std::size_t>(i) < w.configs.size()) add(w.configs[static_cast<std::size_t>(i)]);
  };
  const auto several = [&](const WarmTask& w) {
    return state.several_objectives() && w.values.size() == w.objectives.size();
  };
  for (auto w = warm.rbegin(); w != warm.rend(); ++w) {
    add_best(*w, several(*w) ? std::optional<std::size_t>(0) : std::nullopt);
  }
  for (auto w = warm.rbegin(); w != warm.rend(); ++w) {
    for (std::size_t k = 1; several(*w) && k < objectives.size(); ++k) add_best(*w, k);
  }
  return bests;
}

std::optional<std::vector<jobs::Config>> portfolio_bests(const RunState& state, int task,
                                                         const std::vector<WarmTask>& warm,
                                                         const jobs::Encoder& encoder) {
  std::vector<jobs::Config> bests = earlier_bests(state, task, warm, std::numeric_limits<std::size_t>::max());
  const std::vector<ScoredTask> tasks = scored_tasks(state, task, warm, encoder);
  if (tasks.size() < 2 || bests.size() < 2) return std::nullopt;
  // standing(c, j): best c's quantile on earlier task j.
  Eigen::MatrixXd standings(static_cast<Eigen::Index>(bests.size()), static_cast<Eigen::Index>(tasks.size()));
  for (std::size_t c = 0; c < bests.size(); ++c) {
    const std::vector<double> x = encoder.encode(bests[c]);
    const Eigen::Map<const Eigen::VectorXd> point(x.data(), static_cast<Eigen::Index>(x.size()));
    for (std::size_t j = 0; j < tasks.size(); ++j) {
      standings(static_cast<Eigen::Index>(c), static_cast<Eigen::Index>(j)) = standing(tasks[j], point);
    }
  }
  Eigen::RowVectorXd cover = Eigen::RowVectorXd::Ones(standings.cols());
  std::vector<jobs::Config> portfolio;
  std::vector<bool> chosen(bests.size(), false);
  while (portfolio.size() < bests.size()) {
    std::size_t next = 0;
    double lowest = std::numeric_limits<double>::infinity();
    for (std::size_t c = 0; c < bests.size(); ++c) {
      if (chosen[c]) continue;
      const double total = cover.cwiseMin(standings.row(static_cast<Eigen::Index>(c))).sum();
      if (total < lowest - 1e-12) {  // of equal ones the earlier: the recent order
        lowest = total;
        next = c;
      }
    }
    chosen[next] = true;
    cover = cover.cwiseMin(standings.row(static_cast<Eigen::Index>(next)));
    portfolio.push_back(std::move(bests[next]));
  }
  return portfolio;
}

}  // namespace lbo::orchestrator
