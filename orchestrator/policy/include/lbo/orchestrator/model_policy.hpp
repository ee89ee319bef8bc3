#pragma once
// ModelPolicy: proposals from a surrogate (lbo, gp, ablr, libo or jumbo) and an acquisition
// (ucb, ei, pi or the GP-Hedge portfolio), with every running trial hallucinated so parallel
// slots spread out. The fits run in a FitService (a thread of their own unless --sync); each
// task's proposals come from a surrogate::BatchProposer that scores its candidates once and then
// updates them with each new running trial and each result.

#include <cstdint>
#include <memory>

#include "lbo/jobs/job_spec.hpp"
#include "lbo/orchestrator/policy.hpp"

namespace lbo::orchestrator {

class ModelPolicy final : public Policy {
 public:
  ModelPolicy(const jobs::JobSpec& job, PolicyOptions options);
  /// Stops the background refit thread (waits for a fit in progress).
  ~ModelPolicy() override;
  ModelPolicy(const ModelPolicy&) = delete;
  ModelPolicy& operator=(const ModelPolicy&) = delete;

  /// The task's initial design (initial_random random trials for the first model task, or for
  /// every task without a transfer model; random too while the task has nothing to learn from:
  /// no result yet and no earlier task); then the acquisition's maximizer, with the task's
  /// running trials hallucinated, under: its own posterior in the newest fit (results the fit has
  /// not seen joined exactly); else an earlier task's posterior (model-prior, lbo and ablr); else
  /// a GP on the task's own results (its results since joined exactly) until the background fit
  /// covers them: the first fitted here, later ones on a thread of their own.
  jobs::Config propose(const RunState& state, int task, std::int64_t trial) override;
  /// Tasks in their initial random phase first; otherwise each open task (each step of a
  /// stepwise one) nominates its acquisition maximizer and one is drawn ∝ its acquisition
  /// value (SMS-DKL eq. 9), seeded by the trial; the probabilities go to the log.
  Proposal propose_among(const RunState& state, const std::vector<int>& open, std::int64_t trial) override;
  /// What the model says of each of the run's model tasks (lbo: z usage; libo, jumbo: the GP it
  /// proposes from) and their posterior-mean correlations, newest fit.
  std::vector<TaskModelReport> model_report(const RunState& state) override;
  void results_committed(const RunState& state) override;
  /// The newest adopted fit's surrogate state and the Hedge memory.
  PolicyState state(const RunState& run) override;
  /// Rebuilds the model from `saved` on the recovered data without fitting, so the first
  /// proposals after a resume already use it and the next fit starts warm.
  void restore(const PolicyState& saved, const RunState& run) override;
  bool refit_due(const RunState& run) const override;
  /// The model's fit or a task's interim GP fit is queued or under way on its thread.
  bool fitting() const override;
  void await_fit() const override;

  /// Number of fits published so far (tests wait on it).
  std::uint64_t fits_completed() const;
  /// Blocks until at least `count` fits are published (tests; not used by the master).
  void wait_for_fits(std::uint64_t count) const;
  /// GP-Hedge gains of `task` (ucb, ei, pi); empty unless acquisition = "hedge".
  std::vector<double> hedge_gains(int task) const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lbo::orchestrator
