#pragma once
// TransferGp: each task an exact GP whose prior spans the other tasks' posterior means.
//
// A feature model (LBO, ABLR) refits its features and head to the current task's few points, so
// its in-sample residuals are small and say little about how far the task may deviate from
// what earlier tasks taught; a GP on those residuals then stays sure of the transferred basin
// and never looks where this task's own optimum moved (LBO's Branin sequences, bench/README.md).
// Here the inner model's posterior means of the *other* tasks are fixed functions g_j, and the
// task's own data weigh them: y = β₀ + Σ_j β_j g_j(x) + f(x), β ~ N(0, s²/k), f ~ GP(0, Matérn)
// (MeanBasis), with s², the Matérn amplitude, length-scales and noise by marginal likelihood.
// With few points the basis carries the task (transfer); its residuals are honest (k + 1
// coefficients, not a network), so the GP keeps real uncertainty where the task differs; and a
// task with no related task behaves as the plain GP. Robust transfer in the spirit of the
// "transferred prior mean" and stacking approaches of multi-task BO.

#include <memory>
#include <vector>

#include "lbo/surrogate/surrogate.hpp"

namespace lbo::surrogate {

class TransferGp final : public Surrogate {
 public:
  struct Options {
    /// Another task enters a task's basis once it has this many observations (its posterior
    /// mean is barely a function before that).
    int min_basis_observations = 5;
    /// At most this many tasks span a task's prior: those whose means track its observations
    /// best (|correlation| at its points; the most recent while it has fewer than 3). A
    /// proposal evaluates every basis function, so this keeps its cost flat however many tasks
    /// came before.
    int max_basis = 10;
    GaussianProcess::Options gp;
  };

  explicit TransferGp(std::unique_ptr<Surrogate> inner) : TransferGp(std::move(inner), Options{}) {}
  TransferGp(std::unique_ptr<Surrogate> inner, Options options);

  /// Fits the inner model on every task, then each task whose observations changed as a GP on
  /// the basis of the other tasks' inner posteriors (the last good ones when the inner fit
  /// fails: only a failed GP fit fails this one).
  void fit(const TaskData& data, std::uint64_t seed) override;
  std::shared_ptr<const TaskPosterior> posterior(int task) const override { return gps_.posterior(task); }
  /// The inner model's state with each task's GP (θ and the tasks in its basis) in `transfer`.
  SurrogateState state() const override;
  void restore(const SurrogateState& state, const TaskData& data) override;

  /// The tasks whose inner posterior means span `task`'s prior at its last fit.
  const std::vector<int>& basis_tasks(int task) const;

 private:
  std::shared_ptr<const MeanBasis> basis_of(const std::vector<int>& tasks) const;
  std::vector<int> choose_basis(int task, const Observations& data, const std::vector<int>& related) const;

  std::unique_ptr<Surrogate> inner_;
  Options options_;
  GpSurrogate gps_;
  std::vector<std::vector<int>> basis_;  // per task, at its last fit
};

}  // namespace lbo::surrogate
