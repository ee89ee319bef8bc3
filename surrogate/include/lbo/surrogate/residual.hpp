#pragma once
// ResidualGp: a feature model (LBO, ABLR) as the prior mean of a GP on what it leaves over.
//
// Bayesian linear regression on a few dozen learned features is confident far from the data
// (its variance lives in the span of features fitted to that data), so EI exploits the mean and
// a task's endgame stalls short of the optimum. A Matérn-5/2 GP on the residuals y − μ_features
// restores honest uncertainty between and away from the observations and refines locally as
// the task's data grows, while the features' mean still carries what earlier tasks taught:
// f_t(x) ~ μ_t(x) + GP(0, k_t), the "transferred prior mean" construction of multi-task BO.

#include <memory>
#include <vector>

#include "lbo/surrogate/surrogate.hpp"

namespace lbo::surrogate {

/// Mean μ_base + residual mean, variance var_base + residual variance, in the base posterior's
/// standardized units. Conditioning (new results, hallucinated pending points) goes to the
/// residual GP: the base is the GP's fixed prior mean.
class ResidualPosterior final : public TaskPosterior {
 public:
  ResidualPosterior(std::shared_ptr<const TaskPosterior> base, std::shared_ptr<const TaskPosterior> residual);
  int dimension() const override { return base_->dimension(); }
  Posterior predict(const Eigen::MatrixXd& X) const override;
  PointPosterior predict_with_gradient(const Eigen::VectorXd& x) const override;
  std::shared_ptr<const TaskPosterior> condition(const Eigen::MatrixXd& X, const Eigen::VectorXd* y) const override;
  /// The base at C once; points go to the residual's tracker.
  std::unique_ptr<TrackedPosterior> track(const Eigen::MatrixXd& C) const override;

 private:
  std::shared_ptr<const TaskPosterior> base_, residual_;
};

class ResidualGp final : public Surrogate {
 public:
  explicit ResidualGp(std::unique_ptr<Surrogate> base, GaussianProcess::Options options = {});
  /// Fits the base, then one GP per task on the base's standardized residuals.
  void fit(const TaskData& data, std::uint64_t seed) override;
  std::shared_ptr<const TaskPosterior> posterior(int task) const override;
  /// The base's state with the residual GPs' hyperparameters in `gp`.
  SurrogateState state() const override;
  void restore(const SurrogateState& state, const TaskData& data) override;

  const Surrogate& base() const { return *base_; }

 private:
  TaskData residuals(const TaskData& data) const;
  void combine(std::size_t tasks);

  std::unique_ptr<Surrogate> base_;
  GpSurrogate residual_;
  std::vector<std::shared_ptr<const TaskPosterior>> posteriors_;
  // Per task: the base and residual posteriors posteriors_ combines.
  std::vector<std::pair<std::shared_ptr<const TaskPosterior>, std::shared_ptr<const TaskPosterior>>> parts_;
};

}  // namespace lbo::surrogate
