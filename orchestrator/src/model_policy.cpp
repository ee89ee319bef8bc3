#include "lbo/orchestrator/model_policy.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <limits>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "lbo/jobs/encoding.hpp"
#include "lbo/surrogate/ablr.hpp"
#include "lbo/surrogate/acquisition.hpp"
#include "lbo/surrogate/hedge.hpp"
#include "lbo/surrogate/lbo.hpp"
#include "lbo/surrogate/linalg.hpp"
#include "lbo/surrogate/maximizer.hpp"
#include "lbo/surrogate/residual.hpp"
#include "lbo/surrogate/transfer.hpp"
#include "lbo/surrogate/surrogate.hpp"

namespace lbo::orchestrator {

namespace {

using surrogate::AcquisitionKind;

// Random fallbacks logged one by one; after that, every 100th.
constexpr std::int64_t kFallbacksLogged = 10;

// The GP-Hedge portfolio, in arm order.
constexpr std::array<AcquisitionKind, 3> kHedgeArms = {AcquisitionKind::ucb, AcquisitionKind::ei, AcquisitionKind::pi};

AcquisitionKind acquisition_of(jobs::AcquisitionKind kind) {
  switch (kind) {
    case jobs::AcquisitionKind::ucb: return AcquisitionKind::ucb;
    case jobs::AcquisitionKind::pi: return AcquisitionKind::pi;
    default: return AcquisitionKind::ei;
  }
}

Eigen::VectorXd encode(const jobs::Encoder& encoder, const jobs::Config& config) {
  const std::vector<double> x = encoder.encode(config);
  return Eigen::Map<const Eigen::VectorXd>(x.data(), static_cast<Eigen::Index>(x.size()));
}

// The job's search space as the acquisition maximizer sees it: canonical points are
// encode(decode(x)), so conditions, integer rounding and one-hot groups follow the job file.
class JobEncodedSpace final : public surrogate::EncodedSpace {
 public:
  JobEncodedSpace(const jobs::Space& space, const jobs::Encoder& encoder) : space_(space), encoder_(encoder) {
    for (const jobs::EncodedGroup& g : encoder.groups()) {
      surrogate::CoordinateGroup c;
      c.offset = g.offset;
      c.width = g.width;
      switch (g.kind) {
        case jobs::EncodedGroup::Kind::continuous: c.kind = surrogate::CoordinateGroup::Kind::continuous; break;
        case jobs::EncodedGroup::Kind::integer: c.kind = surrogate::CoordinateGroup::Kind::integer; break;
        case jobs::EncodedGroup::Kind::one_hot: c.kind = surrogate::CoordinateGroup::Kind::one_hot; break;
      }
      groups_.push_back(c);
    }
  }

  int dimension() const override { return encoder_.dimension(); }
  const std::vector<surrogate::CoordinateGroup>& groups() const override { return groups_; }

  void canonicalize(Eigen::Ref<Eigen::VectorXd> x) const override {
    const jobs::Config config = encoder_.decode(std::span<const double>(x.data(), static_cast<std::size_t>(x.size())));
    x = encode(encoder_, config);
  }

  bool movable(int group, const Eigen::VectorXd& x) const override {
    if (groups_[group].kind == surrogate::CoordinateGroup::Kind::one_hot) return false;
    const jobs::Config config = encoder_.decode(std::span<const double>(x.data(), static_cast<std::size_t>(x.size())));
    return space_.is_active(encoder_.groups()[group].param, config);
  }

