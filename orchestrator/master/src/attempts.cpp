#include "attempts.hpp"

#include <utility>

#include "trial_orders.hpp"

namespace lbo::orchestrator {

Attempts::Attempts(const jobs::JobSpec& job, const RunPaths& run_dir, Ledger& ledger, Fidelity& fidelity,
                   cluster::Transport& transport, std::optional<DeadlinePlanner>& deadline,
                   bool sync, Hooks hooks)
    : job_(job),
      run_dir_(run_dir),
      ledger_(ledger),
      state_(ledger.state()),
      fidelity_(fidelity),
      transport_(transport),
      deadline_(deadline),
      sync_(sync),
      hooks_(std::move(hooks)) {}

// The attempt is journaled before its process exists, so a resume always knows it may be
// running (and kills what it left). Appended, not yet fsynced: the page cache outlives an lbo
// killed outright, and a machine crash takes the attempt's process with it.
void Attempts::dispatch(NextAttempt next) {
  const std::int64_t id = next.trial;
  const TrialStarted started{id, next.task, next.attempt, std::move(next.config),
                             cluster::to_string(transport_.next_slot()), hooks_.clock(), next.proposed_by,
                             std::move(next.proposal_note)};
  if (!ledger_.record(started)) return;
  const Trial& trial = state_.trial(id);
  workers::WorkOrder order = work_order(job_, state_.job().tasks[static_cast<std::size_t>(trial.task)].spec(), run_dir_, trial);
  fidelity_.prepare(order, trial);
  transport_.submit(std::move(order));
}

// A failed attempt is retried while `retries` allows. A cancelled one (lbo stopping, or a
// worker rank terminated under it) runs again first without using up a retry, and so does
// one that lbo itself could not run (its own I/O failed), which also stops the run.
void Attempts::on_completion(cluster::Completion c) {
  if (fidelity_.ended_early(c.trial, c.attempt)) {  // stopped or paused: committed, its slot is free now
    hooks_.ended();
    if (!sync_) hooks_.slot_free();
    return;
  }
  // --sync: an attempt that ended before its round reached the rungs it passed waits to be
  // judged there with the others (fidelity.hpp).
  if (std::optional<cluster::Completion> ended = fidelity_.hold(std::move(c), hooks_.clock())) complete(std::move(*ended));
  // Refill before the fsync: a proposal does not wait on the disk. (--sync waits for the
  // round to end and the refit.)
  if (!sync_) hooks_.slot_free();
}

void Attempts::complete(cluster::Completion c, bool decide_rungs) {
  const Trial& trial = state_.trial(c.trial);
  check_steps(job_.objective.stepwise, c.outcome);
  check_constraint_values(job_.constraints, c.outcome);
  // In promotion mode a trial's attempts make one curve: an attempt run again after its master
  // was killed resumes past every step the last one reported, and may report none itself.
  const bool one_curve = job_.early_stopping && job_.early_stopping->mode == jobs::StoppingMode::promotion;
  c.outcome.last_step = one_curve && !trial.reports.empty() ? trial.reports.back().step : trial.last_step(c.attempt);
  const TrialFinished finished = finished_record(trial, c.attempt, c.outcome, cluster::to_string(c.worker),
                                                 hooks_.clock(), job_.objective.retries);
  ledger_.record(finished);  // applied even when the journal cannot take it (Ledger::record)
  if (deadline_) deadline_->record(trial.task, c.outcome);
  if (c.outcome.status == workers::TrialStatus::lbo_error) hooks_.halt(lbo_error_message(finished), c.outcome.error_number);
  if (decide_rungs) fidelity_.on_end(hooks_.clock());
  ended_.push_back({c.trial, c.attempt});
  hooks_.ended();
}

void Attempts::ended_early(std::int64_t trial, int attempt) {
  ended_.push_back({trial, attempt});
  hooks_.ended();
}

std::vector<EndedAttempt> Attempts::take_ended() { return std::exchange(ended_, {}); }

}  // namespace lbo::orchestrator
