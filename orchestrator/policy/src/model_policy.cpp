#include "lbo/orchestrator/model_policy.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <random>

#include "earlier_best.hpp"
#include "fit_service.hpp"
#include "task_batch.hpp"
#include "lbo/jobs/encoding.hpp"
#include "lbo/surrogate/acquisition.hpp"
#include "lbo/surrogate/batch.hpp"
#include "lbo/surrogate/hedge.hpp"
#include "lbo/surrogate/jumbo.hpp"
#include "lbo/surrogate/libo.hpp"
#include "lbo/surrogate/linalg.hpp"
#include "lbo/surrogate/maximizer.hpp"
#include "lbo/surrogate/surrogate.hpp"

namespace lbo::orchestrator {

namespace {

using surrogate::AcquisitionKind;

// Random fallbacks logged one by one; after that, every 100th.
constexpr std::int64_t kFallbacksLogged = 10;

// Results a task needs before a GP on them alone is worth proposing from.
constexpr int kInterimResults = 3;

// UCB's β on an earlier task's posterior (a later task's first wave, before a fit of its own):
// wide (3σ), so the points spread as a design would, drawn to where the earlier task was good.
constexpr double kDesignBeta = 9.0;

// [policy] transfer_best unset: earlier tasks' bests a new task of lbo or ablr starts with.
constexpr int kDefaultTransferBest = 2;

// The GP-Hedge portfolio, in arm order.
constexpr std::array<AcquisitionKind, 3> kHedgeArms = {AcquisitionKind::ucb, AcquisitionKind::ei, AcquisitionKind::pi};

AcquisitionKind acquisition_of(jobs::AcquisitionKind kind) {
  switch (kind) {
    case jobs::AcquisitionKind::ucb: return AcquisitionKind::ucb;
    case jobs::AcquisitionKind::pi: return AcquisitionKind::pi;
    default: return AcquisitionKind::ei;
  }
}

// "0.5", "1.23": a number for the log.
std::string format_number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", v);
  return text;
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

}  // namespace

class ModelPolicy::Impl {
 public:
  Impl(const jobs::JobSpec& job, PolicyOptions options)
      : job_(job),
        encoder_(job.space),
        search_space_(job.space, encoder_),
        options_(std::move(options)),
        random_(job.space, job.seed),
        steps_(std::max(1, job.objective.stepwise)),
        transfers_(job.policy.surrogate == jobs::SurrogateKind::lbo || job.policy.surrogate == jobs::SurrogateKind::ablr),
        fits_(make_surrogate(job, encoder_.dimension()), !options_.sync, options_.threads) {
    surrogate::use_threads(options_.threads);  // this thread's: proposals, and fits in --sync runs
    track_tasks();
    const int d = encoder_.dimension();
    for (const WarmTask& w : options_.warm_start) {
      std::vector<Eigen::VectorXd> x;
      for (const jobs::Config& c : w.configs) x.push_back(encode(encoder_, c));
      Eigen::VectorXd y(static_cast<Eigen::Index>(w.objectives.size()));
      for (std::size_t i = 0; i < w.objectives.size(); ++i) {
        y(static_cast<Eigen::Index>(i)) = w.direction == jobs::Direction::maximize ? w.objectives[i] : -w.objectives[i];
      }
      warm_.push_back({surrogate::stack_rows(x, d), std::move(y)});
      warm_sources_.push_back(w.source);
    }
  }

  /// The design `task` starts with: initial_random trials, or LiBO's ceil(sqrt(budget)/s^¼)
  /// for the s-th task of the model (warm-start tasks first); earlier tasks' bests first.
  int initial_design(int task) const {
    if (job_.policy.libo_exploration) {
      return jobs::libo_initial_random(job_.tasks[static_cast<std::size_t>(task)].budget,
                                       static_cast<int>(warm_.size()) + task + 1);
    }
    return job_.policy.initial_random;
  }

  // How many of `task`'s first trials are earlier tasks' bests (lbo and ablr by default).
  std::size_t transfer_best() const {
    return static_cast<std::size_t>(job_.policy.transfer_best.value_or(transfers_ ? kDefaultTransferBest : 0));
  }