 private:
  const jobs::Space& space_;
  const jobs::Encoder& encoder_;
  std::vector<surrogate::CoordinateGroup> groups_;
};

// What a fit produced: a posterior per task and the trials each was fitted on.
struct Snapshot {
  std::uint64_t version = 0;
  std::vector<std::shared_ptr<const surrogate::TaskPosterior>> posteriors;
  std::vector<std::vector<std::int64_t>> trials;  // per task, ascending
  surrogate::SurrogateState state;                // what the next fit starts from
  std::string error;                              // a failed fit: the previous posteriors stay
};

struct FitRequest {
  surrogate::TaskData data;
  std::vector<std::vector<std::int64_t>> trials;
  std::uint64_t seed = 0;
};

std::unique_ptr<surrogate::Surrogate> make_feature_model(const jobs::JobSpec& job, int dimension) {
  const std::vector<int> hidden(static_cast<std::size_t>(job.policy.network_depth), job.policy.network_width);
  if (job.policy.surrogate == jobs::SurrogateKind::ablr) {
    surrogate::AblrOptions options;
    options.hidden = hidden;
    return std::make_unique<surrogate::Ablr>(dimension, options);
  }
  surrogate::LboOptions options;
  options.hidden = hidden;
  options.networks = job.policy.networks;
  options.ibp_alpha = job.policy.ibp_alpha;
  return std::make_unique<surrogate::Lbo>(dimension, options);
}

std::unique_ptr<surrogate::Surrogate> make_surrogate(const jobs::JobSpec& job, int dimension) {
  switch (job.policy.surrogate) {
    case jobs::SurrogateKind::ablr:
    case jobs::SurrogateKind::lbo: {
      const bool lbo = job.policy.surrogate == jobs::SurrogateKind::lbo;
      std::unique_ptr<surrogate::Surrogate> model = make_feature_model(job, dimension);
      if (job.policy.residual_gp.value_or(lbo)) model = std::make_unique<surrogate::ResidualGp>(std::move(model));
      if (job.policy.transfer_gp.value_or(lbo)) model = std::make_unique<surrogate::TransferGp>(std::move(model));
      return model;
    }
    default: return std::make_unique<surrogate::GpSurrogate>();
  }
}

}  // namespace

class ModelPolicy::Impl {
 public:
  Impl(const jobs::JobSpec& job, PolicyOptions options)
      : job_(job),
        encoder_(job.space),
        search_space_(job.space, encoder_),
        options_(std::move(options)),
        random_(job.space, job.seed),
        surrogate_(make_surrogate(job, encoder_.dimension())),
        steps_(std::max(1, job.objective.stepwise)) {
    track_tasks();
    const int d = encoder_.dimension();
    for (const WarmTask& w : options_.warm_start) {
      std::vector<Eigen::VectorXd> x;
      for (const jobs::Config& c : w.configs) x.push_back(encode(encoder_, c));
      Eigen::VectorXd y(static_cast<Eigen::Index>(w.objectives.size()));
      for (std::size_t i = 0; i < w.objectives.size(); ++i) {
        y(static_cast<Eigen::Index>(i)) = w.direction == jobs::Direction::maximize ? w.objectives[i] : -w.objectives[i];
      }
      warm_.push_back({rows(x, d), std::move(y)});
      warm_sources_.push_back(w.source);
    }
    if (!options_.sync) thread_ = std::thread([this] { refit_loop(); });
  }

  /// Random trials `task` starts with: initial_random, or LiBO's ceil(sqrt(budget)/s^¼) for the
  /// s-th task of the model (warm-start tasks first).
  int initial_random(int task) const {
    if (!job_.policy.libo_exploration) return job_.policy.initial_random;
    return jobs::libo_initial_random(job_.tasks[static_cast<std::size_t>(task)].budget,
                                     static_cast<int>(warm_.size()) + task + 1);
  }

  ~Impl() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  jobs::Config propose(const RunState& state, int task, std::int64_t trial) {
    return propose_among(state, {task}, trial).config;
  }

