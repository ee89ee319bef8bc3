#pragma once
// OutputWarping: what the models see of one model task's results ([policy] output_warping).
// "copula" is the Gaussian copula transform of Salinas, Shen and Perrone ("A Quantile-based
// Approach for Hyperparameter Transfer Learning", ICML 2020, sec. 4.1): a value y becomes
// Φ⁻¹(F̃(y)), F̃ the task's empirical CDF (the share of its values ≤ y) winsorized to
// [δ, 1 − δ] with δ = 1 / (4 n^¼ √(π ln n)) for n values. It keeps their order and nothing
// else, so a heavy tail (a CRPS 100 times its task's median) weighs no more than any poor value,
// and tasks on unlike scales look alike to a model that learns across them. Private to policy/.

#include <Eigen/Core>
#include <vector>

#include "lbo/jobs/job_spec.hpp"

namespace lbo::orchestrator {

class OutputWarping {
 public:
  /// Fitted to a task's values `y` (larger is better); `none`: the identity.
  OutputWarping(jobs::OutputWarping kind, const Eigen::VectorXd& y);

  /// The warped value of y (a value of the task, or a new one: its CDF is the fitted one's).
  double operator()(double y) const;
  Eigen::VectorXd operator()(const Eigen::VectorXd& y) const;

 private:
  jobs::OutputWarping kind_;
  std::vector<double> sorted_;  // the fitted values, ascending (copula)
  double delta_ = 0;            // the winsorization
};

}  // namespace lbo::orchestrator
