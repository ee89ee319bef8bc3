#pragma once
// OutputWarping: what the models see of one model task's results ([policy] output_warping).
// "copula" is the Gaussian copula transform of Salinas, Shen and Perrone ("A Quantile-based
// Approach for Hyperparameter Transfer Learning", ICML 2020, sec. 4.1): a value y becomes
// Φ⁻¹(F̃(y)), F̃ the task's empirical CDF (the share of its values ≤ y) winsorized to
// [δ, 1 − δ] with δ = 1 / (4 n^¼ √(π ln n)) for n values. It keeps their order and nothing
// else, so a heavy tail (a CRPS 100 times its task's median) weighs no more than any poor value,
// and tasks on unlike scales look alike to a model that learns across them.
// "copula_below_median" keeps the copula for the poorer half only (capped at 0, the median's
// warped value) and puts the better half on its own scale: (y − median) / s, with
// s = (q₇₅ − median) / Φ⁻¹(¾) so that normal values would come out standardized. The poor tail
// is tamed as by the copula, while near the optimum the models still see by how much the best
// results differ, which the copula's ranks hide (bench/README.md, "Transfer, published").
// "yeo_johnson" is the power transform of Yeo and Johnson ("A new family of power
// transformations to improve normality or symmetry", Biometrika 87, 2000) of the standardized
// values z = (y − mean) / sd, its exponent λ the one of greatest Gaussian likelihood, the
// transform's Jacobian included, as HEBO (Cowen-Rivers et al., JAIR 2022) and scikit-learn's
// PowerTransformer fit it. Unlike a copula it is smooth and chosen by evidence: λ = 1 is the
// identity, which it keeps where the values are near normal; a heavy poor tail (z < 0) gives
// λ > 1, which shrinks the tail and stretches the best values' differences.
// Private to policy/.

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
  double copula(double y) const;
  void fit_yeo_johnson(const Eigen::VectorXd& y);

  jobs::OutputWarping kind_;
  std::vector<double> sorted_;  // the fitted values, ascending
  double delta_ = 0;            // the copula's winsorization
  double median_ = 0;           // copula_below_median: where the scale part begins
  double scale_ = 0;            // and its s (0: the values above the median are all equal to it)
  double mean_ = 0;             // yeo_johnson: the standardization (sd 0: every value warps to 0)
  double sd_ = 0;
  double lambda_ = 1;           // and the fitted exponent
};

/// The Yeo–Johnson transform of z with exponent λ, and the log of its derivative in z.
double yeo_johnson(double z, double lambda);
double yeo_johnson_log_slope(double z, double lambda);
/// The profile Gaussian log-likelihood of λ for the values z (the mean and variance of the
/// transformed values at their maximum, the Jacobian included, constants dropped).
double yeo_johnson_log_likelihood(const Eigen::VectorXd& z, double lambda);
/// The λ in [−1, 3] of greatest yeo_johnson_log_likelihood (1 when z has no spread).
double yeo_johnson_exponent(const Eigen::VectorXd& z);

}  // namespace lbo::orchestrator