  // Tasks still in their initial random phase go first (job order): they need those points
  // before their acquisition means anything. Otherwise every open task, and every step of a
  // stepwise one, nominates its acquisition maximizer and one nominee is drawn with
  // probability ∝ its acquisition value (SMS-DKL eq. 9; all values ≤ 0: uniform), seeded by
  // the trial so --sync runs repeat exactly.
  Proposal propose_among(const RunState& state, const std::vector<int>& open, std::int64_t trial) {
    track_tasks();
    adopt_latest();
    request_refit_if_stale(state);
    for (int task : open) {
      if (state.tasks()[task].created < initial_random(task)) {
        return {task, random_.propose(state, task, trial), ProposalSource::initial, {}};
      }
      if (!posterior_of(task, 0)) {
        const std::string why = !adopted_ ? "no model fit has finished yet"
                                          : "the newest model fit has no results of task " + job_.tasks[task].name;
        return fallback(state, task, trial, why);
      }
    }
    std::vector<Nomination> nominees;
    for (int task : open) {
      for (int step = 0; step < steps_; ++step) nominees.push_back(nominate(state, task, step, trial));
    }
    const auto proposal_of = [&](Nomination& n) -> Proposal {
      if (n.source == ProposalSource::random_fallback) note_fallback(trial, n.task, n.note);
      return {n.task, std::move(n.config), n.source, std::move(n.note)};
    };
    if (nominees.size() == 1) return proposal_of(nominees.front());
    std::vector<double> weights;
    for (const Nomination& n : nominees) weights.push_back(std::isfinite(n.value) ? std::max(n.value, 0.0) : 0.0);
    double total = 0;
    for (double w : weights) total += w;
    if (!(total > 0)) std::fill(weights.begin(), weights.end(), 1.0), total = static_cast<double>(weights.size());
    std::mt19937_64 rng(jobs::trial_seed(job_.seed ^ 0x4ed9e5u, trial));
    const std::size_t pick = std::discrete_distribution<std::size_t>(weights.begin(), weights.end())(rng);
    if (options_.log) {
      std::string line = "trial " + std::to_string(trial) + ": hedge over " + (open.size() > 1 ? "open tasks" : "steps") + ":";
      for (std::size_t i = 0; i < nominees.size(); ++i) {
        char p[32];
        std::snprintf(p, sizeof p, " %.3f", weights[i] / total);
        line += (i ? "," : "") + std::string(" ") + nominee_name(nominees[i].task, nominees[i].step) + p;
      }
      options_.log(line + " -> " + nominee_name(nominees[pick].task, nominees[pick].step));
    }
    return proposal_of(nominees[pick]);
  }

  // One open task's (or step's) candidate for the next trial.
  struct Nomination {
    int task = 0, step = 0;
    jobs::Config config;
    double value = 0;  ///< its acquisition value, in the task's standardized units
    ProposalSource source = ProposalSource::model;
    std::string note;
  };

  // A random configuration where the job asks for a model: said in the log and in results.csv.
  Proposal fallback(const RunState& state, int task, std::int64_t trial, const std::string& why) {
    note_fallback(trial, task, why);
    return {task, random_.propose(state, task, trial), ProposalSource::random_fallback, why};
  }

  void note_fallback(std::int64_t trial, int task, const std::string& why) {
    ++fallbacks_;
    if (!options_.log || (fallbacks_ > kFallbacksLogged && fallbacks_ % 100 != 0)) return;
    std::string line = "trial " + std::to_string(trial) + " (" + job_.tasks[static_cast<std::size_t>(task)].name +
                       "): a random configuration (random-fallback): " + why;
    if (fallbacks_ == kFallbacksLogged) line += "; further fallbacks are logged every 100th (results.csv has each)";
    if (fallbacks_ > kFallbacksLogged) line += " (" + std::to_string(fallbacks_) + " random fallbacks so far)";
    options_.log(line);
  }

