#pragma once
// Early stopping (private to master/): which running trials to stop on their intermediate
// reports, by the job's [early_stopping] rule. Every decision is a function of the run state
// (the journal): the rung values of a task's trials, their brackets (a function of the trial id
// and the seed), and, without --sync, the order in which reports were journaled.
//
// Rungs: bracket b's rung steps are r·η^(b+k) below max_step (jobs::EarlyStoppingSpec::rungs).
// A trial's value at a rung is its first report at or past the rung's step, of its newest
// attempt (a stopped trial's only up to the step it was stopped on).
// - asha (Li et al., "A System for Massively Parallel Hyperparameter Tuning", MLSys 2020, in
//   its stopping form as Ray Tune runs it): a trial reaching a rung is stopped when its value
//   is worse than the (1 − 1/η) quantile (linear interpolation) of the values the bracket's
//   other trials of its task have there; the first to reach a rung always goes on.
// - hyperband (Li et al., JMLR 2018): ASHA in each bracket, a trial's bracket drawn with
//   Hyperband's weights, η^(B−1−b)/(B−b) for bracket b of B, from the golden-ratio sequence of
//   its id and the seed (no hash, so the same on every rank count and after a resume).
// - median (Golovin et al., "Google Vizier", KDD 2017): at a rung, a trial whose best value so
//   far is worse than the median of the running averages (up to the rung) of the other trials
//   of its task that reached it is stopped, once min_trials others have.
// - transfer (asha, hyperband; RUSH, Zappella et al., "Resource-Aware Asynchronous Online
//   Hyperparameter Optimization", 2021): a new task starts with earlier tasks' best
//   configurations ([policy] transfer_best, proposed_by earlier-best); the best value they have
//   at a rung is a hurdle there, and a trial below it is stopped whatever ASHA's cutoff says.
// Promotion mode (asha, hyperband; ASHA as Li et al. 2020 give it, Algorithm 2): a trial's
// attempt runs from the step it resumes after to its bracket's next rung (target_step) and is
// paused there. A free slot promotes, before it starts anything new, a paused trial that is
// among the best ⌊n/η⌋ of the n trials of its task and bracket at its rung (the highest rung
// first, then the best value, then the lowest id). A task with nothing left to start and nothing
// running ends its paused trials `stopped`, once its best paused trial (the highest rung, then
// the best value) ran to max_step if none had: ASHA needs η trials at a rung to promote one,
// and a task must end with a trial run in full. Reports of all attempts make one curve.
// With --sync the decisions at a rung wait until every running trial of the task and bracket
// has reached it, and are then made together (a synchronous successive halving per round), so
// neither the order of reports nor a resume changes them.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lbo/jobs/job_spec.hpp"
#include "lbo/orchestrator/run_state.hpp"

namespace lbo::orchestrator {

struct StopDecision {
  std::int64_t trial = 0;
  int attempt = 1;
  std::int64_t step = 0;  ///< the step of its report at or past the rung
  double value = 0;       ///< its value there: the stopped trial's objective
  double elapsed_s = 0;   ///< when it reported it, since the attempt started
  std::string reason;     ///< "asha at epoch 9 (rung 2 of 3): 0.41 is below the cutoff 0.52 of 7 trials"
  bool pause = false;     ///< promotion mode: paused at its rung, not stopped for good
};

/// A paused trial promoted to its next rung, and why.
struct Promotion {
  std::int64_t trial = 0;
  std::string reason;  ///< "among the best 2 of 7 trials at epoch 3 (rung 2 of 3)"
};

class EarlyStopping {
 public:
  EarlyStopping(const jobs::EarlyStoppingSpec& spec, jobs::Direction direction, std::uint64_t seed, bool sync);

  /// The bracket of trial `id` (0 but under hyperband).
  int bracket_of(std::int64_t id) const;
  /// The trials to stop now that the reports of `reported` (trial ids, in the order their
  /// reports came) are applied to `state`. Without --sync: each one's rungs up to its newest
  /// step, in order; with --sync: every rung whose wait ended.
  std::vector<StopDecision> after_reports(const RunState& state, const std::vector<std::int64_t>& reported);
  /// With --sync, an attempt that ended may end a rung's wait: the trials to stop now. With
  /// --sync, ask again (after_end) once the stops are applied, until none comes.
  std::vector<StopDecision> after_end(const RunState& state);

