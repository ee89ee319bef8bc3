#pragma once
// CurveForecast (private to fidelity/): a trial's value at max_step forecast from its curve up to
// a rung, learned from the curves of every trial of the run that ended ok: this task's and the
// earlier tasks'. It is what the predictive rule (predictive_rule.cpp) and its promotions ask.
//
// One regression per rung, as the sequential regression models of Baker, Gupta, Raskar and Naik
// ("Accelerating Neural Architecture Search using Performance Prediction", ICLR 2018 workshop):
// the rise from a trial's value at the rung to its final value, on the value at the rung, its
// rise since the rung before, and the encoded configuration. Theirs is an ensemble of SVRs; here
// it is a Bayesian linear regression (surrogate/blr.hpp) with its precisions of greatest
// evidence, which gives the forecast's spread in closed form: N(v + ȳ + φᵀm, s² + φᵀΣφ + s²/N),
// s² the regression's mean squared leave-one-out residual (its in-sample noise 1/β was too
// narrow on bench/fidelity's curves: 86% of the finals inside the 90% interval, 89% with s²;
// bench/log/2026-12-06-early-stopping-predictive-rule.md). Features are standardized over the
// curves learned from, the targets centred (ȳ).
//
// Every figure is a function of the run state: the trials that ended ok, in id order (the
// newest kMaxCurves of them), refit for a rung when another has ended. A decision made live
// and the same decision made on a resumed run's replayed state are the same numbers. A caller
// may limit the curves to the results before a point of the run (Trial::final_seq below
// `before`): a --sync round's decisions read only what ended before the round, so a round
// resumed after some of its trials ended decides as the round that ran through.

#include <Eigen/Core>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "lbo/jobs/encoding.hpp"
#include "lbo/jobs/job_spec.hpp"
#include "lbo/orchestrator/run_state.hpp"
#include "rung_table.hpp"

namespace lbo::orchestrator {

/// A forecast of a trial's value at max_step, oriented (larger is better).
struct Forecast {
  double mean = 0;
  double sd = 0;
  int curves = 0;  ///< the curves it learned from
  int tasks = 0;   ///< the tasks they belong to
};

class CurveForecast {
 public:
  /// `table` outlives this.
  CurveForecast(const jobs::JobSpec& job, const RungTable& table);
  ~CurveForecast();
  CurveForecast(const CurveForecast&) = delete;
  CurveForecast& operator=(const CurveForecast&) = delete;

  /// The forecast of `t`'s value at max_step from its curve up to rung `k` of bracket 0, where
  /// its value is `mine`, learned from the curves that ended ok (of them, those whose final_seq
  /// is below `before`, when given); nothing while fewer than needed() of them reached the rung.
  std::optional<Forecast> at_rung(const RunState& state, const Trial& t, std::size_t k, const RungTable::AtRung& mine,
                                  std::optional<std::int64_t> before = std::nullopt) const;
  /// The curves a rung's regression needs before it forecasts: its features and three more.
  int needed() const { return features_ + 3; }
  /// The curves `k`'s regression learns from as of `state` (those that ended ok, before `before`).
  int curves(const RunState& state, std::size_t k, std::optional<std::int64_t> before = std::nullopt) const;

  /// A rung's regression learns from the newest this many curves (by trial id): a fit stays a
  /// few milliseconds in a run of any length, and the current task's curves are among them.
  static constexpr std::size_t kMaxCurves = 4000;

  /// `t`'s final value of the rule's objective, oriented (larger is better); NaN when it has none.
  double final_value(const Trial& t) const;

 private:
  struct Fit;
  /// The trials that ended ok, as of `state` (incremental: the trials not yet ended are kept).
  void refresh(const RunState& state) const;
  /// The features of `t` at rung `k` with its value `at` there: nothing when it has no report at
  /// or before the rung before (its rise is unknown).
  std::optional<Eigen::VectorXd> features(const Trial& t, std::size_t k, double at) const;
  const Fit* fit(const RunState& state, std::size_t k, std::optional<std::int64_t> before) const;

  const RungTable& table_;
  jobs::Encoder encoder_;
  bool several_ = false;  // several objectives: the stopping one is outcome.values[objective]
  int features_ = 0;
  mutable std::vector<std::int64_t> ended_;  // ascending ids of trials that ended ok
  mutable std::set<std::int64_t> open_;      // ids not ended yet
  mutable std::int64_t seen_ = 0;            // ids below this are in ended_, open_ or neither
  mutable std::vector<std::unique_ptr<Fit>> fits_;  // per rung of bracket 0
};

}  // namespace lbo::orchestrator