  // The maximizer of `step`'s acquisition for `task` (a configuration the task has not
  // taken) and its acquisition value.
  Nomination nominate(const RunState& state, int task, int step, std::int64_t trial) {
    const std::size_t k = slot(task, step);
    const std::shared_ptr<const surrogate::TaskPosterior> fitted_posterior = posterior_of(task, step);
    std::shared_ptr<const surrogate::TaskPosterior> posterior = fitted_posterior;

    // Results the model has not seen join it exactly (hyperparameters kept); unfinished trials
    // of the task are hallucinated at the mean by the acquisition.
    const std::vector<std::int64_t>& fitted = adopted_->trials[model_task(task, step)];
    const int d = encoder_.dimension();
    std::vector<Eigen::VectorXd> unseen_x, pending_x;
    std::vector<double> unseen_y;
    std::vector<const jobs::Config*> taken;  // running, awaiting a retry, or evaluated already
    std::vector<std::pair<double, std::int64_t>> observed;  // (standardized y, trial)
    for (std::int64_t id : state.task_trials(task)) {
      const Trial& t = state.trial(id);
      taken.push_back(&t.config);
      if (t.finished && t.outcome.status == workers::TrialStatus::ok) {
        const double z = posterior->standardization().apply(value_of(t, step));
        observed.emplace_back(z, id);
        if (!std::binary_search(fitted.begin(), fitted.end(), id)) {
          unseen_x.push_back(encode(encoder_, t.config));
          unseen_y.push_back(z);
        }
      } else if (!t.finished) {
        pending_x.push_back(encode(encoder_, t.config));
      }
    }
    if (!unseen_x.empty()) {
      const Eigen::VectorXd y = Eigen::Map<const Eigen::VectorXd>(unseen_y.data(), static_cast<Eigen::Index>(unseen_y.size()));
      posterior = posterior->condition(rows(unseen_x, d), &y);
    }
    std::sort(observed.rbegin(), observed.rend());
    std::vector<Eigen::VectorXd> starts;  // the best observations, where EI's peaks often are
    for (std::size_t i = 0; i < observed.size() && i < 3; ++i) starts.push_back(encode(encoder_, state.trial(observed[i].second).config));

    surrogate::AcquisitionParams params;
    params.incumbent = observed.empty() ? 0.0 : observed.front().first;
    params.xi = job_.policy.xi;
    const int t = static_cast<int>(observed.size() + pending_x.size()) + 1;
    params.ucb_beta = job_.policy.ucb_beta.value_or(
        surrogate::ucb_beta_schedule(t, d, job_.policy.ucb_delta, job_.policy.ucb_scale));
    const Eigen::MatrixXd pending = rows(pending_x, d);

    const bool hedge = job_.policy.acquisition == jobs::AcquisitionKind::hedge;
    std::vector<AcquisitionKind> arms;
    if (hedge) {
      arms.assign(kHedgeArms.begin(), kHedgeArms.end());
    } else {
      arms.push_back(acquisition_of(job_.policy.acquisition));
    }
    const std::uint64_t seed = jobs::trial_seed(job_.seed ^ 0x5eedac9u, trial) + 7919u * static_cast<std::uint64_t>(k);
    surrogate::MaximizerOptions maximizer;
    maximizer.candidates = job_.policy.candidates;
    maximizer.refine = job_.policy.refine;
    std::vector<std::vector<surrogate::Maximum>> ranked;
    for (std::size_t a = 0; a < arms.size(); ++a) {
      auto acquisition = std::make_shared<surrogate::Acquisition>(arms[a], params, posterior);
      acquisition->set_pending(pending);
      surrogate::BoxObjective objective;
      objective.values = [acquisition](const Eigen::MatrixXd& X) { return acquisition->evaluate(X); };
      objective.gradient = [acquisition](const Eigen::VectorXd& x, Eigen::VectorXd& g) { return acquisition->evaluate(x, g); };
      ranked.push_back(surrogate::maximize(objective, search_space_, maximizer, seed + a, starts));
    }

    std::size_t arm = 0;
    std::mt19937_64 rng(seed);
    if (hedge) {
      arm = static_cast<std::size_t>(hedges_[k].choose(rng));
      nominees_[k].push_back({ranked[0].front().x, ranked[1].front().x, ranked[2].front().x});
    }
    // A configuration this task has already (or is now) evaluating is not proposed again, as in
    // scikit-optimize: with an overconfident model the maximizer can return to the incumbent
    // over and over, and two running trials must never share a configuration.
    const auto is_taken = [&](const jobs::Config& c) {
      return std::any_of(taken.begin(), taken.end(), [&](const jobs::Config* p) { return *p == c; });
    };
    for (const surrogate::Maximum& m : ranked[arm]) {
      jobs::Config config = encoder_.decode(std::span<const double>(m.x.data(), static_cast<std::size_t>(m.x.size())));
      if (!is_taken(config)) return {task, step, std::move(config), m.value, ProposalSource::model, {}};
    }
    // Every candidate is taken (a small discrete space): any configuration that is not.
    const std::string why = "every configuration the acquisition ranks high is taken by the task already";
    for (int i = 0; i < 100; ++i) {
      jobs::Config config = job_.space.sample(rng);
      if (!is_taken(config)) return {task, step, std::move(config), 0.0, ProposalSource::random_fallback, why};
    }
    return {task, step, random_.propose(state, task, trial), 0.0, ProposalSource::random_fallback, why};
  }

