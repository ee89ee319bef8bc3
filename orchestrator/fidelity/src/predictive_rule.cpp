// The predictive rule: a trial reaching a rung is stopped when the probability that its value at
// max_step beats its task's best falls below min_probability, its value there forecast from its
// curve so far by a regression learned on the curves of the run's trials that ended ok, this
// task's and the earlier tasks' (curve_forecast.hpp). Domhan, Springenberg and Hutter's
// predictive termination ("Speeding up Automatic Hyperparameter Optimization of Deep Neural
// Networks by Extrapolation of Learning Curves", IJCAI 2015: stop when P(y_final > y_best) < δ,
// δ = 0.05), with the sequential regression models of Baker et al. (ICLR 2018 workshop) in place
// of their per-curve parametric extrapolation: a trial is judged by what earlier curves that
// looked like its own at that rung went on to do, not by a cutoff among its neighbours at the
// rung. Until a rung's regression has enough curves (CurveForecast::needed), or while its task
// has no result, the rule stops nothing there.

#include <cmath>
#include <cstdio>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

#include "lbo/orchestrator/run_outputs.hpp"
#include "predictive_rule.hpp"

namespace lbo::orchestrator {

std::string percent(double p) {
  if (p < 1e-4) return "below 0.01%";
  char text[32];
  std::snprintf(text, sizeof text, p < 0.001 ? "%.2g%%" : "%.1f%%", 100.0 * p);
  return text;
}

namespace {

// A forecast's spread to two significant digits: "0.0084".
std::string spread(double sd) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2g", sd);
  return text;
}

}  // namespace

PredictiveJudge::PredictiveJudge(const RungTable& table, const CurveForecast& forecast, bool sync)
    : table_(table), forecast_(forecast), sync_(sync) {}

std::optional<std::int64_t> PredictiveJudge::within_round(const Trial& t) const {
  return sync_ ? std::optional<std::int64_t>(t.finals_before) : std::nullopt;
}

std::optional<double> PredictiveJudge::task_best(const RunState& state, int task, std::optional<std::int64_t> before) const {
  if (!before && !state.several_objectives()) {  // the one objective: the state keeps the task's best
    const std::optional<double> best = state.best_objective(task);
    return best ? std::optional<double>(table_.oriented(*best)) : std::nullopt;
  }
  std::optional<double> best;
  for (const std::int64_t id : state.task_trials(task)) {
    const Trial& t = state.trial(id);
    if (!t.finished || t.outcome.status != workers::TrialStatus::ok || t.infeasible) continue;
    if (before && t.final_seq >= *before) continue;
    const double value = forecast_.final_value(t);
    if (std::isfinite(value) && (!best || value > *best)) best = value;
  }
  return best;
}

std::optional<PredictiveJudge::Chance> PredictiveJudge::chance(const RunState& state, const Trial& t, std::size_t k,
                                                               const RungTable::AtRung& mine,
                                                               std::optional<std::int64_t> before) const {
  const std::optional<double> best = task_best(state, t.task, before);
  if (!best) return std::nullopt;
  const std::optional<Forecast> f = forecast_.at_rung(state, t, k, mine, before);
  if (!f) return std::nullopt;
  // P(final > best) for final ~ N(mean, sd²); a forecast without spread is certain.
  const double z = f->sd > 0 ? (f->mean - *best) / f->sd : (f->mean > *best ? INFINITY : -INFINITY);
  return Chance{0.5 * std::erfc(-z / std::numbers::sqrt2), *f, *best};
}

std::string PredictiveJudge::explain(const Chance& c) const {
  const auto& spec = table_.spec();
  return "its forecast at " + spec.step_name + " " + std::to_string(spec.max_step) + " is " +
         format_objective(table_.oriented(c.forecast.mean)) + " ± " + spread(c.forecast.sd) + " (from " +
         std::to_string(c.forecast.curves) + " curve(s) of " + std::to_string(c.forecast.tasks) +
         " task(s)): a probability of " + percent(c.probability) + " to beat the task's best, " +
         format_objective(table_.oriented(c.best));
}

namespace {

class PredictiveRule final : public StopRule {
 public:
  PredictiveRule(const RungTable& table, const CurveForecast& forecast, bool sync)
      : table_(table), forecast_(forecast), judge_(table, forecast, sync) {}

  std::optional<StopDecision> decide(const RunState& state, const Trial& t, std::size_t k,
                                     const RungTable::AtRung& mine) const override {
    const std::optional<std::int64_t> before = judge_.within_round(t);
    const std::optional<PredictiveJudge::Chance> c = judge_.chance(state, t, k, mine, before);
    note_rung(state, k, c.has_value(), before);
    if (!c || c->probability >= table_.spec().min_probability) return std::nullopt;
    StopDecision stop{t.id, t.attempts, mine.step, mine.value, mine.elapsed_s,
                      table_.describe(t, k, mine) + format_objective(mine.value) + " there; " + judge_.explain(*c) +
                          ", below " + percent(table_.spec().min_probability)};
    stop.forecast = table_.oriented(c->forecast.mean);
    return stop;
  }

 private:
  std::vector<std::string> notes() override { return std::exchange(notes_, {}); }

 private:
  // The log hears once per rung that it cannot judge there yet (too few curves ended ok), and
  // once that it judges from now on.
  void note_rung(const RunState& state, std::size_t k, bool judged, std::optional<std::int64_t> before) const {
    if (said_.size() <= k) said_.resize(k + 1, Said::nothing);
    const auto& spec = table_.spec();
    const std::string where = spec.step_name + " " + std::to_string(table_.rungs(0)[k]);
    if (judged && said_[k] != Said::judging) {
      said_[k] = Said::judging;
      notes_.push_back("the predictive rule judges trials at " + where + " from now on: its forecast learns from " +
                       std::to_string(forecast_.curves(state, k, before)) + " curve(s) that ended ok");
    } else if (!judged && said_[k] == Said::nothing && forecast_.curves(state, k, before) < forecast_.needed()) {
      said_[k] = Said::waiting;
      notes_.push_back("the predictive rule stops no trial at " + where + " until " + std::to_string(forecast_.needed()) +
                       " curves that reached it have ended ok (the forecast's features and three more); " +
                       std::to_string(forecast_.curves(state, k, before)) + " have");
    }
  }

  enum class Said : std::uint8_t { nothing, waiting, judging };
  const RungTable& table_;
  const CurveForecast& forecast_;
  PredictiveJudge judge_;
  mutable std::vector<Said> said_;
  mutable std::vector<std::string> notes_;
};

}  // namespace

std::unique_ptr<StopRule> make_predictive_rule(const StopRuleParts& parts) {
  return std::make_unique<PredictiveRule>(parts.table, parts.forecast, parts.sync);
}

}  // namespace lbo::orchestrator
