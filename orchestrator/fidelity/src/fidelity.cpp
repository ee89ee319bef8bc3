#include "lbo/orchestrator/fidelity.hpp"

#include <algorithm>
#include <utility>

#include "curve_forecast.hpp"
#include "early_stopping.hpp"
#include "promotions.hpp"
#include "rung_table.hpp"
#include "trial_reports.hpp"

namespace lbo::orchestrator {

Fidelity::Fidelity(const jobs::JobSpec& job, bool sync, Ledger& ledger, Hooks hooks)
    : ledger_(ledger),
      state_(ledger.state()),
      hooks_(std::move(hooks)),
      intake_(std::make_unique<ReportIntake>(hooks_.log, job.early_stopping ? job.early_stopping->max_step : 0,
              job.early_stopping && job.early_stopping->mode == jobs::StoppingMode::promotion,
              [this](const Trial& t) { return table_ && table_->promotes() ? table_->target_step(t) : std::int64_t{0}; })),
      sync_(sync) {
  if (!job.early_stopping) return;
  table_ = std::make_unique<RungTable>(*job.early_stopping, job.stopping_objective().direction(), job.seed);
  forecast_ = std::make_unique<CurveForecast>(job, *table_);
  const StopRuleParts parts{*table_, *forecast_, sync};
  if (table_->promotes()) {
    promoting_ = std::make_unique<Promotions>(parts);
  } else {
    stopping_ = std::make_unique<EarlyStopping>(parts, sync);
  }
}

Fidelity::~Fidelity() = default;

void Fidelity::on_reports(std::vector<workers::TrialReport> batch, double unix_time) {
  std::optional<TrialsReported> record = intake_->accept(state_, std::move(batch), unix_time);
  if (!record || !ledger_.record(*record)) return;
  if (!table_) return;
  std::vector<std::int64_t> reported;
  for (const ReportedStep& r : record->reports) reported.push_back(r.trial);
  if (promoting_) {
    end(promoting_->after_reports(state_, reported), unix_time);
    return;
  }
  if (sync_) {
    on_end(unix_time);
    return;
  }
  end(stopping_->after_reports(state_, reported), unix_time);
  for (const std::string& note : stopping_->notes()) hooks_.log(note);
}

void Fidelity::on_end(double unix_time) {
  if (!stopping_ || !sync_ || hooks_.stopping()) return;
  // A rung that stopped some is decided again once they are stopped (early_stopping.hpp).
  for (std::vector<StopDecision> stops = stopping_->after_end(state_); !stops.empty(); stops = stopping_->after_end(state_)) {
    end(std::move(stops), unix_time);
  }
  for (const std::string& note : stopping_->notes()) hooks_.log(note);
  release();
}

std::optional<cluster::Completion> Fidelity::hold(cluster::Completion c, double unix_time) {
  if (!stopping_ || !sync_ || c.outcome.status != workers::TrialStatus::ok) return c;
  const Trial& t = state_.trial(c.trial);
  if (t.attempts != c.attempt || !stopping_->hold(t)) return c;
  held_.emplace(workers::AttemptKey{c.trial, c.attempt}, std::move(c));
  on_end(unix_time);  // it holds up no rung past its last step
  return std::nullopt;
}

std::vector<cluster::Completion> Fidelity::interrupt_held() {
  std::vector<cluster::Completion> out;
  for (auto& [key, c] : held_) {
    const double duration_s = c.outcome.duration_s;
    c.outcome = workers::Outcome{};
    c.outcome.status = workers::TrialStatus::cancelled;
    c.outcome.duration_s = duration_s;
    c.outcome.reason = "cancelled by lbo: the run stopped while the trial waited for its round's rungs";
    out.push_back(std::move(c));
  }
  held_.clear();
  return out;
}

void Fidelity::release() {
  for (const auto& key : stopping_->released(state_)) {
    const auto it = held_.find(key);
    cluster::Completion c = std::move(it->second);
    held_.erase(it);
    hooks_.released(std::move(c));
  }
}

bool Fidelity::ended_early(std::int64_t trial, int attempt) { return ending_.erase({trial, attempt}) > 0; }

std::optional<std::int64_t> Fidelity::promotion(const RunState& state, const TaskFilter& allowed) {
  if (!promoting_ || state.paused().empty()) return std::nullopt;
  // A paused attempt's process may still be ending: the next attempt must not share its folder.
  const auto busy = [this](std::int64_t id) {
    return std::any_of(ending_.begin(), ending_.end(), [&](const auto& e) { return e.trial == id; });
  };
  std::optional<Promotion> p = promoting_->promotion(state, allowed, busy);
  if (!p) return std::nullopt;
  const Trial& t = state.trial(p->trial);
  say(promotions_,
      "trial " + std::to_string(p->trial) + " promoted from " + table_->spec().step_name + " " + std::to_string(t.outcome.last_step) +
          " to " + std::to_string(table_->spec().target_step(table_->bracket_of(t.id), t.last_step(t.attempts))) + ": " + p->reason,
      "promotions");
  return p->trial;
}

void Fidelity::settle_owed(double unix_time) {
  if (promoting_) end(promoting_->owed(state_), unix_time);
}

bool Fidelity::settle(double unix_time) {
  if (!promoting_ || state_.paused().empty()) return false;
  std::vector<StopDecision> stops = promoting_->unpromoted(state_);
  if (stops.empty()) return false;
  end(std::move(stops), unix_time);
  return true;
}

void Fidelity::prepare(workers::WorkOrder& order, const Trial& trial) const {
  if (!table_) return;
  const auto set = [&](const char* name, std::int64_t step) { order.env.push_back({name, std::to_string(step)}); };
  set("LBO_MAX_STEP", table_->spec().max_step);
  set("LBO_RESUME_STEP", table_->resume_step(trial));
  set("LBO_TARGET_STEP", table_->target_step(trial));
  if (promoting_) order.env.push_back({std::string(workers::kCheckpointDirVar), order.workdir + "/checkpoint"});
}

void Fidelity::end(std::vector<StopDecision> decisions, double unix_time) {
  for (StopDecision& d : decisions) {
    const Trial& t = state_.trial(d.trial);
    // A held attempt (--sync) is running for the run state, but its process has ended.
    const bool running = t.running && held_.erase({d.trial, d.attempt}) == 0;
    workers::Outcome outcome;
    outcome.status = d.pause ? workers::TrialStatus::paused : workers::TrialStatus::stopped;
    outcome.objective = d.value;
    outcome.last_step = d.step;
    outcome.duration_s = d.elapsed_s;
    outcome.forecast = d.forecast;
    outcome.reason = (d.pause ? "" : "stopped early: ") + d.reason;
    const TrialFinished finished{t.id,      d.attempt, !d.pause,     outcome,          t.worker,
                                 unix_time, t.task,    t.config,     t.proposed_by,    t.proposal_note};
    // Applied even when the journal cannot take it (the run then halts; Ledger::record): the
    // process is ended either way, and the final checkpoint may still keep the result.
    ledger_.record(finished);
    if (d.pause) {
      say(pauses_, "trial " + std::to_string(d.trial) + " " + outcome.reason, "pauses");
    } else {
      say(stops_, "trial " + std::to_string(d.trial) + " " + outcome.reason, "stops");
    }
    if (running) ending_.insert({d.trial, d.attempt});
    hooks_.ended(d.trial, d.attempt, running);
  }
}

void Fidelity::say(int& count, const std::string& what, const char* kind) {
  if (++count > kLogged) return;
  hooks_.log(what + (count == kLogged ? " (further " + std::string(kind) + " are only counted)" : std::string()));
}

}  // namespace lbo::orchestrator