  void results_committed(const RunState& state) {
    if (options_.sync) {
      fit(training_data(state));
      adopt_latest();
      return;
    }
    request_refit(state);
  }

  std::uint64_t fits_completed() const {
    std::lock_guard lock(mutex_);
    return fits_;
  }

  void wait_for_fits(std::uint64_t count) const {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return fits_ >= count; });
  }

  PolicyState state() {
    track_tasks();
    adopt_latest();
    PolicyState saved;
    if (adopted_) saved.surrogate = adopted_->state;
    saved.warm_sources = warm_sources_;
    saved.steps = steps_;
    saved.fitted_observations = fitted_observations_;
    if (job_.policy.acquisition == jobs::AcquisitionKind::hedge) {
      for (std::size_t t = 0; t < hedges_.size(); ++t) {
        HedgeState h;
        h.gains = hedges_[t].gains();
        for (const auto& nominees : nominees_[t]) {
          std::vector<std::vector<double>> arms;
          for (const Eigen::VectorXd& x : nominees) arms.emplace_back(x.data(), x.data() + x.size());
          h.nominees.push_back(std::move(arms));
        }
        saved.hedge.push_back(std::move(h));
      }
    }
    return saved;
  }

  bool refit_due(const RunState& run) const {
    std::int64_t observations = 0;
    for (const Trial& t : run.trials()) observations += usable(t) ? 1 : 0;
    return observations > 0 && observations != fitted_observations_;
  }

  void restore(const PolicyState& saved, const RunState& run) {
    track_tasks();
    fitted_observations_ = saved.fitted_observations;
    for (std::size_t t = 0; saved.steps == steps_ && t < saved.hedge.size() && t < hedges_.size(); ++t) {
      const HedgeState& h = saved.hedge[t];
      hedges_[t] = surrogate::GpHedge(static_cast<int>(kHedgeArms.size()), job_.policy.hedge_eta);
      if (h.gains.size() == kHedgeArms.size()) hedges_[t].reward(h.gains);
      nominees_[t].clear();
      for (const auto& arms : h.nominees) {
        if (arms.size() != kHedgeArms.size()) continue;
        std::array<Eigen::VectorXd, 3> points;
        for (std::size_t a = 0; a < arms.size(); ++a) {
          points[a] = Eigen::Map<const Eigen::VectorXd>(arms[a].data(), static_cast<Eigen::Index>(arms[a].size()));
        }
        nominees_[t].push_back(std::move(points));
      }
    }
    if (!saved.surrogate.gp && !saved.surrogate.ablr && !saved.surrogate.lbo) return;
    if (saved.steps != steps_) {
      if (options_.log) options_.log("objective.stepwise changed since the checkpoint; the model is fitted afresh");
      return;
    }
    if (saved.warm_sources != warm_sources_) {
      if (options_.log) options_.log("the warm-start tasks changed since the checkpoint; the model is fitted afresh");
      return;
    }
    FitRequest request = training_data(run);
    auto snapshot = std::make_shared<Snapshot>();
    try {
      surrogate_->restore(saved.surrogate, request.data);
      for (std::size_t t = 0; t < request.data.tasks.size(); ++t) {
        snapshot->posteriors.push_back(surrogate_->posterior(static_cast<int>(t)));
      }
      snapshot->trials = std::move(request.trials);
      snapshot->state = saved.surrogate;
    } catch (const std::exception& e) {
      if (options_.log) options_.log(std::string("cannot rebuild the saved model (") + e.what() + "); it is fitted afresh");
      return;
    }
    std::lock_guard lock(mutex_);
    published_ = snapshot;  // version 0: the first real fit (version 1) replaces it
    adopted_ = std::move(snapshot);
  }

  std::vector<TaskModelReport> model_report() {
    track_tasks();
    adopt_latest();
    std::vector<TaskModelReport> reports(job_.tasks.size() * static_cast<std::size_t>(steps_));
    if (!adopted_) return reports;
    const std::optional<surrogate::LboState>& lbo = adopted_->state.lbo;
    // The posterior means at points spread across the space (a fixed stream: reports of the
    // same fit agree), correlated task by task.
    constexpr int kPoints = 256;
    std::mt19937_64 rng(job_.seed ^ 0x5151u);
    std::vector<Eigen::VectorXd> points;
    for (int i = 0; i < kPoints; ++i) points.push_back(encode(encoder_, job_.space.sample(rng)));
    const Eigen::MatrixXd X = rows(points, encoder_.dimension());
    std::vector<Eigen::VectorXd> centred(reports.size());
    for (std::size_t k = 0; k < reports.size(); ++k) {
      if (lbo && warm_.size() + k < lbo->tasks.size()) {
        reports[k].usage = lbo->tasks[warm_.size() + k].usage();
      }
      if (const auto posterior = posterior_at(k); posterior && !adopted_->trials[warm_.size() + k].empty()) {
        const Eigen::VectorXd mean = posterior->predict(X).mean;
        centred[k] = mean.array() - mean.mean();
      }
    }
    for (std::size_t k = 0; k < reports.size(); ++k) {
      if (centred[k].size() == 0) continue;
      for (std::size_t j = 0; j < reports.size(); ++j) {
        const double norms = centred[k].norm() * (centred[j].size() ? centred[j].norm() : 0.0);
        reports[k].similarity.push_back(norms > 0 ? centred[k].dot(centred[j]) / norms
                                                  : std::numeric_limits<double>::quiet_NaN());
      }
    }
    return reports;
  }

  std::vector<double> hedge_gains(int task) const {
    if (job_.policy.acquisition != jobs::AcquisitionKind::hedge) return {};
    const std::size_t k = slot(task, 0);
    if (task < 0 || k >= hedges_.size()) return surrogate::GpHedge(3, job_.policy.hedge_eta).gains();
    return hedges_[k].gains();
  }

 private:
  // Model tasks: warm-start tasks first, then each run task's steps (one unless stepwise).
  // slot() numbers the run's own model tasks from 0 (the Hedge memories, reports).
  std::size_t slot(int task, int step) const {
    return static_cast<std::size_t>(task) * static_cast<std::size_t>(steps_) + static_cast<std::size_t>(step);
  }
  std::size_t model_task(int task, int step) const { return warm_.size() + slot(task, step); }

  std::shared_ptr<const surrogate::TaskPosterior> posterior_at(std::size_t k) const {
    if (!adopted_ || warm_.size() + k >= adopted_->posteriors.size()) return nullptr;
    return adopted_->posteriors[warm_.size() + k];
  }
  std::shared_ptr<const surrogate::TaskPosterior> posterior_of(int task, int step) const {
    return posterior_at(slot(task, step));
  }

  // What a finished ok trial says of `step`, larger is better.
  double value_of(const Trial& t, int step) const {
    if (job_.objective.stepwise > 0) return oriented(t.outcome.steps[static_cast<std::size_t>(step)]);
    return oriented(t.outcome.objective);
  }

  // Whether an ok trial can enter the models (a stepwise one must report every step).
  bool usable(const Trial& t) const {
    return t.finished && t.outcome.status == workers::TrialStatus::ok &&
           (job_.objective.stepwise == 0 || static_cast<int>(t.outcome.steps.size()) == job_.objective.stepwise);
  }

  std::string nominee_name(int task, int step) const {
    const std::string& name = job_.tasks[static_cast<std::size_t>(task)].name;
    return job_.objective.stepwise > 0 ? name + "/step_" + std::to_string(step + 1) : name;
  }

  // Tasks added to the run since: their GP-Hedge portfolios start afresh.
  void track_tasks() {
    const std::size_t slots = job_.tasks.size() * static_cast<std::size_t>(steps_);
    while (hedges_.size() < slots) hedges_.emplace_back(3, job_.policy.hedge_eta);
    nominees_.resize(std::max(nominees_.size(), slots));
  }

  // Larger is better inside the models: a minimize job negates its objective.
  double oriented(double objective) const {
    return job_.objective.direction == jobs::Direction::maximize ? objective : -objective;
  }

  static Eigen::MatrixXd rows(const std::vector<Eigen::VectorXd>& points, int d) {
    Eigen::MatrixXd X(static_cast<Eigen::Index>(points.size()), d);
    for (std::size_t i = 0; i < points.size(); ++i) X.row(static_cast<Eigen::Index>(i)) = points[i].transpose();
    return X;
  }

  FitRequest training_data(const RunState& state) const {
    FitRequest request;
    const int d = encoder_.dimension();
    std::size_t total = 0;
    for (const surrogate::Observations& w : warm_) {
      request.data.tasks.push_back(w);
      request.trials.emplace_back();
      total += static_cast<std::size_t>(w.y.size());
    }
    for (int task = 0; task < static_cast<int>(job_.tasks.size()); ++task) {
      std::vector<Eigen::VectorXd> x;
      std::vector<std::int64_t> ids;
      for (std::int64_t id : state.task_trials(task)) {
        const Trial& t = state.trial(id);
        // Failed trials never enter a model: no NaN or infinity reaches surrogate/.
        if (!usable(t)) continue;
        x.push_back(encode(encoder_, t.config));
        ids.push_back(id);
      }
      const Eigen::MatrixXd X = rows(x, d);
      for (int step = 0; step < steps_; ++step) {
        Eigen::VectorXd y(static_cast<Eigen::Index>(ids.size()));
        for (std::size_t i = 0; i < ids.size(); ++i) y(static_cast<Eigen::Index>(i)) = value_of(state.trial(ids[i]), step);
        total += ids.size();
        request.data.tasks.push_back({X, std::move(y)});
        request.trials.push_back(ids);
      }
    }
    request.seed = jobs::trial_seed(job_.seed ^ 0xf17u, static_cast<std::int64_t>(total));
    return request;
  }

  // Runs on the refit thread (or the master's, in --sync mode): only this touches surrogate_.
  void fit(FitRequest request) {
    auto snapshot = std::make_shared<Snapshot>();
    snapshot->trials = std::move(request.trials);
    try {
      surrogate_->fit(request.data, request.seed);
      for (std::size_t t = 0; t < request.data.tasks.size(); ++t) {
        snapshot->posteriors.push_back(surrogate_->posterior(static_cast<int>(t)));
      }
      snapshot->state = surrogate_->state();
    } catch (const std::exception& e) {
      snapshot->error = e.what();
    }
    {
      std::lock_guard lock(mutex_);
      snapshot->version = ++fits_;
      published_ = std::move(snapshot);
      fitting_ = false;
    }
    cv_.notify_all();
  }

  // Master thread: take the newest published fit; GP-Hedge arms gain the new posterior mean
  // at the nominees they proposed since the last one.
  void adopt_latest() {
    std::shared_ptr<const Snapshot> latest;
    {
      std::lock_guard lock(mutex_);
      latest = published_;
    }
    if (!latest || (adopted_ && latest->version == adopted_->version)) return;
    if (!latest->error.empty()) {
      if (options_.log) options_.log("model fit failed (" + latest->error + "); proposals keep the previous model");
      auto kept = std::make_shared<Snapshot>(adopted_ ? *adopted_ : Snapshot{});
      kept->version = latest->version;
      adopted_ = std::move(kept);
      return;
    }
    adopted_ = latest;
    fitted_observations_ = 0;  // trials, each counted once however many steps it has
    for (const auto& ids : adopted_->trials) fitted_observations_ += static_cast<std::int64_t>(ids.size());
    fitted_observations_ /= steps_;
    for (std::size_t task = 0; task < nominees_.size(); ++task) {
      const auto posterior = posterior_at(task);
      if (posterior) {
        for (const auto& nominees : nominees_[task]) {
          Eigen::MatrixXd X(3, nominees[0].size());
          for (int a = 0; a < 3; ++a) X.row(a) = nominees[a].transpose();
          const Eigen::VectorXd mean = posterior->predict(X).mean;
          hedges_[task].reward({mean(0), mean(1), mean(2)});
        }
      }
      nominees_[task].clear();
    }
  }

  // Asynchronous mode: hand the newest data to the refit thread unless a fit is under way;
  // then remember to do it once that fit is published.
  void request_refit(const RunState& state) {
    {
      std::lock_guard lock(mutex_);
      if (fitting_ || request_) {
        stale_ = true;
        return;
      }
    }
    FitRequest request = training_data(state);
    {
      std::lock_guard lock(mutex_);
      request_ = std::move(request);
      fitting_ = true;
      stale_ = false;
    }
    cv_.notify_all();
  }

  void request_refit_if_stale(const RunState& state) {
    if (options_.sync) return;
    bool stale = false;
    {
      std::lock_guard lock(mutex_);
      stale = stale_ && !fitting_ && !request_;
    }
    if (stale) request_refit(state);
  }

  void refit_loop() {
    for (;;) {
      FitRequest request;
      {
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [&] { return stopping_ || request_.has_value(); });
        if (stopping_) return;
        request = std::move(*request_);
        request_.reset();
      }
      fit(std::move(request));
    }
  }

  const jobs::JobSpec& job_;
  jobs::Encoder encoder_;
  JobEncodedSpace search_space_;
  PolicyOptions options_;
  RandomPolicy random_;
  std::unique_ptr<surrogate::Surrogate> surrogate_;  // the fitting thread's alone
  int steps_ = 1;                                    // model tasks per run task

  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  std::shared_ptr<const Snapshot> published_;  // guarded by mutex_
  std::optional<FitRequest> request_;          // guarded
  bool fitting_ = false;                       // guarded: a request is queued or being fitted
  bool stale_ = false;                         // guarded: results came while fitting
  bool stopping_ = false;                      // guarded
  std::uint64_t fits_ = 0;                     // guarded
  std::thread thread_;

  std::vector<surrogate::Observations> warm_;  // warm-start tasks, encoded, larger is better
  std::vector<std::string> warm_sources_;

  // Master thread only.
  std::shared_ptr<const Snapshot> adopted_;
  std::int64_t fitted_observations_ = -1;  // observations behind adopted_'s fit
  std::vector<surrogate::GpHedge> hedges_;
  std::vector<std::vector<std::array<Eigen::VectorXd, 3>>> nominees_;
  std::int64_t fallbacks_ = 0;  // random proposals the job did not ask for, this process
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

std::vector<TaskModelReport> ModelPolicy::model_report() { return impl_->model_report(); }

void ModelPolicy::results_committed(const RunState& state) { impl_->results_committed(state); }

std::uint64_t ModelPolicy::fits_completed() const { return impl_->fits_completed(); }

void ModelPolicy::wait_for_fits(std::uint64_t count) const { impl_->wait_for_fits(count); }

std::vector<double> ModelPolicy::hedge_gains(int task) const { return impl_->hedge_gains(task); }

PolicyState ModelPolicy::state() { return impl_->state(); }

void ModelPolicy::restore(const PolicyState& saved, const RunState& run) { impl_->restore(saved, run); }

bool ModelPolicy::refit_due(const RunState& run) const { return impl_->refit_due(run); }

}  // namespace lbo::orchestrator