  // The next earlier task's best configuration `task` has not taken, while its first
  // transfer_best() trials are handed out; else none. They are part of the task's initial
  // design (initial_random counts them), as the meta-learned design of Feurer et al.: measured
  // on bench/real, that is better than adding them before a full random design.
  std::optional<jobs::Config> earlier_best(const RunState& state, int task) const {
    const std::size_t count = transfer_best();
    if (count == 0 || static_cast<std::size_t>(state.tasks()[task].created) >= count) return std::nullopt;
    for (jobs::Config& c : earlier_bests(state, task, options_.warm_start, count)) {
      const auto& ids = state.task_trials(task);
      if (std::none_of(ids.begin(), ids.end(), [&](std::int64_t id) { return state.trial(id).config == c; })) return std::move(c);
    }
    return std::nullopt;
  }

  // A random point of `task`'s initial design, its categoricals balanced over the task's trials
  // so far (Space::sample_balanced): a 4-way model choice is covered by 4 design points, and
  // the families of the earlier bests are not drawn again before the others. Measured on
  // bench/real (bench/README.md). Seeded by the trial, as RandomPolicy's draws.
  jobs::Config design_point(const RunState& state, int task, std::int64_t trial) const {
    std::vector<jobs::Config> design;
    for (std::int64_t id : state.task_trials(task)) design.push_back(state.trial(id).config);
    std::mt19937_64 rng(jobs::trial_seed(job_.seed, trial));
    return job_.space.sample_balanced(rng, design);
  }

  jobs::Config propose(const RunState& state, int task, std::int64_t trial) {
    return propose_among(state, {task}, trial).config;
  }

  // Tasks still in their initial design (earlier tasks' bests, then random) go first (job
  // order): they need those points before an acquisition means anything. Otherwise every open task, and every step of a stepwise one,
  // nominates its acquisition maximizer and one nominee is drawn with probability ∝ its
  // acquisition value (SMS-DKL eq. 9; all values ≤ 0: uniform), seeded by the trial so --sync
  // runs repeat exactly.
  Proposal propose_among(const RunState& state, const std::vector<int>& open, std::int64_t trial) {
    track_tasks();
    adopt_latest();
    if (!options_.sync && fits_.stale()) fits_.request(training_data(state));
    std::vector<Nomination> nominees;
    for (int task : open) {
      if (std::optional<jobs::Config> best = earlier_best(state, task)) {
        return {task, std::move(*best), ProposalSource::earlier_best, {}};
      }
      if (state.tasks()[task].created < initial_design(task)) {
        return {task, design_point(state, task, trial), ProposalSource::initial, {}};
      }
      for (int step = 0; step < steps_; ++step) {
        std::optional<Nomination> n = nominate(state, task, step, trial);
        // Nothing to learn from yet (no result, no earlier task): the initial design goes on.
        if (!n) return {task, design_point(state, task, trial), ProposalSource::initial, {}};
        nominees.push_back(std::move(*n));
      }
    }
    std::size_t pick = 0;
    if (nominees.size() > 1) {
      std::vector<double> weights;
      for (const Nomination& n : nominees) weights.push_back(std::isfinite(n.value) ? std::max(n.value, 0.0) : 0.0);
      double total = 0;
      for (double w : weights) total += w;
      if (!(total > 0)) std::fill(weights.begin(), weights.end(), 1.0), total = static_cast<double>(weights.size());
      std::mt19937_64 rng(jobs::trial_seed(job_.seed ^ 0x4ed9e5u, trial));
      pick = std::discrete_distribution<std::size_t>(weights.begin(), weights.end())(rng);
      HedgeDraw draw{trial, open.size() > 1 ? "tasks" : "steps", {}, {}, {}, pick};
      for (std::size_t i = 0; i < nominees.size(); ++i) {
        draw.options.push_back(nominee_name(nominees[i].task, nominees[i].step));
        draw.probabilities.push_back(weights[i] / total);
      }
      if (options_.log) {
        std::string line = "trial " + std::to_string(trial) + ": hedge over " + (open.size() > 1 ? "open tasks" : "steps") + ":";
        for (std::size_t i = 0; i < nominees.size(); ++i) {
          char p[32];
          std::snprintf(p, sizeof p, " %.3f", draw.probabilities[i]);
          line += (i ? "," : "") + std::string(" ") + draw.options[i] + p;
        }
        options_.log(line + " -> " + draw.options[pick]);
      }
      if (options_.hedge) options_.hedge(draw);
    }
    Nomination& chosen = nominees[pick];
    if (chosen.arm_draw && options_.hedge) options_.hedge(*chosen.arm_draw);
    if (chosen.source == ProposalSource::random_fallback) note_fallback(trial, chosen.task, chosen.note);
    return {chosen.task, std::move(chosen.config), chosen.source, std::move(chosen.note)};
  }

