#pragma once
// FailureModel: where configurations fail, learned from the run's trials ([objective] failures =
// "learn"), and where they break a limit of [[constraints]]. For failures, a classifier: a trial
// that failed for a reason of its own (a non-zero exit or a bad result, a signal, a timeout) is a
// failure, one that ran (ok, stopped early, paused at a rung) a success; a cancelled trial, lbo's
// own error, a running or lost one teach nothing. For each limit, a GP of the value the ok trials
// reported (surrogate::LimitModel): how far each was from the limit, not only which side.
// An infeasible trial's objective still enters the objective's model. Every
// task's trials enter one classifier (surrogate::Feasibility, tasks correlated), so a later task
// avoids what failed on the earlier ones from its first proposal. Refitted when the trials it
// learns from change; a fit is a function of them alone (a resumed --sync run fits the same).
// Private to policy/.

#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model_data.hpp"
#include "lbo/jobs/job_spec.hpp"
#include "lbo/orchestrator/run_state.hpp"
#include "lbo/surrogate/feasibility.hpp"
#include "lbo/surrogate/limit_model.hpp"

namespace lbo::orchestrator {

class FailureModel {
 public:
  /// `data` encodes configurations (the policy's); `log` may be empty. `sync` (--sync): a
  /// limit's hyperparameters are fitted on the master's thread when their schedule says, so that
  /// every proposal is a function of the journal; otherwise on a thread of their own, while the
  /// proposals go on with the last ones.
  FailureModel(const jobs::JobSpec& job, const ModelData& data, std::function<void(const std::string&)> log, bool sync);

  /// Whether the trial ended failed of itself (failed, timeout, crashed).
  static bool failed(const Trial& t);
  /// What a trial teaches the failure classifier: 1 it ran (infeasible or not), 0 it failed of
  /// itself (-1 unless `failures_teach`), -1 nothing.
  static int label(const Trial& t, bool failures_teach = true);
  /// What proposals weigh by on the run's trials now: the failure classifier, a LimitModel per
  /// constraint, or both (JointFeasibility); null before a trial failed (or with failures =
  /// "ignore") in a job without [[constraints]]. The same pointer while nothing changed.
  std::shared_ptr<const surrogate::FeasibilityModel> current(const RunState& state);
  /// P(success) of `config` for `task` under `model` (current()'s; 1 without one): what notes say.
  double probability(const surrogate::FeasibilityModel* model, int task, const jobs::Config& config) const;
  /// What the acquisition is multiplied by at `config`: P(success) with each limit's probability
  /// raised to kLimitSharpness (1 without a model). The design keeps to where it is ≥ ½.
  double weight(const surrogate::FeasibilityModel* model, int task, const jobs::Config& config) const;
  /// The power of a limit's probability in the weight: a proposal's acquisition halves where a
  /// limit is kept with probability 0.957. With P itself (Gardner et al. 2014's weighted EI) the
  /// proposals hugged the edge of the feasible region once they had found the constrained
  /// optimum, half of them outside: bench/constraints, 3 seeds, gp, the infeasible trials after
  /// the first 10 of 30 were 16.7 and 14.3 at power 1, 15.3/13.0 at 2, 11.3/9.3 at 4, 11.0/10.3
  /// at 8, 7.3/5.7 at 16 and 5.7/5.0 at 32, the best's gap to the optimum 0.049/0.006 at 1,
  /// 0.041/0.006 at 16 and 0.070/0.008 at 32 (bench/README.md, "Constraints").
  static constexpr double kLimitSharpness = 16;
  /// "estimated probability of success 0.93" (success: ran, and within the limits).
  static std::string note(double probability);

 private:
  std::shared_ptr<const surrogate::Feasibility> failure_classifier(const RunState& state);
  std::shared_ptr<const surrogate::LimitModel> limit_model(const RunState& state, std::size_t constraint);

  /// A limit's GP fits its hyperparameters anew at each of its first kEveryFit values, then
  /// each time they grew by a quarter (limit_model()).
  static constexpr std::size_t kEveryFit = 16;
  struct Limit {
    std::vector<std::int64_t> ids;  // the ok trials behind model
    std::shared_ptr<const surrogate::LimitModel> model;
    std::vector<std::int64_t> theta_ids;  // the trials theta was fitted on
    Eigen::VectorXd theta;
    std::unordered_map<std::int64_t, double> reported;  // each finished ok trial's value (NaN: none)
    int logged_points = 0;
    // Without --sync: the fit of theta under way (its thread's), on the trials pending_ids.
    std::future<Eigen::VectorXd> pending;
    std::vector<std::int64_t> pending_ids;
  };
  // The limit's theta for the trials `key` (their values `data`): fitted now, or (without --sync,
  // once it has one) on a thread of its own, adopted by a later call once it has ended.
  void refit_theta(Limit& limit, std::vector<std::int64_t> key, surrogate::LimitData data, double low, double high,
                   const std::string& name);

  const jobs::JobSpec& job_;
  const ModelData& data_;
  std::function<void(const std::string&)> log_;
  bool sync_ = false;
  std::vector<std::pair<std::int64_t, int>> learned_;  // (trial, label) behind classifier_
  std::shared_ptr<const surrogate::Feasibility> classifier_;
  int logged_failures_ = 0;  // the failures of the last fit the log told of
  std::vector<Limit> limits_;  // one per constraint
  std::vector<std::shared_ptr<const surrogate::FeasibilityModel>> parts_;  // behind model_
  std::shared_ptr<const surrogate::FeasibilityModel> model_;
};

}  // namespace lbo::orchestrator
