#include "bases.hpp"

#include <algorithm>
#include <cmath>

#include "lbo/surrogate/surrogate.hpp"

namespace lbo::orchestrator {

namespace {

// Results a task needs before a GP on them alone is worth proposing from.
constexpr int kInterimResults = 3;
// The most results the master's thread fits a task's first interim GP on (milliseconds): a task
// whose results came in a wave (thousands of slots) gets a GP on this many of them at once
// (ModelData::fit_rows: the better half and a spread of the rest), and one on all of them from
// the thread. A fit on thousands here held every free slot for seconds.
constexpr int kInterimHere = 64;

// A fit is behind a task when at least as many results came after it as it has seen, and at
// least kInterimHere of them: a wave of trials that ended together (thousands of slots). Its
// hyperparameters were fitted on a few results (the wave's first), and a batch joins only its
// best TaskBatch::kJoined unseen results exactly, so a GP fitted on the wave's results proposes
// better than it until the next fit lands (seconds:
// bench/log/2026-11-28-simulated-scale-sixth-run-what-wave-is-proposed.md). A trickle of results, the
// usual case, never leaves the fit behind.
bool behind(std::size_t fitted, std::size_t results) {
  return results >= 2 * fitted && results - fitted >= static_cast<std::size_t>(kInterimHere);
}

}  // namespace

Bases::Bases(const jobs::JobSpec& job, const ModelData& data, const std::shared_ptr<const Snapshot>& adopted, bool transfers,
             bool sync, int threads, std::function<void(const std::string&)> log)
    : job_(job),
      data_(data),
      adopted_(adopted),
      transfers_(transfers),
      sync_(sync),
      threads_(threads),
      log_(std::move(log)),
      model_(jobs::traits_of(job.policy.surrogate).name) {}

std::shared_ptr<const surrogate::TaskPosterior> Bases::posterior_at(std::size_t k) const {
  if (!adopted_ || data_.warm_tasks() + k >= adopted_->posteriors.size()) return nullptr;
  return adopted_->posteriors[data_.warm_tasks() + k];
}

// Where `task`'s `step` proposes from: its own posterior in the newest fit, unless a burst of
// results came after it (behind); else, for a transfer model, the most recent earlier task's
// posterior (model-prior) while the task has fewer results than a design; else a GP fitted on
// the task's own results here and now, until the background fit covers them; else nothing (no
// result, no earlier task).
std::optional<Basis> Bases::of(const RunState& state, int task, int step) {
  std::optional<Basis> basis = choose(state, task, step);
  if (basis) say(state, task, step, *basis);
  return basis;
}

std::optional<Basis> Bases::choose(const RunState& state, int task, int step) {
  const std::vector<std::int64_t> results = data_.usable_trials(state, task, step);
  // No fit number in a note: the numbers are this process's, and a note must be a function of
  // the journal (a resumed --sync run writes the same one).
  const std::string fit_name = model_ + "'s newest fit";
  if (auto own = posterior_at(data_.slot(task, step))) {
    const std::vector<std::int64_t>& fitted = adopted_->trials[data_.model_task(task, step)];
    if (!behind(fitted.size(), results.size())) {
      // The task's interim GPs are done with (dropped once no fit of theirs is under way).
      std::unique_ptr<FitService>& interim = interims_[data_.slot(task, step)];
      if (interim && !interim->busy()) interim.reset();
      return Basis{Basis::Kind::fit, std::move(own), "fit " + std::to_string(adopted_->version), 0, &fitted, adopted_, {}};
    }
    return interim_of(state, task, step, results,
                      fit_name + " saw " + std::to_string(fitted.size()) + " of them, and the next one is not done yet");
  }
  const std::size_t n = results.size();
  if (transfers_ && static_cast<int>(n) < std::max(kInterimResults, job_.policy.initial_random)) {
    if (std::optional<Basis> prior = prior_of(state, task, step, n)) return prior;
  }
  if (static_cast<int>(n) >= kInterimResults) {
    return interim_of(state, task, step, results,
                      adopted_ ? fit_name + " was made before the task had a result, and the next one is not done yet"
                               : "no " + model_ + " fit has finished yet");
  }
  return std::nullopt;
}

void Bases::say(const RunState& state, int task, int step, const Basis& basis) {
  Said& said = said_[data_.slot(task, step)];
  if (basis.kind == Basis::Kind::interim) {
    if (said.interim++ == 0 && log_) {
      log_("task " + data_.name(state, task, step) + " proposes from an interim GP (proposed_by interim-gp) until " +
           model_ + " has a fit that covers its results: " + basis.note);
    }
  } else if (basis.kind == Basis::Kind::fit && !said.fit) {
    said.fit = true;
    if (said.interim > 0 && log_) {
      log_("task " + data_.name(state, task, step) + " proposes from " + model_ + "'s fit of it now, after " +
           std::to_string(said.interim) + " proposal(s) from its interim GP");
    }
  }
}

// The newest earlier model task with a posterior (run tasks before this one, then warm-start
// tasks): a task of a sequence is most like the one before it. Its best observation is the
// incumbent, in its standardized units.
std::optional<Basis> Bases::prior_of(const RunState& state, int task, int step, std::size_t results) const {
  if (!adopted_) return std::nullopt;
  const std::size_t warm = data_.warm_tasks(), steps = static_cast<std::size_t>(data_.steps());
  for (std::size_t k = data_.model_task(task, step); k-- > 0;) {
    if (k >= warm && (k - warm) % steps != static_cast<std::size_t>(step)) continue;
    const auto posterior = k < adopted_->posteriors.size() ? adopted_->posteriors[k] : nullptr;
    if (!posterior || k >= adopted_->best.size() || !std::isfinite(adopted_->best[k])) continue;
    const std::string earlier = k < warm ? "warm-start task " + data_.warm_sources()[k]
                                         : "task " + data_.name(state, static_cast<int>((k - warm) / steps),
                                                                static_cast<int>((k - warm) % steps));
    return Basis{Basis::Kind::prior,
                 posterior,
                 "prior " + std::to_string(adopted_->version) + "/" + std::to_string(k),
                 posterior->standardization().apply(adopted_->best[k]),
                 nullptr,
                 nullptr,
                 earlier + "'s posterior in " + model_ + "'s newest fit: the task has " +
                     std::to_string(results) + " result(s), fewer than a design"};
  }
  return std::nullopt;
}

// A plain GP on the task's own results, for the proposals made before the background fit
// covers the task. The first is fitted here (on kInterimHere of them at most: milliseconds);
// later ones on a thread of their own (FitService), while the newest one so far serves, the
// results it has not seen joined exactly. (--sync: each fitted here, on all of them, and from
// scratch: a fit that started from the last one would depend on which fits this process made, and
// a resumed run's proposals must be a function of the journal.)
std::optional<Basis> Bases::interim_of(const RunState& state, int task, int step, const std::vector<std::int64_t>& results,
                                       std::string why) {
  std::unique_ptr<FitService>& fits = interims_[data_.slot(task, step)];
  if (fits && sync_ && fits->latest() && fits->latest()->trials.front().size() < results.size()) fits.reset();
  if (!fits) fits = std::make_unique<FitService>(std::make_unique<surrogate::GpSurrogate>(),
                                                sync_ ? FitThread::none : FitThread::background, threads_);
  std::shared_ptr<const Snapshot> latest = fits->latest();
  const bool here = sync_ || !latest;
  // The request is built only when it is taken (not while the thread is busy with the last).
  if ((!latest || latest->trials.front().size() < results.size()) && (here || !fits->busy())) {
    const bool partial = here && !sync_ && static_cast<int>(results.size()) > kInterimHere;
    FitRequest request = interim_request(state, step, results, partial ? std::optional<int>(kInterimHere) : std::nullopt);
    if (here) {
      fits->fit_now(std::move(request));
      latest = fits->latest();
    } else {
      fits->request(std::move(request));
    }
    // A first fit on a subset covers every result (the batch does not condition the rest back
    // in); the thread fits on all of them at once.
    if (partial) fits->request(interim_request(state, step, results, std::nullopt));
  }
  if (!latest->error.empty() || !latest->posteriors.front()) return std::nullopt;
  return Basis{Basis::Kind::interim,
               latest->posteriors.front(),
               "interim " + std::to_string(latest->version),
               0,
               &latest->trials.front(),
               latest,
               "a GP on " + std::to_string(latest->trials.front().size()) + " of the task's " + std::to_string(results.size()) +
                   " results: " + std::move(why)};
}

// A GP fit on a model task's `results` (fit_rows() of them, with `cap` if smaller).
FitRequest Bases::interim_request(const RunState& state, int step, const std::vector<std::int64_t>& results,
                                  std::optional<int> cap) const {
  FitRequest request;
  auto [kept, kept_y] = data_.fit_subset(results, data_.values(state, results, step), cap);
  request.data.tasks.push_back({data_.encoded(state, kept), std::move(kept_y)});
  request.trials.push_back(results);
  request.seed = jobs::trial_seed(job_.seed ^ 0x1e7u, results.back());
  return request;
}

}  // namespace lbo::orchestrator
