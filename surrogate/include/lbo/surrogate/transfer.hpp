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
// coefficients, not a network), so the GP keeps real uncertainty where the task differs.
//
// The basis functions are, per other task, its inner posterior mean and its plain GP's mean: a
// feature model extrapolates wildly where its task has no data, a GP reverts to its mean there
// (on LBO's Branin sequences the plain-GP means of earlier tasks track a new task's values at
// correlation ~0.95 where the networks' track at 0.4–0.9). And a basis can still mislead: its
// errors make the residual rougher than the function, so a GP on them explores where it should
// refine. So each task averages two models, the GP with the basis and the plain GP, weighted by
// their evidence (Bayesian model averaging, the predictive moment-matched): the basis counts as
// far as the task's own data bear it out, and a task with no related task is the plain GP.
// Robust transfer in the spirit of the "transferred prior mean" and stacking approaches of
// multi-task BO.

#include <memory>
#include <vector>

#include "lbo/surrogate/surrogate.hpp"

namespace lbo::surrogate {

/// Two posteriors of the same task (the same standardization) averaged with weights w and 1 − w,
/// as one Gaussian with the mixture's mean and variance: m = w m₁ + (1 − w) m₂,
/// v = w (v₁ + m₁²) + (1 − w)(v₂ + m₂²) − m². Conditioning conditions both (hallucinated points
/// at each one's own mean, so the average's mean stays) and keeps w.
class ModelAverage final : public TaskPosterior {
 public:
  ModelAverage(std::shared_ptr<const TaskPosterior> first, std::shared_ptr<const TaskPosterior> second, double weight);
  int dimension() const override { return first_->dimension(); }
  Posterior predict(const Eigen::MatrixXd& X) const override;
  PointPosterior predict_with_gradient(const Eigen::VectorXd& x) const override;
  std::shared_ptr<const TaskPosterior> condition(const Eigen::MatrixXd& X, const Eigen::VectorXd* y) const override;
  /// Both models tracked; a believed point takes the average's mean in both, as condition(X, &y).
  std::unique_ptr<TrackedPosterior> track(const Eigen::MatrixXd& C) const override;
  double weight() const { return weight_; }

 private:
  std::shared_ptr<const TaskPosterior> first_, second_;
  double weight_;
};

class TransferGp final : public Surrogate {
 public:
  struct Options {
    /// Another task enters a task's basis once it has this many observations (its posterior
    /// mean is barely a function before that).
    int min_basis_observations = 5;
    /// At most this many functions span a task's prior: those that track its observations best
    /// (|correlation| at its points; the most recent tasks' while it has fewer than 3). A
    /// proposal evaluates every basis function, so this keeps its cost flat however many tasks
    /// came before.
    int max_basis = 10;
    GaussianProcess::Options gp;
  };

  explicit TransferGp(std::unique_ptr<Surrogate> inner) : TransferGp(std::move(inner), Options{}) {}
  TransferGp(std::unique_ptr<Surrogate> inner, Options options);

  /// Fits the inner model and a plain GP on every task, then each task whose observations
  /// changed as a GP on its basis (the inner model's last good posteriors when its fit fails:
  /// only a failed GP fit fails this one; a finished task's basis: finished tasks only). A
  /// task whose observations did not change keeps its θ, its posterior rebuilt when a function
  /// of its basis changed.
  void fit(const TaskData& data, std::uint64_t seed) override;
  /// The average of the task's GP with a basis and its plain GP (the plain GP alone without a basis).
  std::shared_ptr<const TaskPosterior> posterior(int task) const override;
  /// The inner model's state with each task's GPs and bases in `transfer`.
  SurrogateState state() const override;
  void restore(const SurrogateState& state, const TaskData& data) override;

  /// The tasks whose means (inner or plain GP) span `task`'s prior at its last fit.
  std::vector<int> basis_tasks(int task) const;
  /// The weight of the model with the basis in `task`'s average (0 without a basis).
  double basis_weight(int task) const;

 private:
  struct Function {
    int task;
    bool gp;  // the task's plain-GP mean, else its inner posterior mean
    bool operator<(const Function& o) const { return task != o.task ? task < o.task : gp < o.gp; }
  };
  std::shared_ptr<const TaskPosterior> mean_of(const Function& f) const;   // null when the task has none
  std::shared_ptr<const TaskPosterior> function(const Function& f) const;  // mean_of, which must exist
  std::shared_ptr<const MeanBasis> basis_of(const std::vector<Function>& functions) const;
  std::vector<Function> choose_basis(int task, const Observations& data, const std::vector<int>& related) const;
  void average(const std::vector<char>& changed);  // posteriors_ of the changed tasks from gps_, plain_, basis_
  std::vector<std::shared_ptr<const TaskPosterior>> means_of(const std::vector<Function>& functions) const;
  bool means_changed(std::size_t task) const;  // a function of the task's basis is not the one its GP was set on

  std::unique_ptr<Surrogate> inner_;
  Options options_;
  GpSurrogate plain_;  // every task's GP without a basis
  GpSurrogate gps_;    // every task's GP with its basis
  std::vector<std::vector<Function>> basis_;  // per task, at its last fit
  std::vector<std::vector<std::shared_ptr<const TaskPosterior>>> means_;  // per task: its GP's basis functions
  std::vector<std::shared_ptr<const TaskPosterior>> posteriors_;
};

}  // namespace lbo::surrogate
