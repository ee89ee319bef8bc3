#include "lbo/orchestrator/model_policy.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <optional>
#include <random>

#include "bases.hpp"
#include "fit_service.hpp"
#include "hedge_portfolios.hpp"
#include "failure_model.hpp"
#include "initial_design.hpp"
#include "model_data.hpp"
#include "model_report.hpp"
#include "nominations.hpp"
#include "models/models.hpp"
#include "lbo/surrogate/linalg.hpp"
#include "lbo/surrogate/surrogate.hpp"

namespace lbo::orchestrator {

namespace {

// Random fallbacks logged one by one; after that, every 100th.
constexpr std::int64_t kFallbacksLogged = 10;

// One nominee drawn with probability ∝ its acquisition value (SMS-DKL eq. 9; all values ≤ 0:
// uniform), seeded by the trial so --sync runs repeat exactly; the draw goes to the log and
// hedge.csv.
std::size_t draw_nominee(const std::vector<Nomination>& nominees, const std::vector<std::string>& names, bool over_tasks,
                         std::int64_t trial, std::uint64_t seed, const PolicyOptions& options) {
  std::vector<double> weights;
  for (const Nomination& n : nominees) weights.push_back(std::isfinite(n.value) ? std::max(n.value, 0.0) : 0.0);
  double total = 0;
  for (double w : weights) total += w;
  if (!(total > 0)) std::fill(weights.begin(), weights.end(), 1.0), total = static_cast<double>(weights.size());
  std::mt19937_64 rng(jobs::trial_seed(seed ^ 0x4ed9e5u, trial));
  const std::size_t pick = std::discrete_distribution<std::size_t>(weights.begin(), weights.end())(rng);
  HedgeDraw draw{trial, over_tasks ? "tasks" : "steps", {}, names, {}, pick};
  for (double w : weights) draw.probabilities.push_back(w / total);
  if (options.log) {
    std::string line = "trial " + std::to_string(trial) + ": hedge over " + (over_tasks ? "open tasks" : "steps") + ":";
    for (std::size_t i = 0; i < nominees.size(); ++i) {
      char p[32];
      std::snprintf(p, sizeof p, " %.3f", draw.probabilities[i]);
      line += (i ? "," : "") + std::string(" ") + draw.options[i] + p;
    }
    options.log(line + " -> " + draw.options[pick]);
  }
  if (options.hedge) options.hedge(draw);
  return pick;
}

}  // namespace

class ModelPolicy::Impl {
 public:
  Impl(const jobs::JobSpec& job, PolicyOptions options)
      : job_(job),
        options_(std::move(options)),
        data_(job, options_.warm_start),
        design_(job, options_.warm_start),
        model_(models::model_entry(job.policy.surrogate)),
        fits_(model_.make(job.policy, data_.encoder().dimension()),
              options_.sync ? FitThread::awaited : FitThread::background, options_.threads,
              options_.sync ? options_.fitted : std::function<void()>()),
        hedges_(job.policy.hedge_eta, job.policy.hedge_memory),
        bases_(job, data_, adopted_, jobs::traits_of(job.policy.surrogate).transfer_best > 0, options_.sync, options_.threads,
               options_.log),
        failures_(job, data_, options_.log, options_.sync),
        nominations_(job, options_, data_, hedges_, bases_, failures_) {
    surrogate::use_threads(options_.threads);  // this thread's: proposals, and fits in --sync runs
    track_tasks(job.tasks.size());
  }

  jobs::Config propose(const RunState& state, int task, std::int64_t trial) {
    return propose_among(state, {task}, trial).config;
  }

