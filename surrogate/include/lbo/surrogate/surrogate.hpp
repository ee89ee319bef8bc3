#pragma once
// Surrogate: fits on the observations of every task and answers a posterior per task.

#include <Eigen/Core>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "lbo/surrogate/gp.hpp"
#include "lbo/surrogate/posterior.hpp"
#include "lbo/surrogate/state.hpp"

namespace lbo::surrogate {

/// Observations of every task, in task order (a task may have none). Raw y, larger is better.
struct TaskData {
  std::vector<Observations> tasks;
  /// Per task, when the caller knows (empty or shorter: not finished): whether the task is
  /// finished, its budget spent. Lifelong methods that learn between tasks read it (LiBO).
  std::vector<bool> finished;
  /// Per task (empty or shorter: none): the rows of tasks[t] that were uniform exploration, the
  /// task's random initial design (LiBO's D^exp).
  std::vector<std::vector<Eigen::Index>> exploration;
};

/// OpenMP threads for the fits and maximizations the calling thread runs from now on (each
/// thread has its own count).
void use_threads(int threads);

/// posteriors[task], or null for a task it does not hold: what posterior(int) returns for
/// the surrogates that keep one posterior per task.
inline std::shared_ptr<const TaskPosterior> task_posterior(
    const std::vector<std::shared_ptr<const TaskPosterior>>& posteriors, int task) {
  if (task < 0 || static_cast<std::size_t>(task) >= posteriors.size()) return nullptr;
  return posteriors[static_cast<std::size_t>(task)];
}

class Surrogate {
 public:
  virtual ~Surrogate() = default;
  /// Fits on `data`, warm-started from the previous fit. Throws NumericalError when no usable
  /// fit was found (the caller keeps its previous posteriors).
  virtual void fit(const TaskData& data, std::uint64_t seed) = 0;
  /// The posterior of `task` after the last fit, or null when the task had no observations.
  /// Immutable: later fits do not change it.
  virtual std::shared_ptr<const TaskPosterior> posterior(int task) const = 0;

  /// posterior(task)->predict(X).
  Posterior predict(int task, const Eigen::MatrixXd& X) const { return posterior(task)->predict(X); }

  /// What the next fit starts from (for checkpoints).
  virtual SurrogateState state() const = 0;
  /// Takes `state` as its own and builds the posteriors of `data` from it without fitting.
  /// Throws NumericalError when they cannot be built (the caller then fits afresh).
  virtual void restore(const SurrogateState& state, const TaskData& data) = 0;
};

/// One exact GP per task, each modelled alone (no transfer). A task whose observations did not
/// change since the last fit keeps its posterior.
class GpSurrogate final : public Surrogate {
 public:
  /// Task t's prior spans bases[t] (see MeanBasis); a null or missing entry: the plain GP.
  using Bases = std::vector<std::shared_ptr<const MeanBasis>>;

  explicit GpSurrogate(GaussianProcess::Options options = {}) : options_(options) {}
  void fit(const TaskData& data, std::uint64_t seed) override { fit(data, seed, Bases{}); }
  /// A task with as many observations as at its last fit keeps its posterior, unless `rebase`
  /// marks it: then its posterior is rebuilt on `bases` with its fitted θ (no optimization).
  void fit(const TaskData& data, std::uint64_t seed, const Bases& bases, const std::vector<char>& rebase = {});
  std::shared_ptr<const TaskPosterior> posterior(int task) const override;
  /// Fitted hyperparameters of `task` (empty before its first fit).
  Eigen::VectorXd theta(int task) const;
  /// GaussianProcess::log_evidence of `task`'s last fit (NaN before it).
  double log_evidence(int task) const;
  /// Observations of `task` at its last fit (-1 before it).
  std::int64_t fitted_size(int task) const;
  SurrogateState state() const override;
  void restore(const SurrogateState& state, const TaskData& data) override;
  /// With each task's basis, which must be the one its saved θ was fitted with.
  void restore(const GpState& state, const TaskData& data, const Bases& bases);

 private:
  GaussianProcess::Options options_;
  std::vector<GaussianProcess> gps_;
  std::vector<Eigen::Index> fitted_sizes_;  // observations of each task at its last fit
  std::vector<std::shared_ptr<const TaskPosterior>> posteriors_;
};

}  // namespace lbo::surrogate
