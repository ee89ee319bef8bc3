#include "model_data.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>

#include "lbo/surrogate/linalg.hpp"
#include "output_warping.hpp"

namespace lbo::orchestrator {

namespace {

// splitmix64's finalizer: neighbouring inputs, unrelated outputs (the seeds of ParEGO's weights).
std::uint64_t mixed(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace

ModelData::ModelData(const jobs::JobSpec& job, const std::vector<WarmTask>& warm_start)
    : job_(job), encoder_(job.space), steps_(std::max(1, job.objective.stepwise)) {
  if (job.early_stopping && (job.early_stopping->model == jobs::CurveModel::rungs ||
                             job.early_stopping->model == jobs::CurveModel::highest_rung)) {
    rungs_ = job.early_stopping->model_steps();
    steps_ = static_cast<int>(rungs_.size());
    promotes_ = job.early_stopping->mode == jobs::StoppingMode::promotion;
  }
  const int d = encoder_.dimension();
  for (const WarmTask& w : warm_start) {
    std::vector<Eigen::VectorXd> x;
    for (const jobs::Config& c : w.configs) x.push_back(encode(c));
    const Eigen::VectorXd y = warm_values(w, warm_.size());
    const Eigen::VectorXd warped = OutputWarping(job.policy.output_warping, y)(y);
    const std::vector<std::size_t> rows = fit_rows(warped);
    std::vector<Eigen::VectorXd> kept_x;
    Eigen::VectorXd kept_y(static_cast<Eigen::Index>(rows.size()));
    for (std::size_t i = 0; i < rows.size(); ++i) {
      kept_x.push_back(std::move(x[rows[i]]));
      kept_y(static_cast<Eigen::Index>(i)) = warped(static_cast<Eigen::Index>(rows[i]));
    }
    warm_.push_back({surrogate::stack_rows(kept_x, d), std::move(kept_y)});
    warm_results_.push_back(w.objectives.size());
    warm_sources_.push_back(w.source);
  }
}

Eigen::VectorXd ModelData::warm_values(const WarmTask& w, std::size_t index) const {
  Eigen::VectorXd y(static_cast<Eigen::Index>(w.objectives.size()));
  if (job_.objective.several.empty() || w.values.size() != w.objectives.size()) {
    for (std::size_t i = 0; i < w.objectives.size(); ++i) {
      y(static_cast<Eigen::Index>(i)) = jobs::Objective(w.direction).oriented(w.objectives[i]);
    }
    return y;
  }
  // Several objectives: the finished task's results scalarized as a task of this run's are
  // (ParEGO), with weights of its own drawn once from the seed and its place in the warm start.
  const std::uint64_t z = mixed(job_.seed ^ (0xD1B54A32D192ED03ULL * (static_cast<std::uint64_t>(index) + 1)));
  const Scalarization scalarized(job_.objective.objectives(), w.values,
                                 Scalarization::random_weights(job_.objective.several.size(), z));
  for (std::size_t i = 0; i < w.values.size(); ++i) y(static_cast<Eigen::Index>(i)) = scalarized(w.values[i]);
  return y;
}

Eigen::VectorXd ModelData::encode(const jobs::Config& config) const {
  const std::vector<double> x = encoder_.encode(config);
  return Eigen::Map<const Eigen::VectorXd>(x.data(), static_cast<Eigen::Index>(x.size()));
}

std::vector<int> ModelData::proposing_steps(const RunState& state, int task) const {
  std::vector<int> steps(static_cast<std::size_t>(steps_));
  std::iota(steps.begin(), steps.end(), 0);
  if (rungs_.empty()) return steps;
  // max_step's first, then the rungs below it, highest first.
  std::reverse(steps.begin(), steps.end());
  if (job_.early_stopping->model == jobs::CurveModel::rungs) return steps;
  // BOHB's rule: the highest budget with N_min = d + 1 results (Falkner et al. 2018, sec. 3.1).
  const auto enough = static_cast<std::size_t>(encoder_.dimension()) + 1;
  const auto first = std::find_if(steps.begin(), steps.end() - 1, [&](int step) { return usable_trials(state, task, step).size() >= enough; });
  return {first, steps.end()};
}

std::string ModelData::name(const RunState& state, int task, int step) const {
  const std::string& name = state.job().tasks[static_cast<std::size_t>(task)].name;
  if (!rungs_.empty()) return name + "/" + job_.early_stopping->step_name + "_" + std::to_string(rungs_[static_cast<std::size_t>(step)]);
  return job_.objective.stepwise > 0 ? name + "/step_" + std::to_string(step + 1) : name;
}

bool ModelData::usable(const Trial& t, int step) const {
  const bool ok = t.finished && t.outcome.status == workers::TrialStatus::ok;
  const bool stopped = t.finished && t.outcome.status == workers::TrialStatus::stopped;
  if (!rungs_.empty()) {
    // max_step's task takes the trials that ran to the end; a rung's, every ended trial's value
    // there (a running trial's rungs join once it ends: the data stay a function of the
    // committed records).
    if (step + 1 == steps_) return ok;
    return (ok || stopped || t.paused()) && t.report_at(rungs_[static_cast<std::size_t>(step)], promotes_).has_value();
  }
  // Several objectives: a result gives each (a trial stopped or paused gave the first alone).
  if (!job_.objective.several.empty()) return ok && t.outcome.values.size() == job_.objective.several.size();
  // A trial stopped early enters with its value at the step it was stopped on, as a searcher hears a
  // stopped trial's last result in Ray Tune or Optuna: below what it would have reached. A trial
  // paused at a rung enters with its value there until it is resumed.
  if (t.paused()) return true;
  return (ok || stopped) && (job_.objective.stepwise == 0 || static_cast<int>(t.outcome.steps.size()) == job_.objective.stepwise);
}

std::optional<Scalarization> ModelData::scalarization(const RunState& state, int task, int step) const {
  if (job_.objective.several.empty() || (!rungs_.empty() && step + 1 < steps_)) return std::nullopt;
  std::vector<std::vector<double>> results;
  for (const std::int64_t id : usable_trials(state, task, step)) results.push_back(state.trial(id).outcome.values);
  // Mixed from (seed, task, results): neighbouring inputs, unrelated weights.
  // Drawn from the results the scalarization is made of, not from the trials created: a fit's
  // values, the proposals made from its posterior (their incumbent) and the posterior a
  // checkpoint rebuilds on the same results must all be the same numbers. Drawn from the trials
  // created, a checkpoint taken after a proposal rebuilt the fit on values of other weights,
  // and a --sync resume proposed otherwise (CI's integration_kill_resume).
  const std::uint64_t z = mixed(job_.seed ^ (0x9E3779B97F4A7C15ULL * (static_cast<std::uint64_t>(task) + 1)) ^
                                 (static_cast<std::uint64_t>(results.size()) << 32));
  return Scalarization(job_.objective.objectives(), results, Scalarization::random_weights(job_.objective.several.size(), z));
}

double ModelData::value_of(const Trial& t, int step, const Scalarization* scalarized) const {
  if (!rungs_.empty() && step + 1 < steps_) {  // a report: of [early_stopping] objective
    return job_.stopping_objective().oriented(t.report_at(rungs_[static_cast<std::size_t>(step)], promotes_)->value);
  }
  if (scalarized != nullptr) return (*scalarized)(t.outcome.values);
  if (job_.objective.stepwise > 0) return oriented(t.outcome.steps[static_cast<std::size_t>(step)]);
  // model = "forecast": a trial the predictive rule stopped or paused enters with the forecast of
  // its final value it was judged by, not with its value at the rung, which a curve still rising
  // leaves below where it would end.
  if (job_.early_stopping && job_.early_stopping->model == jobs::CurveModel::forecast &&
      t.outcome.status != workers::TrialStatus::ok && std::isfinite(t.outcome.forecast)) {
    return oriented(t.outcome.forecast);
  }
  return oriented(t.outcome.objective);
}

double ModelData::oriented(double objective) const {
  return job_.objective.objective().oriented(objective);
}

std::vector<std::int64_t> ModelData::usable_trials(const RunState& state, int task, int step) const {
  std::vector<std::int64_t> ids;
  for (std::int64_t id : state.task_trials(task)) {
    if (usable(state.trial(id), step)) ids.push_back(id);
  }
  return ids;
}

std::int64_t ModelData::observations(const RunState& state) const {
  std::int64_t n = 0;
  for (const Trial& t : state.trials()) {
    if (t.lost()) continue;
    for (int step = 0; step < steps_; ++step) n += usable(t, step) ? 1 : 0;
  }
  return n;
}

Eigen::MatrixXd ModelData::encoded(const RunState& state, const std::vector<std::int64_t>& ids) const {
  std::vector<Eigen::VectorXd> x;
  for (std::int64_t id : ids) x.push_back(encode(state.trial(id).config));
  return surrogate::stack_rows(x, encoder_.dimension());
}

Eigen::VectorXd ModelData::raw_values(const RunState& state, const std::vector<std::int64_t>& ids, int step) const {
  const std::optional<Scalarization> scalarized = ids.empty() ? std::nullopt : scalarization(state, state.trial(ids[0]).task, step);
  return raw_values(state, ids, step, scalarized ? &*scalarized : nullptr);
}

Eigen::VectorXd ModelData::raw_values(const RunState& state, const std::vector<std::int64_t>& ids, int step,
                                      const Scalarization* scalarized) const {
  Eigen::VectorXd y(static_cast<Eigen::Index>(ids.size()));
  for (std::size_t i = 0; i < ids.size(); ++i) y(static_cast<Eigen::Index>(i)) = value_of(state.trial(ids[i]), step, scalarized);
  return y;
}

Eigen::VectorXd ModelData::values(const RunState& state, const std::vector<std::int64_t>& ids, int step) const {
  const Eigen::VectorXd y = raw_values(state, ids, step);
  return OutputWarping(job_.policy.output_warping, y)(y);
}

TaskTrials ModelData::trials_of(const RunState& state, int task, int step, WarpingMemo* memo) const {
  // The warping fitted to the task's results now. A posterior fitted before the last results
  // came (without --sync, until the next fit) had them warped by the warping of its own
  // results: the ranks of those it shares are the same, their warped values may differ a little.
  // Without one, nothing is read here: this runs at every proposal.
  auto scalarized = std::make_shared<const std::optional<Scalarization>>(scalarization(state, task, step));
  const auto value = [this, step, scalarized](const Trial& t) { return value_of(t, step, *scalarized ? &**scalarized : nullptr); };
  TaskTrials trials{state, task, [this](const Trial& t) { return encode(t.config); },
                    [this, step](const Trial& t) { return usable(t, step); }, value};
  if (job_.policy.output_warping == jobs::OutputWarping::none) return trials;
  Eigen::VectorXd raw = raw_values(state, usable_trials(state, task, step), step, *scalarized ? &**scalarized : nullptr);
  std::shared_ptr<const OutputWarping> warping;
  if (memo != nullptr && memo->warping && memo->raw.size() == raw.size() && memo->raw == raw) {
    warping = memo->warping;
  } else {
    warping = std::make_shared<const OutputWarping>(job_.policy.output_warping, raw);
    if (memo != nullptr) *memo = WarpingMemo{std::move(raw), warping};
  }
  trials.value = [value, warping](const Trial& t) { return (*warping)(value(t)); };
  return trials;
}

std::vector<std::size_t> ModelData::fit_rows(const Eigen::VectorXd& values, std::optional<int> smaller) const {
  const auto n = static_cast<std::size_t>(values.size());
  std::vector<std::size_t> rows(n);
  std::iota(rows.begin(), rows.end(), std::size_t{0});
  std::optional<int> cap = job_.policy.max_fit_results;
  if (smaller && (!cap || *smaller < *cap)) cap = smaller;
  if (!cap || n <= static_cast<std::size_t>(*cap)) return rows;
  const auto limit = static_cast<std::size_t>(*cap);
  const std::size_t best = (limit + 1) / 2;
  std::stable_sort(rows.begin(), rows.end(), [&](std::size_t a, std::size_t b) {
    return values(static_cast<Eigen::Index>(a)) > values(static_cast<Eigen::Index>(b));
  });
  std::vector<std::size_t> kept(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(best));
  std::vector<std::size_t> others(rows.begin() + static_cast<std::ptrdiff_t>(best), rows.end());
  std::sort(others.begin(), others.end());
  // The i-th of the `spread` others sits in the middle of the i-th of as many equal stretches.
  const std::size_t spread = limit - best;
  for (std::size_t i = 0; i < spread; ++i) kept.push_back(others[(2 * i + 1) * others.size() / (2 * spread)]);
  std::sort(kept.begin(), kept.end());
  return kept;
}

std::pair<std::vector<std::int64_t>, Eigen::VectorXd> ModelData::fit_subset(const std::vector<std::int64_t>& ids,
                                                                            const Eigen::VectorXd& values,
                                                                            std::optional<int> cap) const {
  const std::vector<std::size_t> rows = fit_rows(values, cap);
  std::vector<std::int64_t> kept;
  Eigen::VectorXd kept_values(static_cast<Eigen::Index>(rows.size()));
  for (const std::size_t row : rows) {
    kept_values(static_cast<Eigen::Index>(kept.size())) = values(static_cast<Eigen::Index>(row));
    kept.push_back(ids[row]);
  }
  return {std::move(kept), std::move(kept_values)};
}

FitRequest ModelData::warm_request() const {
  FitRequest request;
  for (const surrogate::Observations& w : warm_) {
    request.data.tasks.push_back(w);
    request.trials.emplace_back();
    request.rows.emplace_back();
    // An earlier run's finished task: all of it counts as exploration (its proposal sources
    // are not carried over).
    request.data.finished.push_back(true);
    request.data.exploration.emplace_back(static_cast<std::size_t>(w.y.size()));
    std::iota(request.data.exploration.back().begin(), request.data.exploration.back().end(), Eigen::Index{0});
  }
  return request;
}

void ModelData::add_task(FitRequest& request, const RunState& state, std::vector<std::int64_t> rows, Eigen::VectorXd values,
                         std::vector<std::int64_t> usable, bool finished) const {
  // The task's uniform exploration: its random initial design (LiBO's D^exp).
  std::vector<Eigen::Index> exploration;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (state.trial(rows[i]).proposed_by == ProposalSource::initial) exploration.push_back(static_cast<Eigen::Index>(i));
  }
  request.data.tasks.push_back({encoded(state, rows), std::move(values)});
  request.data.finished.push_back(finished);
  request.data.exploration.push_back(std::move(exploration));
  request.trials.push_back(std::move(usable));
  request.rows.push_back(std::move(rows));
}

std::uint64_t ModelData::fit_seed(const FitRequest& request) const {
  std::size_t total = 0;
  for (std::size_t k = 0; k < request.trials.size(); ++k) {
    total += k < warm_.size() ? static_cast<std::size_t>(warm_[k].y.size()) : request.trials[k].size();
  }
  return jobs::trial_seed(job_.seed ^ 0xf17u, static_cast<std::int64_t>(total));
}

FitRequest ModelData::training_data(const RunState& state) const {
  FitRequest request = warm_request();
  const std::vector<TaskIdentity>& tasks = state.job().tasks;
  for (int task = 0; task < static_cast<int>(tasks.size()); ++task) {
    // Failed trials never enter a model: no NaN or infinity reaches surrogate/.
    const bool finished = state.task_done(task);
    for (int step = 0; step < steps_; ++step) {
      std::vector<std::int64_t> ids = usable_trials(state, task, step);
      auto [kept, kept_y] = fit_subset(ids, values(state, ids, step));
      add_task(request, state, std::move(kept), std::move(kept_y), std::move(ids), finished);
    }
  }
  request.seed = fit_seed(request);
  return request;
}

FitRequest ModelData::training_data(const RunState& state, const std::vector<FittedTask>& fitted) const {
  FitRequest request = warm_request();
  for (const FittedTask& task : fitted) {
    if (task.values.size() != task.rows.size()) throw std::runtime_error("a fitted task's rows and values differ in number");
    for (const std::int64_t id : task.rows) {
      if (id < 0 || id >= state.next_trial_id() || state.trial(id).lost()) {
        throw std::runtime_error("the fit's trial " + std::to_string(id) + " is not in the run");
      }
    }
    const Eigen::VectorXd values = Eigen::Map<const Eigen::VectorXd>(task.values.data(), static_cast<Eigen::Index>(task.values.size()));
    add_task(request, state, task.rows, values, task.usable, task.finished);
  }
  request.seed = fit_seed(request);
  return request;
}

}  // namespace lbo::orchestrator