  // Tasks still in their initial design (earlier tasks' bests, then random) go first (job
  // order): they need those points before an acquisition means anything. Otherwise every open
  // task, and every step of a stepwise one, nominates its acquisition maximizer and one nominee
  // is drawn (draw_nominee). With rung tasks, each task's max_step (or highest rung) nominates.
  Proposal propose_among(const RunState& state, const std::vector<int>& open, std::int64_t trial) {
    track_tasks(state.job().tasks.size());
    adopt_latest(state);
    if (!options_.sync && fits_.stale()) fits_.request(training_data(state));
    std::vector<Nomination> nominees;
    for (int task : open) {
      std::string note;
      if (std::optional<jobs::Config> best = design_.earlier_best(state, task, &failures_, &note)) {
        return {task, std::move(*best), ProposalSource::earlier_best, std::move(note)};
      }
      if (design_.open(state, task)) return design_point(state, task, trial, std::move(note));
      std::vector<Nomination> own = nominations_.of_task(state, task, trial);
      // Nothing to learn from yet (no result, no earlier task): the initial design goes on.
      if (own.empty()) return design_point(state, task, trial, std::move(note));
      std::move(own.begin(), own.end(), std::back_inserter(nominees));
    }
    std::size_t pick = 0;
    if (nominees.size() > 1) {
      std::vector<std::string> names;
      for (const Nomination& n : nominees) names.push_back(data_.name(state, n.task, n.step));
      pick = draw_nominee(nominees, names, open.size() > 1, trial, job_.seed, options_);
    }
    Nomination& chosen = nominees[pick];
    if (chosen.arm_draw && options_.hedge) options_.hedge(*chosen.arm_draw);
    if (chosen.source == ProposalSource::random_fallback) note_fallback(state, trial, chosen.task, chosen.note);
    return {chosen.task, std::move(chosen.config), chosen.source, std::move(chosen.note)};
  }

  // A random point of `task`'s initial design; `note`: what the design passed over before it.
  Proposal design_point(const RunState& state, int task, std::int64_t trial, std::string note) {
    std::string drawn;
    jobs::Config config = design_.point(state, task, trial, &failures_, &drawn);
    if (!drawn.empty()) note += (note.empty() ? "" : "; ") + drawn;
    return {task, std::move(config), ProposalSource::initial, std::move(note)};
  }

  // A --sync run's master proposes again once the fit is published (options_.fitted).
  // While a fit runs, the request would be dropped: it is built at the next proposal after the
  // fit (stale()), at thousands of results a sort of each task's values per commit saved.
  void results_committed(const RunState& state) {
    if (!fits_.defer()) fits_.request(training_data(state));
  }

  std::uint64_t fits_completed() const { return fits_.fits_completed(); }
  bool fitting() const { return fits_.busy() || bases_.fitting(); }
  void await_fit() const { fits_.wait_idle(); }
  void wait_for_fits(std::uint64_t count) const { fits_.wait_for_fits(count); }

  PolicyState state(const RunState& run) {
    adopt_latest(run);
    PolicyState saved;
    if (adopted_) {
      saved.surrogate = adopted_->state;
      const std::size_t warm = std::min(data_.warm_tasks(), adopted_->fitted.size());
      saved.fitted.assign(adopted_->fitted.begin() + static_cast<std::ptrdiff_t>(warm), adopted_->fitted.end());
      for (std::size_t k = 0; k < saved.fitted.size() && warm + k < adopted_->trials.size(); ++k) {
        saved.fitted[k].usable = adopted_->trials[warm + k];
      }
    }
    saved.warm_sources = data_.warm_sources();
    saved.steps = data_.steps();
    saved.fitted_observations = fitted_observations_;
    if (job_.policy.acquisition == jobs::AcquisitionKind::hedge) saved.hedge = hedges_.save();
    return saved;
  }

  bool refit_due(const RunState& run) const {
    const std::int64_t observations = data_.observations(run);
    return observations > 0 && observations != fitted_observations_;
  }

  void restore(const PolicyState& saved, const RunState& run) {
    track_tasks(run.job().tasks.size());
    fitted_observations_ = saved.fitted_observations;
    if (saved.steps == data_.steps()) hedges_.restore(saved.hedge);
    const surrogate::SurrogateState& model = saved.surrogate;
    if (model.empty()) return;
    if (saved.steps != data_.steps()) {
      if (options_.log) {
        options_.log("the model's tasks per task (objective.stepwise, or [early_stopping] model) changed since the "
                     "checkpoint; the model is fitted afresh");
      }
      return;
    }
    if (saved.warm_sources != data_.warm_sources()) {
      if (options_.log) options_.log("the warm-start tasks changed since the checkpoint; the model is fitted afresh");
      return;
    }
    try {
      // On the data of the fit the checkpoint's policy proposed from (a checkpoint of version
      // 3 or older: the run's data as the checkpoint holds them).
      fits_.restore(saved.surrogate, saved.fitted.empty() ? data_.training_data(run) : data_.training_data(run, saved.fitted));
    } catch (const std::exception& e) {
      if (options_.log) options_.log(std::string("cannot rebuild the saved model (") + e.what() + "); it is fitted afresh");
      return;
    }
    adopted_ = fits_.latest();
  }

