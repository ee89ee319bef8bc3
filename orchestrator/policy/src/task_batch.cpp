#include "task_batch.hpp"

#include <algorithm>
#include <tuple>
#include <iterator>

#include "failure_model.hpp"
#include "lbo/surrogate/linalg.hpp"

namespace lbo::orchestrator {

namespace {

// A trial paused at a rung has a result for now (its value there); promoted, it is pending
// again, and the count of ended trials falls: the batch is rebuilt.
bool ended(const Trial& t) { return t.finished || t.paused(); }

// The best kJoined of `unseen` (standardized value, trial) condition `posterior` exactly, in
// trial order (all of them, in trial order, when there are no more).
void join_best(const TaskTrials& trials, std::vector<std::pair<double, std::int64_t>>& unseen, int d,
                      std::shared_ptr<const surrogate::TaskPosterior>& posterior) {
  const std::size_t joined = std::min(unseen.size(), static_cast<std::size_t>(TaskBatch::kJoined));
  if (unseen.size() > joined) {
    std::sort(unseen.rbegin(), unseen.rend());
    const auto by_trial = [](const auto& a, const auto& b) { return a.second < b.second; };
    std::sort(unseen.begin(), unseen.begin() + static_cast<std::ptrdiff_t>(joined), by_trial);
  }
  if (joined == 0) return;
  std::vector<Eigen::VectorXd> x;
  Eigen::VectorXd y(static_cast<Eigen::Index>(joined));
  for (std::size_t i = 0; i < joined; ++i) {
    x.push_back(trials.encode(trials.state.trial(unseen[i].second)));
    y(static_cast<Eigen::Index>(i)) = unseen[i].first;
  }
  posterior = posterior->condition(surrogate::stack_rows(x, d), &y);
}

// EI's and PI's incumbent: the best feasible result (Gardner et al. 2014, Gelbart et al. 2014:
// an infeasible trial's value is no best to improve on); with none feasible yet, the worst result,
// so that the acquisition weighed by the probability of feasibility leads into the limits. With
// the count of feasible results. `observed`: (standardized result, trial), best first.
std::pair<double, int> incumbent_of(const RunState& state, const std::vector<std::pair<double, std::int64_t>>& observed) {
  const auto feasible = [&](const auto& o) { return !state.trial(o.second).infeasible; };
  const int count = static_cast<int>(std::count_if(observed.begin(), observed.end(), feasible));
  const auto best = std::find_if(observed.begin(), observed.end(), feasible);
  if (best != observed.end()) return {best->first, count};
  return {observed.empty() ? 0.0 : observed.back().first, count};
}

}  // namespace

void TaskBatch::update(const TaskTrials& trials, const Basis& basis, const BatchSettings& settings, std::uint64_t seed) {
  const RunState& state = trials.state;
  std::vector<std::int64_t> pending;
  for (std::int64_t id : state.task_trials(trials.task)) {
    if (!ended(state.trial(id))) pending.push_back(id);
  }
  const auto finished = static_cast<int>(state.task_trials(trials.task).size() - pending.size());
  const auto now = Clock::now();
  const bool current = key_ == basis.key || (kind_ == basis.kind && now - built_at_ < 9 * build_cost_);
  const bool fresh = batch_ && 2 * batch_->candidates_left() >= settings.maximizer.candidates;
  const auto came_in = std::count_if(pending_.begin(), pending_.end(), [&](std::int64_t id) { return ended(state.trial(id)); });
  if (batch_ && current && fresh && !settings.sync && settings.candidates == nullptr && finished_ + came_in == finished) {
    finished_ = finished;
    for (std::int64_t id : pending_) {
      const Trial& t = state.trial(id);
      if (!ended(t)) continue;
      const auto at = index_.find(id);
      // A prior's posterior is another task's: this task's results do not join it.
      if (trials.usable(t) && kind_ != Basis::Kind::prior) {
        const double z = standardization_.apply(trials.value(t));
        // A trial the batch penalized joins it with its result while it has room; else it stays
        // penalized until the batch is rebuilt.
        if (at != index_.end()) {
          batch_->observe(at->second, z);
        } else if (batch_->points() < kExact) {
          batch_->observe(batch_->accept(trials.encode(t)), z);
        }
        if (!t.infeasible) {
          params_.incumbent = feasible_ == 0 ? z : std::max(params_.incumbent, z);
          ++feasible_;
        } else if (feasible_ == 0) {
          params_.incumbent = observed_ == 0 ? z : std::min(params_.incumbent, z);
        }
        worst_ = observed_ == 0 ? z : std::min(worst_, z);
        ++observed_;
      } else if (settings.believe_failed && at != index_.end() && observed_ > 0 && FailureModel::failed(t)) {
        batch_->observe(at->second, worst_);  // the liar's value, as at a rebuild
      }
      if (at != index_.end()) {
        index_.erase(at);
      } else {
        --unbelieved_;
      }
    }
    // Trials started since join the batch, believed while it has room, else penalized; the
    // running ones it penalized stay so. (Both lists ascend: a merge, not a search per trial,
    // at thousands running.)
    std::vector<std::int64_t> started;
    std::set_difference(pending.begin(), pending.end(), pending_.begin(), pending_.end(), std::back_inserter(started));
    for (std::int64_t id : started) {
      const Eigen::VectorXd x = trials.encode(state.trial(id));
      if (batch_->points() < kExact) {
        index_.emplace(id, batch_->accept(x));
      } else {
        batch_->penalize(x.transpose(), params_.incumbent);
        ++unbelieved_;
      }
    }
    pending_ = std::move(pending);
    return;
  }
  rebuild(trials, basis, settings, seed, std::move(pending));
  finished_ = finished;
  built_at_ = Clock::now();
  build_cost_ = built_at_ - now;
}

// The batch anew on `basis`: the task's results the posterior has not seen joined, its running
// trials pending, candidates drawn from `seed` (or the settings' given ones).
void TaskBatch::rebuild(const TaskTrials& trials, const Basis& basis, const BatchSettings& settings, std::uint64_t seed,
                        std::vector<std::int64_t> pending) {
  const RunState& state = trials.state;
  const int d = settings.space->dimension();
  std::shared_ptr<const surrogate::TaskPosterior> posterior = basis.posterior;
  // Results the posterior has not seen join it exactly (hyperparameters kept).
  std::vector<std::pair<double, std::int64_t>> observed;  // (standardized y, trial)
  std::vector<std::pair<double, std::int64_t>> unseen;  // of those, the ones the posterior has not seen
  for (std::int64_t id : state.task_trials(trials.task)) {
    const Trial& t = state.trial(id);
    if (!trials.usable(t)) continue;
    const double z = posterior->standardization().apply(trials.value(t));
    observed.emplace_back(z, id);
    if (basis.fitted != nullptr && !std::binary_search(basis.fitted->begin(), basis.fitted->end(), id)) {
      unseen.emplace_back(z, id);
    }
  }
  join_best(trials, unseen, d, posterior);
  // The newest kBelieved running trials are believed (ids ascend in the order they started),
  // the others penalized. Failed trials first, believed and penalized alike: they never report.
  std::vector<Eigen::VectorXd> failed_x, pending_x, penalized_x;
  if (settings.believe_failed) {
    for (std::int64_t id : state.task_trials(trials.task)) {
      if (FailureModel::failed(state.trial(id))) failed_x.push_back(trials.encode(state.trial(id)));
    }
    const std::size_t older = failed_x.size() > kBelieved ? failed_x.size() - kBelieved : 0;
    penalized_x.assign(failed_x.begin(), failed_x.begin() + static_cast<std::ptrdiff_t>(older));
    failed_x.erase(failed_x.begin(), failed_x.begin() + static_cast<std::ptrdiff_t>(older));
  }
  const std::size_t unbelieved = pending.size() > kBelieved ? pending.size() - kBelieved : 0;
  pending_x = failed_x;
  for (std::size_t i = 0; i < pending.size(); ++i) {
    (i < unbelieved ? penalized_x : pending_x).push_back(trials.encode(state.trial(pending[i])));
  }
  // A prior's observations are another task's: its own best is the incumbent, and this task's
  // results (another scale) only mark configurations as taken.
  std::sort(observed.rbegin(), observed.rend());
  std::vector<Eigen::VectorXd> starts;
  if (basis.kind != Basis::Kind::prior) {
    for (std::size_t i = 0; i < observed.size() && i < 3; ++i) starts.push_back(trials.encode(state.trial(observed[i].second)));
  }
  if (settings.candidates != nullptr) {
    surrogate::MaximizerOptions ranked_only = settings.maximizer;
    ranked_only.refine = 0;
    batch_.emplace(std::move(posterior), surrogate::stack_rows(pending_x, d), *settings.space, ranked_only,
                   *settings.candidates);
  } else {
    batch_.emplace(std::move(posterior), surrogate::stack_rows(pending_x, d), *settings.space, settings.maximizer, seed,
                   starts);
  }
  // A failed trial's believed value is the task's worst result so far: the constant liar at its
  // minimum (Ginsbourger, Le Riche & Carraro 2010), what SMAC and DeepHyper impute for a crash,
  // here in the batch only (the fit never sees it). Believed at the mean, a failed point only
  // shrank the variance at itself, and the acquisition went on along the failure region's edge
  // beside it (bench/README, "Failure regions").
  worst_ = observed.empty() ? 0.0 : observed.back().first;
  if (!observed.empty()) {
    for (std::size_t i = 0; i < failed_x.size(); ++i) batch_->observe(static_cast<int>(i), worst_);
  }
  source_ = basis.source();
  note_ = basis.note;
  kind_ = basis.kind;
  key_ = basis.key;
  standardization_ = basis.posterior->standardization();
  index_.clear();
  for (std::size_t i = unbelieved; i < pending.size(); ++i) {
    index_.emplace(pending[i], static_cast<int>(failed_x.size() + i - unbelieved));
  }
  unbelieved_ = static_cast<int>(unbelieved);
  pending_ = std::move(pending);
  observed_ = static_cast<int>(observed.size());
  params_ = surrogate::AcquisitionParams{};
  std::tie(params_.incumbent, feasible_) = incumbent_of(state, observed);
  if (basis.kind == Basis::Kind::prior) params_.incumbent = basis.incumbent;
  params_.xi = settings.xi;
  // The older running trials are penalized at the posterior's belief; the unseen results left out
  // are not, the next fit takes them in (penalizing them too, bench/log's simulated-scale fourth
  // run, variant D, showed no gain).
  batch_->penalize(surrogate::stack_rows(penalized_x, d), params_.incumbent);
}

surrogate::Refinement TaskBatch::take_refinement(bool sync) {
  using surrogate::Refinement;
  ++unrefined_;
  if (sync || Clock::now() - refined_at_ >= 9 * refine_cost_) return Refinement::full;
  return unrefined_ >= kRefineEvery ? Refinement::brief : Refinement::none;
}

// The time rule weighs full refinements only: a brief one's cost would call the next full one
// too soon.
void TaskBatch::refined(surrogate::Refinement effort, std::chrono::steady_clock::time_point started) {
  refined_at_ = Clock::now();
  if (effort == surrogate::Refinement::full) refine_cost_ = refined_at_ - started;
  unrefined_ = 0;
}

}  // namespace lbo::orchestrator
