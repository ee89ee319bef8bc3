#include "nominations.hpp"

#include <algorithm>
#include <chrono>
#include <random>
#include <span>
#include <unordered_set>

#include "lbo/surrogate/acquisition.hpp"
#include "table_rows.hpp"

namespace lbo::orchestrator {

namespace {

using surrogate::AcquisitionKind;

// UCB's β on an earlier task's posterior (a later task's first wave, before a fit of its own):
// wide (3σ), so the points spread as a design would, drawn to where the earlier task was good.
constexpr double kDesignBeta = 9.0;

AcquisitionKind acquisition_of(jobs::AcquisitionKind kind) {
  switch (kind) {
    case jobs::AcquisitionKind::ucb: return AcquisitionKind::ucb;
    case jobs::AcquisitionKind::pi: return AcquisitionKind::pi;
    default: return AcquisitionKind::ei;
  }
}

}  // namespace

// A configuration this task has already (or is now) evaluating is not proposed again, as in
// scikit-optimize: with an overconfident model the maximizer can return to the incumbent
// over and over, and two running trials must never share a configuration. With a tabulated
// objective that does not restrict proposals (`lookup_`), what a trial evaluates is its nearest
// row: a configuration whose nearest row the task took is taken too, while the task has rows
// left. The value is a function of the row, flat over its cell, and the output warping draws
// proposals to the incumbent's cell: on the XGBoost tables 29% of lbo's trials repeated a row
// (bench/log/2026-12-06-transfer-xgboost-unlike-tasks.md). Once every row is taken, repeats
// cannot be helped and only the configuration itself is.
bool Nominations::taken(const RunState& state, int task, const jobs::Config& config) const {
  const auto& ids = state.task_trials(task);
  if (lookup_) {
    const std::string& name = state.job().tasks[static_cast<std::size_t>(task)].name;
    const jobs::ObjectiveTable::Row* row = lookup_->nearest(name, config).row;
    if (row != nullptr) {
      std::unordered_set<const jobs::ObjectiveTable::Row*> rows;
      for (const std::int64_t id : ids) {
        auto [it, fresh] = rows_of_trials_.try_emplace(id, nullptr);
        if (fresh) it->second = lookup_->nearest(name, state.trial(id).config).row;
        rows.insert(it->second);
      }
      if (rows.size() < lookup_->distinct_rows(name)) return rows.contains(row);
    }
  }
  return std::any_of(ids.begin(), ids.end(), [&](std::int64_t id) { return state.trial(id).config == config; });
}

Nominations::Nominations(const jobs::JobSpec& job, const PolicyOptions& options, const ModelData& data,
                         HedgePortfolios& hedges, Bases& bases, FailureModel& failures)
    : job_(job),
      options_(options),
      data_(data),
      hedges_(hedges),
      bases_(bases),
      failures_(failures),
      search_space_(job.space, data.encoder()),
      rows_(TableRows::of(job)),
      lookup_(job.objective.table && !job.objective.table->restricted ? job.objective.table_data : nullptr),
      random_(job.space, job.seed, rows_) {}

// The acquisition functions `basis` is scored by: GP-Hedge's portfolio, or the job's one. On
// another task's posterior, UCB: EI's and PI's incumbent is the other task's, and once the
// batch's believed values pass it their improvement is flat, so a wave would pile up.
std::vector<AcquisitionKind> Nominations::arms_for(const Basis& basis) const {
  if (job_.policy.acquisition == jobs::AcquisitionKind::hedge && basis.kind != Basis::Kind::prior) {
    return {HedgePortfolios::kArms.begin(), HedgePortfolios::kArms.end()};
  }
  return {basis.kind == Basis::Kind::prior ? AcquisitionKind::ucb : acquisition_of(job_.policy.acquisition)};
}

// Each arm's candidates, best first, from the task's batch.
std::vector<std::vector<surrogate::Maximum>> Nominations::rank(TaskBatch& batch, const Basis& basis,
                                                            const std::vector<AcquisitionKind>& arms, bool all) const {
  surrogate::AcquisitionParams params = batch.params();
  const int t = batch.count() + 1;
  params.ucb_beta = job_.policy.ucb_beta.value_or(
      surrogate::ucb_beta_schedule(t, data_.encoder().dimension(), job_.policy.ucb_delta, job_.policy.ucb_scale));
  // A wave on another task's posterior needs a wide β: the hallucinated points keep the mean,
  // and with a narrow β they would crowd the prior's peak.
  if (basis.kind == Basis::Kind::prior) params.ucb_beta = kDesignBeta;
  const auto started = std::chrono::steady_clock::now();
  const surrogate::Refinement refine = all ? surrogate::Refinement::none : batch.take_refinement(options_.sync);
  std::vector<std::vector<surrogate::Maximum>> ranked;
  for (AcquisitionKind arm : arms) ranked.push_back(batch.proposer().next(arm, params, refine, all ? 0 : kRanked));
  if (refine != surrogate::Refinement::none) batch.refined(refine, started);
  return ranked;
}

// `task`'s nominees: one per step of a stepwise objective (none if a step has nothing to learn
// from); with rung tasks, the first of its proposing steps that has something to learn from,
// logged when that step changes.
std::vector<Nomination> Nominations::of_task(const RunState& state, int task, std::int64_t trial) {
  std::vector<Nomination> nominees;
  const std::vector<int> steps = data_.proposing_steps(state, task);
  for (int step : steps) {
    std::optional<Nomination> n = nominate(state, task, step, trial);
    if (!n && !data_.rung_tasks()) return {};
    if (!n) continue;
    nominees.push_back(std::move(*n));
    if (data_.rung_tasks()) {
      note_proposing_step(state, task, step, steps.front());
      break;
    }
  }
  return nominees;
}

void Nominations::note_proposing_step(const RunState& state, int task, int step, int preferred) {
  const auto t = static_cast<std::size_t>(task);
  if (proposing_step_.size() <= t) proposing_step_.resize(t + 1, -1);
  if (proposing_step_[t] == step) return;
  proposing_step_[t] = step;
  if (!options_.log) return;
  std::string line = "task " + state.job().tasks[t].name + " proposes from the model's " + data_.name(state, task, step);
  if (job_.early_stopping->model == jobs::CurveModel::highest_rung) {
    line += " (BOHB's rule: the highest rung with at least d + 1 = " + std::to_string(data_.encoder().dimension() + 1) +
            " results, else the first)";
  }
  if (step != preferred) line += " until " + data_.name(state, task, preferred) + " has results to learn from";
  options_.log(line);
}

// Once per model task, when its batch first penalizes running trials rather than believing them
// (TaskBatch::kBelieved, kExact).
void Nominations::note_unbelieved(const RunState& state, int task, int step, const TaskBatch& batch) {
  const std::size_t k = data_.slot(task, step);
  if (batch.unbelieved() == 0 || !options_.log || (k < unbelieved_noted_.size() && unbelieved_noted_[k])) return;
  if (unbelieved_noted_.size() <= k) unbelieved_noted_.resize(k + 1, false);
  unbelieved_noted_[k] = true;
  options_.log("task " + data_.name(state, task, step) + ": " + std::to_string(batch.running()) +
               " of its trials are running; its proposals condition the model on at most " +
               std::to_string(TaskBatch::kExact) +
               " of them and keep out of the others' neighbourhoods (local penalization: each point the model is "
               "conditioned on costs every proposal in proportion to their number squared)");
}

// The maximizer of `step`'s acquisition for `task` (a configuration the task has not taken)
// and its acquisition value; none while the task has nothing to learn from.
std::optional<Nomination> Nominations::nominate(const RunState& state, int task, int step, std::int64_t trial, bool retry) {
  const std::optional<Basis> basis = bases_.of(state, task, step);
  if (!basis) return std::nullopt;
  const std::size_t k = data_.slot(task, step);
  const std::uint64_t seed = jobs::trial_seed(job_.seed ^ 0x5eedac9u, trial) + 7919u * static_cast<std::uint64_t>(k);
  TaskBatch& batch = batches_[k];
  // A restricting table: the acquisition ranks the task's untaken rows only.
  const Eigen::MatrixXd rows = rows_ ? rows_->encoded_untaken(state, task) : Eigen::MatrixXd();
  const BatchSettings settings{&search_space_, surrogate::MaximizerOptions{job_.policy.candidates, job_.policy.refine},
                               job_.policy.xi, options_.sync, rows_ ? &rows : nullptr,
                               job_.objective.failures == jobs::FailureLearning::learn};
  batch.update(data_.trials_of(state, task, step, &warpings_[k]), *basis, settings, seed);
  const std::shared_ptr<const surrogate::FeasibilityModel> feasibility = failures_.current(state);
  batch.proposer().weigh_feasibility(feasibility, task);
  note_unbelieved(state, task, step, batch);
  const std::vector<AcquisitionKind> arms = arms_for(*basis);
  const bool hedge = arms.size() > 1;
  const std::vector<std::vector<surrogate::Maximum>> ranked = rank(batch, *basis, arms);

  Nomination n;
  n.task = task;
  n.step = step;
  n.source = batch.source();
  n.note = batch.note();
  std::size_t arm = 0;
  std::mt19937_64 rng(seed);
  if (hedge) {
    const auto name = [&](int t) { return data_.name(state, t, step); };
    arm = hedges_.draw(k, task, step, data_.steps(), rng, name, options_.log);
    n.arm_draw = HedgeDraw{trial, "acquisition", name(task), {}, hedges_.probabilities(k), arm};
    for (AcquisitionKind a : HedgePortfolios::kArms) n.arm_draw->options.emplace_back(surrogate::to_string(a));
    HedgePortfolios::Nominees points;
    for (std::size_t a = 0; a < HedgePortfolios::kArms.size(); ++a) points[a] = ranked[a].front().x;
    hedges_.nominated(k, std::move(points));
  }
  // With a failure model, the note says how likely the proposal is to succeed.
  const auto note_success = [&] {
    if (!feasibility) return;
    n.note += (n.note.empty() ? "" : "; ") + FailureModel::note(failures_.probability(feasibility.get(), task, n.config));
  };
  if (take_untaken(state, ranked[arm], n)) {
    note_success();
    return n;
  }
  // The best kRanked are all taken (a discrete space, or an overconfident model): all of them.
  if (ranked[arm].size() >= static_cast<std::size_t>(kRanked) &&
      take_untaken(state, rank(batch, *basis, {arms[arm]}, true).front(), n)) {
    note_success();
    return n;
  }
  // Every candidate is taken. A batch that has proposed some of them draws new candidates;
  // else (a small discrete space) any configuration that is not taken.
  if (retry && batch.proposer().size() > 0) {
    if (hedge) hedges_.withdraw_last(k);
    batch.invalidate();
    return nominate(state, task, step, trial, false);
  }
  n.source = ProposalSource::random_fallback;
  n.note = "every configuration the acquisition ranks high is taken by the task already";
  if (rows_) {
    n.config = random_.propose(state, task, trial);  // an untaken row, or any point when none is left
    if (rows_->untaken(state, task).empty()) n.note = "every tabulated configuration of the task is taken already";
    return n;
  }
  for (int i = 0; i < 100; ++i) {
    jobs::Config config = job_.space.sample(rng);
    if (!taken(state, task, config)) {
      n.config = std::move(config);
      return n;
    }
  }
  n.config = random_.propose(state, task, trial);
  return n;
}

// The best of `ranked` that `n`'s task has not taken, into `n`; false when all are taken.
bool Nominations::take_untaken(const RunState& state, const std::vector<surrogate::Maximum>& ranked, Nomination& n) const {
  for (const surrogate::Maximum& m : ranked) {
    jobs::Config config = data_.encoder().decode(std::span<const double>(m.x.data(), static_cast<std::size_t>(m.x.size())));
    if (rows_) {
      // A ranked row, decoded: the row itself (its exact values), unless the task took it.
      std::optional<jobs::Config> row = rows_->nearest_untaken(state, n.task, config);
      if (!row) return false;
      config = std::move(*row);
    }
    if (taken(state, n.task, config)) continue;
    n.config = std::move(config);
    n.value = m.value;
    return true;
  }
  return false;
}

}  // namespace lbo::orchestrator