  std::vector<TaskModelReport> model_report(const RunState& state) {
    track_tasks(state.job().tasks.size());
    adopt_latest(state);
    std::vector<TaskModelReport> reports = describe_tasks(adopted_.get(), data_, model_, job_, state.job().tasks.size());
    return data_.rung_tasks() ? max_step_reports(std::move(reports)) : reports;
  }

  std::vector<double> hedge_gains(int task) const {
    if (job_.policy.acquisition != jobs::AcquisitionKind::hedge) return {};
    return hedges_.gains(task < 0 ? std::numeric_limits<std::size_t>::max() : data_.slot(task, data_.reported_step()));
  }

 private:
  std::shared_ptr<const surrogate::TaskPosterior> posterior_at(std::size_t k) const { return bases_.posterior_at(k); }

  // tasks.csv and the report show a task's max_step model task; its similarities are to the
  // other tasks' max_step ones.
  std::vector<TaskModelReport> max_step_reports(std::vector<TaskModelReport> all) const {
    const auto steps = static_cast<std::size_t>(data_.steps()), top = static_cast<std::size_t>(data_.reported_step());
    std::vector<TaskModelReport> reports;
    for (std::size_t k = top; k < all.size(); k += steps) {
      TaskModelReport r = std::move(all[k]);
      std::vector<double> similarity;
      for (std::size_t j = top; j < r.similarity.size(); j += steps) similarity.push_back(r.similarity[j]);
      r.similarity = std::move(similarity);
      reports.push_back(std::move(r));
    }
    return reports;
  }

  // ModelData's, saying once per model task when its fit takes a subset ([policy] max_fit_results).
  FitRequest training_data(const RunState& state) {
    FitRequest request = data_.training_data(state);
    for (std::size_t k = subset_logged_.size(); k < request.trials.size(); ++k) subset_logged_.push_back(false);
    for (std::size_t k = 0; k < request.trials.size(); ++k) {
      const std::size_t rows = static_cast<std::size_t>(request.data.tasks[k].y.size());
      const bool warm = k < data_.warm_tasks();
      const std::size_t results = warm ? data_.warm_results(k) : request.trials[k].size();
      if (rows == results || subset_logged_[k] || !options_.log) continue;
      subset_logged_[k] = true;
      const std::string name = warm ? "warm-start task " + data_.warm_sources()[k]
                                    : "task " + data_.name(state, static_cast<int>((k - data_.warm_tasks()) / static_cast<std::size_t>(data_.steps())),
                                                           static_cast<int>((k - data_.warm_tasks()) % static_cast<std::size_t>(data_.steps())));
      options_.log(name + ": the model fits on " + std::to_string(rows) + " of its " + std::to_string(results) +
                   " results from now on ([policy] max_fit_results: the better half and the rest spread over the others)");
    }
    return request;
  }

  void note_fallback(const RunState& state, std::int64_t trial, int task, const std::string& why) {
    ++fallbacks_;
    if (!options_.log || (fallbacks_ > kFallbacksLogged && fallbacks_ % 100 != 0)) return;
    std::string line = "trial " + std::to_string(trial) + " (" + state.job().tasks[static_cast<std::size_t>(task)].name +
                       "): a random configuration (random-fallback): " + why;
    if (fallbacks_ == kFallbacksLogged) line += "; further fallbacks are logged every 100th (results.csv has each)";
    if (fallbacks_ > kFallbacksLogged) line += " (" + std::to_string(fallbacks_) + " random fallbacks so far)";
    options_.log(line);
  }

