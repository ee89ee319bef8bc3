#pragma once
// Bases: where each run model task proposes from (see Basis): its own posterior in the
// adopted fit; for a transfer model, an earlier task's posterior while the task has fewer
// results than a design; else an interim GP on its own results until the fit covers them.
// Private to policy/.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fit_service.hpp"
#include "model_data.hpp"
#include "task_batch.hpp"
#include "lbo/jobs/job_spec.hpp"
#include "lbo/orchestrator/run_state.hpp"

namespace lbo::orchestrator {

class Bases {
 public:
  /// `adopted`: the policy's adopted fit (read at each call); `transfers`: the model learns
  /// across tasks; `sync`, `threads`: as the policy's fits; `log`: where a task's change of
  /// basis is said (master thread; may be empty).
  Bases(const jobs::JobSpec& job, const ModelData& data, const std::shared_ptr<const Snapshot>& adopted, bool transfers,
        bool sync, int threads, std::function<void(const std::string&)> log = {});

  /// Interim GPs for `slots` run model tasks (they only grow).
  void track(std::size_t slots) {
    interims_.resize(std::max(interims_.size(), slots));
    said_.resize(std::max(said_.size(), slots));
  }
  /// Whether an interim GP is being fitted on its thread.
  bool fitting() const {
    return std::any_of(interims_.begin(), interims_.end(), [](const auto& fits) { return fits && fits->busy(); });
  }
  /// Run model task `k`'s posterior in the adopted fit; null without one.
  std::shared_ptr<const surrogate::TaskPosterior> posterior_at(std::size_t k) const;
  /// Where `task`'s `step` proposes from; none while it has nothing to learn from (no result,
  /// no earlier task).
  std::optional<Basis> of(const RunState& state, int task, int step);

 private:
  std::optional<Basis> choose(const RunState& state, int task, int step);
  std::optional<Basis> prior_of(const RunState& state, int task, int step, std::size_t results) const;
  std::optional<Basis> interim_of(const RunState& state, int task, int step, const std::vector<std::int64_t>& results,
                                  std::string why);
  // Says when `task`'s step first proposes from an interim GP, and when it first proposes from
  // the model's own fit after one.
  void say(const RunState& state, int task, int step, const Basis& basis);
  FitRequest interim_request(const RunState& state, int step, const std::vector<std::int64_t>& results,
                             std::optional<int> cap) const;

  const jobs::JobSpec& job_;
  const ModelData& data_;
  const std::shared_ptr<const Snapshot>& adopted_;
  bool transfers_ = false, sync_ = false;
  int threads_ = 1;
  std::function<void(const std::string&)> log_;
  std::string model_;  // the job's model, by its name
  std::vector<std::unique_ptr<FitService>> interims_;  // per run model task: its interim GPs
  struct Said {
    int interim = 0;  // proposals from an interim GP so far
    bool fit = false;  // its first proposal from the model's own fit was said
  };
  std::vector<Said> said_;  // per run model task
};

}  // namespace lbo::orchestrator
