#include "initial_design.hpp"

#include <algorithm>
#include <limits>
#include <random>

#include "earlier_best.hpp"
#include "failure_model.hpp"
#include "table_rows.hpp"

namespace lbo::orchestrator {

InitialDesign::InitialDesign(const jobs::JobSpec& job, const std::vector<WarmTask>& warm_start)
    : job_(job),
      warm_start_(warm_start),
      rows_(TableRows::of(job)),
      encoder_(job.space) {}

int InitialDesign::size(const RunState& state, int task) const {
  if (job_.policy.libo_exploration) {
    return jobs::libo_initial_random(state.job().tasks[static_cast<std::size_t>(task)].budget,
                                     static_cast<int>(warm_start_.size()) + task + 1);
  }
  return job_.policy.initial_random;
}

// The earlier bests are part of the task's initial design (initial_random counts them), as the
// meta-learned design of Feurer et al.: measured on bench/real, that is better than adding
// them before a full random design.
//
// Unset, with lbo, the count grows with the earlier tasks: half their distinct bests, at least
// 2 (ablr keeps 2: not measured). Measured
// (bench/log/2026-11-28-transfer-published-sixth-run-how-many-earlier-bests.md): with ten earlier
// tasks, five bests took lbo's best after 5 DeepAR trials from 14.0% to 7.8% of the task's rows better, level later; with the one to four earlier tasks of a Branin
// sequence, the random points were worth more than more bests (a few random points tell the
// model how the new task differs).
std::size_t InitialDesign::transfer_best(const RunState& state, int task) const {
  if (!grows()) return least_bests();
  return std::max(least_bests(), earlier_bests(state, task, warm_start_, std::numeric_limits<std::size_t>::max()).size() / 2);
}

std::size_t InitialDesign::least_bests() const {
  return static_cast<std::size_t>(
      job_.policy.transfer_best.value_or(jobs::traits_of(job_.policy.surrogate).transfer_best));
}

bool InitialDesign::grows() const {
  return !job_.policy.transfer_best && jobs::traits_of(job_.policy.surrogate).transfer_best_grows;
}

std::optional<jobs::Config> InitialDesign::earlier_best(const RunState& state, int task, FailureModel* failures,
                                                        std::string* note) const {
  // This runs for every open task at every proposal: a task past as many bests as it could
  // take (half its earlier tasks, whether or not their bests differ) does not scan them.
  const auto created = static_cast<std::size_t>(state.tasks()[task].created);
  const std::size_t most =
      grows() ? std::max(least_bests(), (static_cast<std::size_t>(task) + warm_start_.size()) / 2) : least_bests();
  if (created >= most) return std::nullopt;
  const std::size_t count = transfer_best(state, task);
  if (created >= count) return std::nullopt;
  const std::shared_ptr<const surrogate::FeasibilityModel> model = failures != nullptr ? failures->current(state) : nullptr;
  ChosenBests chosen = chosen_bests(state, task, count);
  std::vector<jobs::Config>& bests = chosen.bests;
  for (std::size_t i = 0; i < bests.size(); ++i) {
    jobs::Config& c = bests[i];
    if (rows_) {
      // An earlier task's best is another task's row: its nearest row of this task stands for
      // it, and once the task has taken that row (this best's trial, another best's with the
      // same nearest row, or any other trial) the best is evaluated. Before 2026-12-06 the
      // nearest *untaken* row stood for it, so every later call went to the first best's next
      // neighbour: a design of one best's neighbourhood, labelled earlier bests.
      std::optional<jobs::Config> row = rows_->nearest_if_untaken(state, task, c);
      if (!row) continue;
      c = std::move(*row);
    }
    const auto& ids = state.task_trials(task);
    if (std::any_of(ids.begin(), ids.end(), [&](std::int64_t id) { return state.trial(id).config == c; })) continue;
    // An earlier best is not proposed where the failure model expects it to fail (it failed on
    // this task, or like configurations failed on the others).
    if (model && failures->weight(model.get(), task, c) < kLikelyEnough) {
      if (note != nullptr) {
        *note += (note->empty() ? "" : "; ") + std::string("passed over an earlier best: ") +
                 FailureModel::note(failures->probability(model.get(), task, c));
      }
      continue;
    }
    if (note != nullptr && job_.policy.transfer_best_choice == jobs::TransferBestChoice::portfolio && bests.size() > 1) {
      *note += (note->empty() ? "" : "; ") + std::string("earlier best ") + std::to_string(i + 1) + " of " +
               std::to_string(bests.size()) +
               (chosen.in_portfolio_order ? " in portfolio order (transfer_best_choice)"
                                          : " in recent order: too few earlier results to score a portfolio");
    }
    return std::move(c);
  }
  return std::nullopt;
}

InitialDesign::ChosenBests InitialDesign::chosen_bests(const RunState& state, int task, std::size_t count) const {
  if (job_.policy.transfer_best_choice == jobs::TransferBestChoice::recent) {
    return {earlier_bests(state, task, warm_start_, count), false};
  }
  std::int64_t finished = 0;
  for (int k = 0; k < task && k < static_cast<int>(state.tasks().size()); ++k) {
    finished += state.tasks()[static_cast<std::size_t>(k)].finished;
  }
  Portfolio& p = portfolios_[task];
  if (p.finished != finished) p = {finished, portfolio_bests(state, task, warm_start_, encoder_)};
  if (!p.bests) return {earlier_bests(state, task, warm_start_, count), false};
  return {{p.bests->begin(), p.bests->begin() + static_cast<std::ptrdiff_t>(std::min(count, p.bests->size()))}, true};
}

// Its categoricals balanced over the task's trials so far (Space::sample_balanced): a 4-way
// model choice is covered by 4 design points, and the families of the earlier bests are not
// drawn again before the others. Measured on bench/real (bench/README.md). Seeded by the
// trial, as RandomPolicy's draws.
jobs::Config InitialDesign::point(const RunState& state, int task, std::int64_t trial, FailureModel* failures,
                                  std::string* note) const {
  std::vector<jobs::Config> design;
  for (std::int64_t id : state.task_trials(task)) design.push_back(state.trial(id).config);
  std::mt19937_64 rng(jobs::trial_seed(job_.seed, trial));
  if (rows_) {
    if (std::optional<jobs::Config> row = rows_->draw(state, task, rng)) return std::move(*row);
  }
  const std::shared_ptr<const surrogate::FeasibilityModel> model = failures != nullptr ? failures->current(state) : nullptr;
  if (!model) return job_.space.sample_balanced(rng, design);
  // Rejection sampling: a draw is kept when the failure model expects it to succeed (at least
  // kLikelyEnough), so the design is spread as before over where trials succeed. Kept with its
  // probability instead, 6 of 20 design points still fell in a corner where a third of an
  // earlier task's trials had failed (their probabilities 0.15 to 0.35): too lenient.
  jobs::Config likeliest;
  double highest = -1;
  // By the weight the proposals use: with a limit, its probability counts sharper (kLimitSharpness).
  for (int draw = 0; draw < kDesignDraws; ++draw) {
    jobs::Config c = job_.space.sample_balanced(rng, design);
    const double w = failures->weight(model.get(), task, c);
    if (w >= kLikelyEnough) {
      if (note != nullptr) {
        *note = FailureModel::note(failures->probability(model.get(), task, c)) +
                (draw > 0 ? " (a random point the failure model expects to succeed; " + std::to_string(draw) +
                                " draws before it were not)"
                          : std::string());
      }
      return c;
    }
    if (w > highest) {
      highest = w;
      likeliest = std::move(c);
    }
  }
  if (note != nullptr) {
    *note = FailureModel::note(failures->probability(model.get(), task, likeliest)) + " (the likeliest of " +
            std::to_string(kDesignDraws) + " random points)";
  }
  return likeliest;
}

}  // namespace lbo::orchestrator