  void results_committed(const RunState& state) {
    if (options_.sync) {
      fits_.fit_now(training_data(state));
      adopt_latest();
      return;
    }
    fits_.request(training_data(state));
  }

  std::uint64_t fits_completed() const { return fits_.fits_completed(); }
  void wait_for_fits(std::uint64_t count) const { fits_.wait_for_fits(count); }

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
        h.seeded = hedge_seeded_[t];
        for (const auto& arms : nominees_[t]) {
          std::vector<std::vector<double>> points;
          for (const Eigen::VectorXd& x : arms) points.emplace_back(x.data(), x.data() + x.size());
          h.nominees.push_back(std::move(points));
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
      // A version 1 state (before Hedge memory) drew if it holds any gain or nominee.
      hedge_seeded_[t] = h.seeded || !h.nominees.empty() ||
                         std::any_of(h.gains.begin(), h.gains.end(), [](double g) { return g != 0; });
      nominees_[t].clear();
      for (const auto& arms : h.nominees) {
        if (arms.size() != kHedgeArms.size()) continue;
        HedgeNominees points;
        for (std::size_t a = 0; a < arms.size(); ++a) {
          points[a] = Eigen::Map<const Eigen::VectorXd>(arms[a].data(), static_cast<Eigen::Index>(arms[a].size()));
        }
        nominees_[t].push_back(std::move(points));
      }
    }
    if (!saved.surrogate.gp && !saved.surrogate.ablr && !saved.surrogate.lbo && !saved.surrogate.libo &&
        !saved.surrogate.jumbo) {
      return;
    }
    if (saved.steps != steps_) {
      if (options_.log) options_.log("objective.stepwise changed since the checkpoint; the model is fitted afresh");
      return;
    }
    if (saved.warm_sources != warm_sources_) {
      if (options_.log) options_.log("the warm-start tasks changed since the checkpoint; the model is fitted afresh");
      return;
    }
    try {
      fits_.restore(saved.surrogate, training_data(run));
    } catch (const std::exception& e) {
      if (options_.log) options_.log(std::string("cannot rebuild the saved model (") + e.what() + "); it is fitted afresh");
      return;
    }
    adopted_ = fits_.latest();
  }

