#include "fidelity.hpp"

namespace lbo::orchestrator {

Fidelity::Fidelity(const jobs::JobSpec& job, bool sync, RunState& state, Hooks hooks)
    : state_(state),
      hooks_(std::move(hooks)),
      intake_(hooks_.log, job.early_stopping ? job.early_stopping->max_step : 0),
      sync_(sync) {
  if (job.early_stopping) rule_.emplace(*job.early_stopping, job.objective.direction, job.seed, sync);
}

void Fidelity::on_reports(std::vector<workers::TrialReport> batch, double unix_time) {
  std::optional<TrialsReported> record = intake_.accept(state_, std::move(batch), unix_time);
  if (!record || !hooks_.journal(*record)) return;
  state_.apply(*record);
  hooks_.reported(*record);
  if (!rule_) return;
  std::vector<std::int64_t> reported;
  for (const ReportedStep& r : record->reports) reported.push_back(r.trial);
  stop(rule_->after_reports(state_, reported), unix_time);
  if (sync_) on_end(unix_time);
}

void Fidelity::on_end(double unix_time) {
  if (!rule_ || !sync_) return;
  // A rung that stopped some is decided again once they are stopped (early_stopping.hpp).
  for (std::vector<StopDecision> stops = rule_->after_end(state_); !stops.empty(); stops = rule_->after_end(state_)) {
    stop(std::move(stops), unix_time);
  }
}

void Fidelity::stop(std::vector<StopDecision> decisions, double unix_time) {
  for (StopDecision& d : decisions) {
    const Trial& t = state_.trial(d.trial);
    workers::Outcome outcome;
    outcome.status = workers::TrialStatus::stopped;
    outcome.objective = d.value;
    outcome.last_step = d.step;
    outcome.duration_s = d.elapsed_s;
    outcome.reason = "stopped early: " + d.reason;
    const TrialFinished finished{t.id,      d.attempt, true,         outcome,          t.worker,
                                 unix_time, t.task,    t.config,     t.proposed_by,    t.proposal_note};
    // Applied even when the journal cannot take it (the run then halts): the process is ended
    // either way, and the final checkpoint may still keep the result.
    hooks_.journal(finished);
    state_.apply(finished);
    if (++stops_ <= kStopsLogged) {
      hooks_.log("trial " + std::to_string(d.trial) + " " + outcome.reason +
                 (stops_ == kStopsLogged ? " (further stops are only counted)" : ""));
    }
    hooks_.stopped(d.trial, d.attempt);
  }
}

}  // namespace lbo::orchestrator