  const jobs::EarlyStoppingSpec& spec() const { return spec_; }
  bool promotes() const { return spec_.mode == jobs::StoppingMode::promotion; }
  /// Promotion mode: the step trial `t`'s newest attempt resumes after (the last step its earlier
  /// attempts reported; 0 for the first) and the step it runs to. Stop mode: 0 and max_step.
  std::int64_t resume_step(const Trial& t) const;
  std::int64_t target_step(const Trial& t) const;
  /// Promotion mode: the paused trial to promote now, among the tasks `allowed` admits, but
  /// none of `busy` (its process has not ended yet); the first task in job order that has one.
  std::optional<Promotion> promotion(const RunState& state, const std::function<bool(int task)>& allowed,
                                     const std::function<bool(std::int64_t trial)>& busy) const;
  /// Promotion mode: the paused trials that end `stopped` now: those of each task with nothing
  /// left to start, run or promote.
  std::vector<StopDecision> unpromoted(const RunState& state) const;

  /// The rung table as it stands, for tests: the value at `rung` (a step) of each trial of
  /// `task` in `bracket` that has one.
  std::vector<std::pair<std::int64_t, double>> rung_values(const RunState& state, int task, int bracket,
                                                            std::int64_t rung) const;

 private:
  struct AtRung {
    std::int64_t step = 0;
    double value = 0;
    double elapsed_s = 0;
  };
  /// Trial `t`'s first report at or past `rung` in its curve (stop mode: its newest attempt;
  /// promotion mode: all of them), if it counts.
  std::optional<AtRung> at_rung(const Trial& t, std::int64_t rung) const;
  /// The reports that make `t`'s curve, ascending steps.
  std::pair<std::vector<StepReport>::const_iterator, std::vector<StepReport>::const_iterator> curve(const Trial& t) const;
  /// Promotion mode: the paused trials of `task` that may be promoted, best first (the highest
  /// rung, the best value, the lowest id); `quiet`: the task has nothing left to start or run.
  std::vector<Promotion> promotable(const RunState& state, int task, bool quiet) const;
  /// The rung (index into its bracket's rungs) a paused trial waits at.
  std::size_t paused_rung(const Trial& t) const;
  /// Nothing of `task` is left to start, waits to run again or runs.
  static bool quiet(const RunState& state, int task);
  /// Promotion mode: the decisions on trials that reached their attempt's target rung.
  void decide_targets(const RunState& state, const std::vector<std::int64_t>& reported, std::vector<StopDecision>& out) const;
  /// The decision on `t` at rung `k` of its bracket: a stop, or nothing.
  std::optional<StopDecision> decide(const RunState& state, const Trial& t, std::size_t k) const;
  std::optional<StopDecision> decide_asha(const RunState& state, const Trial& t, std::size_t k, const AtRung& mine) const;
  /// RUSH's hurdle (Zappella et al., 2021): the best value the task's trials of earlier tasks'
  /// best configurations have at the rung; a trial below it is stopped (they are not).
  std::optional<StopDecision> decide_hurdle(const RunState& state, const Trial& t, std::size_t k, const AtRung& mine) const;
  std::optional<StopDecision> decide_median(const RunState& state, const Trial& t, std::size_t k,
                                            const AtRung& mine) const;
  /// The rungs of `t`'s newest attempt it has reached and that are not decided yet, in order,
  /// deciding each until one stops it (into `out`).
  void decide_reached(const RunState& state, const Trial& t, std::vector<StopDecision>& out);
  std::vector<StopDecision> decide_waiting(const RunState& state);
  std::string describe(const Trial& t, std::size_t k, const AtRung& mine) const;
  double oriented(double v) const { return maximize_ ? v : -v; }

  jobs::EarlyStoppingSpec spec_;
  bool maximize_;
  std::uint64_t seed_;
  bool sync_;
  std::vector<std::vector<std::int64_t>> rungs_;  // per bracket
  std::vector<double> bracket_cdf_;               // hyperband's cumulative weights
  std::map<std::pair<std::int64_t, int>, std::size_t> decided_;  // (trial, attempt) → rungs decided
};

}  // namespace lbo::orchestrator