  std::vector<TaskModelReport> model_report() {
    track_tasks();
    adopt_latest();
    std::vector<TaskModelReport> reports(job_.tasks.size() * static_cast<std::size_t>(steps_));
    if (!adopted_) return reports;
    const std::optional<surrogate::LboState>& lbo = adopted_->state.lbo;
    const std::optional<surrogate::LiboState>& libo = adopted_->state.libo;
    // The posterior means at points spread across the space (a fixed stream: reports of the
    // same fit agree), correlated task by task.
    constexpr int kPoints = 256;
    std::mt19937_64 rng(job_.seed ^ 0x5151u);
    std::vector<Eigen::VectorXd> points;
    for (int i = 0; i < kPoints; ++i) points.push_back(encode(encoder_, job_.space.sample(rng)));
    const Eigen::MatrixXd X = surrogate::stack_rows(points, encoder_.dimension());
    std::vector<Eigen::VectorXd> centred(reports.size());
    for (std::size_t k = 0; k < reports.size(); ++k) {
      if (lbo && warm_.size() + k < lbo->tasks.size()) {
        reports[k].usage = lbo->tasks[warm_.size() + k].usage();
      }
      if (libo && warm_.size() + k < libo->task_kernels.size()) reports[k].kernels = libo->task_kernels[warm_.size() + k];
      if (const auto& jumbo = adopted_->state.jumbo; jumbo && !adopted_->trials[warm_.size() + k].empty()) {
        reports[k].kernels = surrogate::describe_jumbo_task(*jumbo, warm_.size() + k);
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
    if (task < 0 || k >= hedges_.size()) return surrogate::GpHedge(static_cast<int>(kHedgeArms.size()), job_.policy.hedge_eta).gains();
    return hedges_[k].gains();
  }

 private:
  using HedgeNominees = std::array<Eigen::VectorXd, kHedgeArms.size()>;

  // One open task's (or step's) candidate for the next trial.
  struct Nomination {
    int task = 0, step = 0;
    jobs::Config config;
    double value = 0;  ///< its acquisition value, in the task's standardized units
    ProposalSource source = ProposalSource::model;
    std::string note;
    std::optional<HedgeDraw> arm_draw;  ///< GP-Hedge's choice of its acquisition function
  };

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

  // Where `task`'s `step` proposes from: its own posterior in the newest fit; else, for a
  // transfer model, the most recent earlier task's posterior (model-prior) while the task has
  // fewer results than a design; else a GP fitted on the task's own results here and now, until
  // the background fit covers them; else nothing (no result, no earlier task).
  std::optional<Basis> basis_of(const RunState& state, int task, int step) {
    if (auto own = posterior_of(task, step)) {
      // The task's interim GPs are done with (dropped once no fit of theirs is under way).
      std::unique_ptr<FitService>& interim = interims_[slot(task, step)];
      if (interim && !interim->busy()) interim.reset();
      return Basis{Basis::Kind::fit, std::move(own), "fit " + std::to_string(adopted_->version), 0,
                   &adopted_->trials[model_task(task, step)], adopted_};
    }
    const std::vector<std::int64_t> results = usable_trials(state, task);
    if (transfers_ && static_cast<int>(results.size()) < std::max(kInterimResults, job_.policy.initial_random)) {
      if (std::optional<Basis> prior = prior_of(task, step)) return prior;
    }
    if (static_cast<int>(results.size()) >= kInterimResults) return interim_of(state, task, step, results);
    return std::nullopt;
  }

  // The newest earlier model task with a posterior (run tasks before this one, then warm-start
  // tasks): a task of a sequence is most like the one before it. Its best observation is the
  // incumbent, in its standardized units.
  std::optional<Basis> prior_of(int task, int step) const {
    if (!adopted_) return std::nullopt;
    for (std::size_t k = model_task(task, step); k-- > 0;) {
      if (k >= warm_.size() && (k - warm_.size()) % static_cast<std::size_t>(steps_) != static_cast<std::size_t>(step)) continue;
      const auto posterior = k < adopted_->posteriors.size() ? adopted_->posteriors[k] : nullptr;
      if (!posterior || k >= adopted_->best.size() || !std::isfinite(adopted_->best[k])) continue;
      return Basis{Basis::Kind::prior, posterior, "prior " + std::to_string(adopted_->version) + "/" + std::to_string(k),
                   posterior->standardization().apply(adopted_->best[k])};
    }
    return std::nullopt;
  }

  // A plain GP on the task's own results, for the proposals made before the background fit
  // covers the task. The first is fitted here (a few points: milliseconds); later ones on a
  // thread of their own (FitService), while the newest one so far serves, the results it has
  // not seen joined exactly. (--sync: each fitted here.)
  std::optional<Basis> interim_of(const RunState& state, int task, int step, const std::vector<std::int64_t>& results) {
    std::unique_ptr<FitService>& fits = interims_[slot(task, step)];
    if (!fits) fits = std::make_unique<FitService>(std::make_unique<surrogate::GpSurrogate>(), !options_.sync, options_.threads);
    std::shared_ptr<const Snapshot> latest = fits->latest();
    const bool here = options_.sync || !latest;
    // The request is built only when it is taken (not while the thread is busy with the last).
    if ((!latest || latest->trials.front().size() < results.size()) && (here || !fits->busy())) {
      FitRequest request;
      request.data.tasks.push_back({encoded(state, results), values(state, results, step)});
      request.trials.push_back(results);
      request.seed = jobs::trial_seed(job_.seed ^ 0x1e7u, results.back());
      if (here) {
        fits->fit_now(std::move(request));
        latest = fits->latest();
      } else {
        fits->request(std::move(request));
      }
    }
    if (!latest->error.empty() || !latest->posteriors.front()) return std::nullopt;
    return Basis{Basis::Kind::interim, latest->posteriors.front(), "interim " + std::to_string(latest->version), 0,
                 &latest->trials.front(), latest};
  }

  // The usable results of `task`, ascending ids.
  std::vector<std::int64_t> usable_trials(const RunState& state, int task) const {
    std::vector<std::int64_t> ids;
    for (std::int64_t id : state.task_trials(task)) {
      if (usable(state.trial(id))) ids.push_back(id);
    }
    return ids;
  }

  // The maximizer of `step`'s acquisition for `task` (a configuration the task has not taken)
  // and its acquisition value; none while the task has nothing to learn from.
  std::optional<Nomination> nominate(const RunState& state, int task, int step, std::int64_t trial, bool retry = true) {
    const std::optional<Basis> basis = basis_of(state, task, step);
    if (!basis) return std::nullopt;
    const std::size_t k = slot(task, step);
    const std::uint64_t seed = jobs::trial_seed(job_.seed ^ 0x5eedac9u, trial) + 7919u * static_cast<std::uint64_t>(k);
    TaskBatch& batch = batches_[k];
    const BatchSettings settings{&search_space_, surrogate::MaximizerOptions{job_.policy.candidates, job_.policy.refine},
                                 job_.policy.xi, options_.sync};
    batch.update(trials_of(state, task, step), *basis, settings, seed);

    // On another task's posterior, UCB: EI's and PI's incumbent is the other task's, and once the
    // batch's believed values pass it their improvement is flat, so a wave would pile up.
    const bool hedge = job_.policy.acquisition == jobs::AcquisitionKind::hedge && basis->kind != Basis::Kind::prior;
    std::vector<AcquisitionKind> arms;
    if (hedge) {
      arms.assign(kHedgeArms.begin(), kHedgeArms.end());
    } else {
      arms.push_back(basis->kind == Basis::Kind::prior ? AcquisitionKind::ucb : acquisition_of(job_.policy.acquisition));
    }
    surrogate::AcquisitionParams params = batch.params();
    const int t = batch.count() + 1;
    params.ucb_beta = job_.policy.ucb_beta.value_or(
        surrogate::ucb_beta_schedule(t, encoder_.dimension(), job_.policy.ucb_delta, job_.policy.ucb_scale));
    // A wave on another task's posterior needs a wide β: the hallucinated points keep the mean,
    // and with a narrow β they would crowd the prior's peak.
    if (basis->kind == Basis::Kind::prior) params.ucb_beta = kDesignBeta;
    const auto started = std::chrono::steady_clock::now();
    const bool refine = batch.refine_due(options_.sync);
    std::vector<std::vector<surrogate::Maximum>> ranked;
    for (std::size_t a = 0; a < arms.size(); ++a) ranked.push_back(batch.proposer().next(arms[a], params, refine));
    if (refine) batch.refined(started);

    Nomination n;
    n.task = task;
    n.step = step;
    n.source = batch.source();
    std::size_t arm = 0;
    std::mt19937_64 rng(seed);
    if (hedge) {
      seed_hedge(task, step);
      arm = static_cast<std::size_t>(hedges_[k].choose(rng));
      n.arm_draw = HedgeDraw{trial, "acquisition", nominee_name(task, step), {}, hedges_[k].probabilities(), arm};
      for (AcquisitionKind a : kHedgeArms) n.arm_draw->options.emplace_back(surrogate::to_string(a));
      HedgeNominees points;
      for (std::size_t a = 0; a < kHedgeArms.size(); ++a) points[a] = ranked[a].front().x;
      nominees_[k].push_back(std::move(points));
    }
    // A configuration this task has already (or is now) evaluating is not proposed again, as in
    // scikit-optimize: with an overconfident model the maximizer can return to the incumbent
    // over and over, and two running trials must never share a configuration.
    std::vector<const jobs::Config*> taken;
    for (std::int64_t id : state.task_trials(task)) taken.push_back(&state.trial(id).config);
    const auto is_taken = [&](const jobs::Config& c) {
      return std::any_of(taken.begin(), taken.end(), [&](const jobs::Config* p) { return *p == c; });
    };
    for (const surrogate::Maximum& m : ranked[arm]) {
      jobs::Config config = encoder_.decode(std::span<const double>(m.x.data(), static_cast<std::size_t>(m.x.size())));
      if (is_taken(config)) continue;
      n.config = std::move(config);
      n.value = m.value;
      return n;
    }
    // Every candidate is taken. A batch that has proposed some of them draws new candidates;
    // else (a small discrete space) any configuration that is not taken.
    if (retry && batch.proposer().size() > 0) {
      if (hedge) nominees_[k].pop_back();
      batch.invalidate();
      return nominate(state, task, step, trial, false);
    }
    n.source = ProposalSource::random_fallback;
    n.note = "every configuration the acquisition ranks high is taken by the task already";
    for (int i = 0; i < 100; ++i) {
      jobs::Config config = job_.space.sample(rng);
      if (!is_taken(config)) {
        n.config = std::move(config);
        return n;
      }
    }
    n.config = random_.propose(state, task, trial);
    return n;
  }

  // `task`'s trials as the batch of its `step` sees them.
  TaskTrials trials_of(const RunState& state, int task, int step) const {
    return {state, task, [this](const Trial& t) { return encode(encoder_, t.config); },
            [this](const Trial& t) { return usable(t); }, [this, step](const Trial& t) { return value_of(t, step); }};
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

  // Tasks added to the run since: their GP-Hedge portfolios and proposers start afresh.
  // Hedge memory: at a task's (step's) first GP-Hedge draw its gains start at hedge_memory ×
  // those of the latest earlier task that has drawn (the same step), so a portfolio that learned
  // which acquisition pays on this family starts the next task knowing it, and forgets it as the
  // task's own rewards come in.
  void seed_hedge(int task, int step) {
    const std::size_t k = slot(task, step);
    if (hedge_seeded_[k]) return;
    hedge_seeded_[k] = true;
    if (job_.policy.hedge_memory <= 0) return;
    for (int earlier = task - 1; earlier >= 0; --earlier) {
      const std::size_t j = slot(earlier, step);
      if (!hedge_seeded_[j]) continue;
      std::vector<double> seed = hedges_[j].gains();
      for (double& g : seed) g *= job_.policy.hedge_memory;
      hedges_[k].reward(seed);
      if (options_.log) {
        std::string line = nominee_name(task, step) + ": GP-Hedge gains start at hedge_memory " +
                           format_number(job_.policy.hedge_memory) + " x " + nominee_name(earlier, step) + "'s:";
        for (std::size_t a = 0; a < kHedgeArms.size(); ++a) {
          line += std::string(a ? "," : "") + " " + std::string(surrogate::to_string(kHedgeArms[a])) + " " + format_number(seed[a]);
        }
        options_.log(line);
      }
      return;
    }
  }

  void track_tasks() {
    const std::size_t slots = job_.tasks.size() * static_cast<std::size_t>(steps_);
    while (hedges_.size() < slots) hedges_.emplace_back(static_cast<int>(kHedgeArms.size()), job_.policy.hedge_eta);
    hedge_seeded_.resize(std::max(hedge_seeded_.size(), slots), false);
    nominees_.resize(std::max(nominees_.size(), slots));
    batches_.resize(std::max(batches_.size(), slots));
    interims_.resize(std::max(interims_.size(), slots));
  }

  // Larger is better inside the models: a minimize job negates its objective.
  double oriented(double objective) const {
    return job_.objective.direction == jobs::Direction::maximize ? objective : -objective;
  }

  // The trials' configurations, encoded, as rows.
  Eigen::MatrixXd encoded(const RunState& state, const std::vector<std::int64_t>& ids) const {
    std::vector<Eigen::VectorXd> x;
    for (std::int64_t id : ids) x.push_back(encode(encoder_, state.trial(id).config));
    return surrogate::stack_rows(x, encoder_.dimension());
  }

  // What the trials (usable results) say of `step`, larger is better.
  Eigen::VectorXd values(const RunState& state, const std::vector<std::int64_t>& ids, int step) const {
    Eigen::VectorXd y(static_cast<Eigen::Index>(ids.size()));
    for (std::size_t i = 0; i < ids.size(); ++i) y(static_cast<Eigen::Index>(i)) = value_of(state.trial(ids[i]), step);
    return y;
  }

  FitRequest training_data(const RunState& state) const {
    FitRequest request;
    std::size_t total = 0;
    surrogate::TaskData& data = request.data;
    for (const surrogate::Observations& w : warm_) {
      data.tasks.push_back(w);
      request.trials.emplace_back();
      total += static_cast<std::size_t>(w.y.size());
      // An earlier run's finished task: all of it counts as exploration (its proposal sources
      // are not carried over).
      data.finished.push_back(true);
      data.exploration.emplace_back(static_cast<std::size_t>(w.y.size()));
      std::iota(data.exploration.back().begin(), data.exploration.back().end(), Eigen::Index{0});
    }
    for (int task = 0; task < static_cast<int>(job_.tasks.size()); ++task) {
      // Failed trials never enter a model: no NaN or infinity reaches surrogate/.
      const std::vector<std::int64_t> ids = usable_trials(state, task);
      const Eigen::MatrixXd X = encoded(state, ids);
      // The task's uniform exploration: its random initial design (LiBO's D^exp).
      std::vector<Eigen::Index> exploration;
      for (std::size_t i = 0; i < ids.size(); ++i) {
        if (state.trial(ids[i]).proposed_by == ProposalSource::initial) exploration.push_back(static_cast<Eigen::Index>(i));
      }
      const bool finished = state.tasks()[task].finished >= job_.tasks[static_cast<std::size_t>(task)].budget;
      for (int step = 0; step < steps_; ++step) {
        total += ids.size();
        data.tasks.push_back({X, values(state, ids, step)});
        data.finished.push_back(finished);
        data.exploration.push_back(exploration);
        request.trials.push_back(ids);
      }
    }
    request.seed = jobs::trial_seed(job_.seed ^ 0xf17u, static_cast<std::int64_t>(total));
    return request;
  }

  // Take the newest published fit; GP-Hedge arms gain the new posterior mean at the nominees
  // they proposed since the last one.
  void adopt_latest() {
    const std::shared_ptr<const Snapshot> latest = fits_.latest();
    if (!latest || (adopted_ && latest->version == adopted_->version)) return;
    if (!latest->error.empty()) {
      if (options_.log) options_.log("model fit failed (" + latest->error + "); proposals keep the previous model");
      auto kept = std::make_shared<Snapshot>(adopted_ ? *adopted_ : Snapshot{});
      kept->version = latest->version;
      adopted_ = std::move(kept);
      return;
    }
    log_jumbo_network(adopted_ ? adopted_->state.jumbo : std::nullopt, latest->state.jumbo);
    log_model_switches(adopted_.get(), *latest);
    adopted_ = latest;
    fitted_observations_ = 0;  // trials, each counted once however many steps it has
    for (const auto& ids : adopted_->trials) fitted_observations_ += static_cast<std::int64_t>(ids.size());
    fitted_observations_ /= steps_;
    for (std::size_t task = 0; task < nominees_.size(); ++task) {
      const auto posterior = posterior_at(task);
      if (posterior) {
        for (const HedgeNominees& arms : nominees_[task]) {
          Eigen::MatrixXd X(static_cast<Eigen::Index>(kHedgeArms.size()), arms[0].size());
          for (std::size_t a = 0; a < kHedgeArms.size(); ++a) X.row(static_cast<Eigen::Index>(a)) = arms[a].transpose();
          const Eigen::VectorXd mean = posterior->predict(X).mean;
          hedges_[task].reward(std::vector<double>(mean.data(), mean.data() + mean.size()));
        }
      }
      nominees_[task].clear();
    }
  }

  // JUMBO: what the warm network learned from, when it changes (and that there is none yet).
  void log_jumbo_network(const std::optional<surrogate::JumboState>& before,
                         const std::optional<surrogate::JumboState>& after) const {
    if (!options_.log || !after || (before && before->trained_key == after->trained_key && !before->network.empty())) {
      return;
    }
    if (after->network.empty()) {
      if (!before) options_.log("jumbo: no task has finished yet: proposals come from each task's cold GP alone");
      return;
    }
    std::int64_t rows = 0;
    for (std::size_t i = 1; i < after->trained_key.size(); i += 2) rows += after->trained_key[i];
    options_.log("jumbo: the warm network learned from " + std::to_string(after->trained_key.size() / 2) +
                 " finished task(s), " + std::to_string(rows) +
                 " results; open tasks propose from the cold GP among the warm GP's best (jumbo_threshold " +
                 format_number(job_.policy.jumbo_threshold) + ")" +
                 (job_.policy.jumbo_cold_switch
                      ? ", or from the cold GP alone while it predicts their results better (jumbo_cold_switch)"
                      : ""));
  }

  // The leave-one-out densities of a model's two GPs per model task, the one a switch takes
  // where it is the higher first (JUMBO: cold alone, warm; LiBO: plain, k̂). NaN: not compared.
  struct SwitchDensities {
    const std::vector<double>* taken = nullptr;
    const std::vector<double>* other = nullptr;
    bool compared(std::size_t m) const {
      return taken && other && m < taken->size() && m < other->size() && !std::isnan((*taken)[m]) &&
             !std::isnan((*other)[m]);
    }
    bool takes(std::size_t m) const { return compared(m) && (*taken)[m] > (*other)[m]; }
  };

  // Each run task whose switch moved between a fit and the next (a first comparison that takes
  // the switch counts as a move): "<model>: <task> proposes from <describe(model task)>".
  void log_switches(const std::string& model, SwitchDensities before, SwitchDensities after,
                    const std::function<std::string(std::size_t)>& describe) const {
    for (std::size_t k = 0; k < job_.tasks.size() * static_cast<std::size_t>(steps_); ++k) {
      const std::size_t m = warm_.size() + k;
      if (!after.compared(m) || after.takes(m) == before.takes(m)) continue;
      std::string name = job_.tasks[k / static_cast<std::size_t>(steps_)].name;
      if (steps_ > 1) name += "/step_" + std::to_string(k % static_cast<std::size_t>(steps_) + 1);
      options_.log(model + ": " + name + " proposes from " + describe(m));
    }
  }

  void log_model_switches(const Snapshot* before, const Snapshot& after) const {
    if (!options_.log) return;
    if (const auto& jumbo = after.state.jumbo; jumbo && !jumbo->network.empty() && job_.policy.jumbo_cold_switch) {
      SwitchDensities old;
      if (before && before->state.jumbo && !before->state.jumbo->network.empty()) {
        old = {&before->state.jumbo->loo_cold, &before->state.jumbo->loo_warm};
      }
      log_switches("jumbo", old, {&jumbo->loo_cold, &jumbo->loo_warm}, [&](std::size_t m) {
        return surrogate::describe_jumbo_task(*jumbo, m) +
               (surrogate::jumbo_cold_alone(*jumbo, m) ? ": the warm GP's features predict its own results worse" : "");
      });
    }
    if (const auto& libo = after.state.libo; libo && job_.policy.libo_gp_switch) {
      SwitchDensities old;
      if (before && before->state.libo) old = {&before->state.libo->loo_plain, &before->state.libo->loo_learned};
      log_switches("libo", old, {&libo->loo_plain, &libo->loo_learned}, [&](std::size_t m) {
        return surrogate::libo_plain_chosen(*libo, m) ? libo->task_kernels[m]
                                                      : "its k̂ GP (k̂: " + libo->task_kernels[m] + ")";
      });
    }
  }

  const jobs::JobSpec& job_;
  jobs::Encoder encoder_;
  JobEncodedSpace search_space_;
  PolicyOptions options_;
  RandomPolicy random_;
  int steps_ = 1;          // model tasks per run task
  bool transfers_ = false;  // the model learns across tasks (lbo, ablr)
  FitService fits_;

  std::vector<surrogate::Observations> warm_;  // warm-start tasks, encoded, larger is better
  std::vector<std::string> warm_sources_;

  // Master thread only.
  std::shared_ptr<const Snapshot> adopted_;
  std::int64_t fitted_observations_ = -1;  // observations behind adopted_'s fit
  std::vector<surrogate::GpHedge> hedges_;
  std::vector<bool> hedge_seeded_;  // per slot: its first draw happened (seed_hedge)
  std::vector<std::vector<HedgeNominees>> nominees_;
  std::vector<TaskBatch> batches_;  // per run model task
  std::vector<std::unique_ptr<FitService>> interims_;  // per run model task: its interim GPs
  std::int64_t fallbacks_ = 0;     // random proposals the job did not ask for, this process
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
