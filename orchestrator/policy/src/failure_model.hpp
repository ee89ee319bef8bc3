#pragma once
// FailureModel: where configurations fail, learned from the run's trials ([objective] failures =
// "learn"). A trial that failed for a reason of its own (a non-zero exit or a bad result, a
// signal, a timeout) is a failure; one that ran (ok, stopped early, paused at a rung) a
// success; a cancelled trial, lbo's own error, a running or lost one teach nothing. Every
// task's trials enter one classifier (surrogate::Feasibility, tasks correlated), so a later task
// avoids what failed on the earlier ones from its first proposal. Refitted when the trials it
// learns from change; a fit is a function of them alone (a resumed --sync run fits the same).
// Private to policy/.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "model_data.hpp"
#include "lbo/jobs/job_spec.hpp"
#include "lbo/orchestrator/run_state.hpp"
#include "lbo/surrogate/feasibility.hpp"

namespace lbo::orchestrator {

class FailureModel {
 public:
  /// `data` encodes configurations (the policy's); `log` may be empty.
  FailureModel(const jobs::JobSpec& job, const ModelData& data, std::function<void(const std::string&)> log);

  /// What a trial teaches: 1 it ran, 0 it failed of itself, -1 nothing.
  static int label(const Trial& t);
  /// The classifier on the run's trials now; null with failures = "ignore" or before a failure.
  std::shared_ptr<const surrogate::Feasibility> current(const RunState& state);
  /// P(success) of `config` for `task` under `model` (current()'s; 1 without one).
  double probability(const surrogate::Feasibility* model, int task, const jobs::Config& config) const;
  /// "estimated probability of success 0.93".
  static std::string note(double probability);

 private:
  const jobs::JobSpec& job_;
  const ModelData& data_;
  std::function<void(const std::string&)> log_;
  std::vector<std::pair<std::int64_t, int>> learned_;  // (trial, label) behind model_
  std::shared_ptr<const surrogate::Feasibility> model_;
  int logged_failures_ = 0;  // the failures of the last fit the log told of
};

}  // namespace lbo::orchestrator