  // Tasks added to the run since: their GP-Hedge portfolios and proposers start afresh.
  void track_tasks(std::size_t tasks) {
    const std::size_t slots = tasks * static_cast<std::size_t>(data_.steps());
    hedges_.track(slots);
    nominations_.track(slots);
    bases_.track(slots);
  }

  // Take the newest published fit; GP-Hedge arms gain the new posterior mean at the nominees
  // they proposed since the last one.
  void adopt_latest(const RunState& state) {
    const std::shared_ptr<const Snapshot> latest = fits_.latest();
    if (!latest || (adopted_ && latest->version == adopted_->version)) return;
    if (!latest->error.empty()) {
      if (options_.log) options_.log("model fit failed (" + latest->error + "); proposals keep the previous model");
      auto kept = std::make_shared<Snapshot>(adopted_ ? *adopted_ : Snapshot{});
      kept->version = latest->version;
      adopted_ = std::move(kept);
      return;
    }
    if (options_.log && model_.log_fit) log_fit(adopted_.get(), *latest, state);
    adopted_ = latest;
    fitted_observations_ = 0;  // the run model tasks' observations (ModelData::observations)
    for (std::size_t k = data_.warm_tasks(); k < adopted_->trials.size(); ++k) {
      fitted_observations_ += static_cast<std::int64_t>(adopted_->trials[k].size());
    }
    hedges_.reward([this](std::size_t k) { return posterior_at(k); });
  }

  // What the new fit changed, in the model's words (its entry's log_fit).
  void log_fit(const Snapshot* before, const Snapshot& after, const RunState& state) {
    models::ModelLog log;
    log.log = options_.log;
    log.warm = data_.warm_tasks();
    const std::size_t steps = static_cast<std::size_t>(data_.steps());
    log.run_tasks = state.job().tasks.size() * steps;
    log.name = [&](std::size_t k) { return data_.name(state, static_cast<int>(k / steps), static_cast<int>(k % steps)); };
    model_.log_fit(before ? &before->state : nullptr, after.state, job_.policy, log);
  }

  const jobs::JobSpec& job_;
  PolicyOptions options_;
  ModelData data_;
  InitialDesign design_;
  const models::ModelEntry& model_;
  FitService fits_;

  // Master thread only.
  std::shared_ptr<const Snapshot> adopted_;
  std::int64_t fitted_observations_ = -1;  // observations behind adopted_'s fit
  HedgePortfolios hedges_;
  Bases bases_;  // where each task proposes from
  FailureModel failures_;  // where configurations fail
  Nominations nominations_;
  std::int64_t fallbacks_ = 0;                         // random proposals the job did not ask for, this process
  std::vector<bool> subset_logged_;                    // per model task: its fit's subset was logged
};

ModelPolicy::ModelPolicy(const jobs::JobSpec& job, PolicyOptions options)
    : impl_(std::make_unique<Impl>(job, std::move(options))) {}

ModelPolicy::~ModelPolicy() = default;

jobs::Config ModelPolicy::propose(const RunState& state, int task, std::int64_t trial) {
  return impl_->propose(state, task, trial);
}

Proposal ModelPolicy::propose_among(const RunState& state, const std::vector<int>& open, std::int64_t trial) {
  return impl_->propose_among(state, open, trial);
}

std::vector<TaskModelReport> ModelPolicy::model_report(const RunState& state) { return impl_->model_report(state); }

void ModelPolicy::results_committed(const RunState& state) { impl_->results_committed(state); }

std::uint64_t ModelPolicy::fits_completed() const { return impl_->fits_completed(); }

void ModelPolicy::wait_for_fits(std::uint64_t count) const { impl_->wait_for_fits(count); }

std::vector<double> ModelPolicy::hedge_gains(int task) const { return impl_->hedge_gains(task); }

PolicyState ModelPolicy::state(const RunState& run) { return impl_->state(run); }

void ModelPolicy::restore(const PolicyState& saved, const RunState& run) { impl_->restore(saved, run); }

bool ModelPolicy::refit_due(const RunState& run) const { return impl_->refit_due(run); }
bool ModelPolicy::fitting() const { return impl_->fitting(); }
void ModelPolicy::await_fit() const { impl_->await_fit(); }

}  // namespace lbo::orchestrator
