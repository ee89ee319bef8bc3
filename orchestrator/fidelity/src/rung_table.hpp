#pragma once
// The rung table (private to fidelity/): what the early-stopping rules (early_stopping.hpp) and
// ASHA's promotions (promotions.hpp) both read of a task's trials. Every figure is a function
// of the run state (the journal) and of the trial ids and the seed.
//
// Rungs: bracket b's rung steps are r·η^(b+k) below max_step (jobs::EarlyStoppingSpec::rungs).
// A trial's bracket (hyperband; 0 otherwise) is drawn with Hyperband's weights,
// η^(B−1−b)/(B−b) for bracket b of B (Li et al., JMLR 2018), from the golden-ratio sequence of
// its id and the seed: no hash, so the same on every rank count and after a resume. A trial's
// value at a rung is its first report at or past the rung's step in its curve: its newest
// attempt's reports (stop mode: a retry starts again), or all of its attempts' (promotion
// mode: an attempt resumes where the last one was paused); a stopped or paused trial's only up
// to the step it was stopped on.
// Transfer (RUSH, Zappella et al., "Resource-Aware Asynchronous Online Hyperparameter
// Optimization", 2021): a new task starts with earlier tasks' best configurations ([policy]
// transfer_best, proposed_by earlier-best); the best value they have at a rung is a hurdle
// there, and a trial below it is stopped whatever the rule says.

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lbo/jobs/job_spec.hpp"
#include "lbo/orchestrator/run_state.hpp"

namespace lbo::orchestrator {

/// An attempt to end at a rung: stopped for good, or (promotion mode) paused there.
struct StopDecision {
  std::int64_t trial = 0;
  int attempt = 1;
  std::int64_t step = 0;  ///< the step of its report at or past the rung
  double value = 0;       ///< its value there: the stopped trial's objective
  double elapsed_s = 0;   ///< when it reported it, since the attempt started
  std::string reason;     ///< "asha at epoch 9 (rung 2 of 3): 0.41 is below the cutoff 0.52 of 7 trials"
  bool pause = false;     ///< promotion mode: paused at its rung, not stopped for good
  /// The predictive rule: the forecast of its value at max_step it was judged by (Outcome::forecast).
  double forecast = std::numeric_limits<double>::quiet_NaN();
};

class RungTable {
 public:
  struct AtRung {
    std::int64_t step = 0;
    double value = 0;
    double elapsed_s = 0;
  };
  using Reports = std::pair<std::vector<StepReport>::const_iterator, std::vector<StepReport>::const_iterator>;

  RungTable(const jobs::EarlyStoppingSpec& spec, jobs::Direction direction, std::uint64_t seed);

  const jobs::EarlyStoppingSpec& spec() const { return spec_; }
  bool promotes() const { return spec_.mode == jobs::StoppingMode::promotion; }
  /// The bracket of trial `id` (0 but under hyperband), and its rung steps.
  int bracket_of(std::int64_t id) const;
  const std::vector<std::int64_t>& rungs(int bracket) const { return rungs_[static_cast<std::size_t>(bracket)]; }

  /// The reports that make `t`'s curve, ascending steps.
  Reports curve(const Trial& t) const;
  /// Trial `t`'s first report at or past `rung` in its curve, if it counts.
  std::optional<AtRung> at_rung(const Trial& t, std::int64_t rung) const;
  /// The value at `rung` (a step) of each trial of `task` in `bracket` that has one.
  std::vector<std::pair<std::int64_t, double>> rung_values(const RunState& state, int task, int bracket,
                                                            std::int64_t rung) const;
  /// Promotion mode: the step trial `t`'s newest attempt resumes after (the last step its earlier
  /// attempts reported; 0 for the first) and the step it runs to. Stop mode: 0 and max_step.
  std::int64_t resume_step(const Trial& t) const;
  std::int64_t target_step(const Trial& t) const;
  /// The rung (index into its bracket's rungs) a paused trial waits at.
  std::size_t paused_rung(const Trial& t) const;

  /// RUSH's hurdle at rung `k` of `t`'s bracket: a stop when `t` (not itself an earlier task's
  /// best) is below the best value its task's earlier-best trials have there.
  std::optional<StopDecision> hurdle(const RunState& state, const Trial& t, std::size_t k, const AtRung& mine) const;
  /// "asha at epoch 9 (rung 2 of 3, bracket 1): ", the start of a decision's reason.
  std::string describe(const Trial& t, std::size_t k, const AtRung& mine) const;
  /// Larger is better.
  double oriented(double v) const { return objective_.oriented(v); }

 private:
  jobs::EarlyStoppingSpec spec_;
  jobs::Objective objective_;
  std::uint64_t seed_;
  std::vector<std::vector<std::int64_t>> rungs_;  // per bracket
  std::vector<double> bracket_cdf_;               // hyperband's cumulative weights
};

}  // namespace lbo::orchestrator
