#pragma once
// GaussianProcess: an exact GP for one task, Matérn-5/2 kernel with ARD length-scales, signal
// and noise variance fitted by marginal likelihood (MAP: weak priors keep it from collapsing on
// a handful of points; multi-start L-BFGS-B in log space).

#include <Eigen/Core>
#include <cstdint>
#include <memory>

#include "lbo/surrogate/posterior.hpp"

namespace lbo::surrogate {

/// Packed log-hyperparameters θ = [log ℓ₁ … log ℓ_d, log σ_f², log σ_n²] (length d + 2).
struct GpHyperparameters {
  static int size(int dimension) { return dimension + 2; }
  /// ℓ = 0.5, σ_f² = 1, σ_n² = 1e-2: a middle-of-the-road start for standardized outputs.
  static Eigen::VectorXd defaults(int dimension);
  /// Box for the optimizer: ℓ ∈ [0.01, 100], σ_f² ∈ [0.01, 100], σ_n² ∈ [1e-6, 2].
  static Eigen::VectorXd lower(int dimension);
  static Eigen::VectorXd upper(int dimension);
};

/// Matérn-5/2 ARD: k(x, x') = σ_f² (1 + √5 r + 5r²/3) exp(−√5 r), r² = Σᵢ (xᵢ − x'ᵢ)²/ℓᵢ².
/// A: n × d, B: m × d → n × m (noise not included).
Eigen::MatrixXd matern52(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, const Eigen::VectorXd& theta);

struct GpObjective {
  double value = 0;           ///< log p(y | X, θ) + log prior(θ)
  Eigen::VectorXd gradient;   ///< ∂value/∂θ
};

/// Log marginal likelihood of standardized y at X under θ, plus the log prior when asked:
/// Gamma(3, 6) on each ℓ (the BoTorch default for unit-cube inputs), log σ_f² ~ N(0, 1),
/// log σ_n² ~ N(log 1e-2, 2²). Throws NumericalError when K cannot be factorized.
GpObjective gp_objective(const Eigen::MatrixXd& X, const Eigen::VectorXd& y, const Eigen::VectorXd& theta,
                         bool with_prior = true);

class GaussianProcess {
 public:
  struct Options {
    int restarts = 3;         ///< starts besides the warm start: the defaults, then random ones
    int max_iterations = 60;  ///< L-BFGS-B iterations per start
    /// false: y is already in the units the caller wants (the residual GP's, whose amplitude
    /// must stay comparable to the task's spread, not to the residuals' own).
    bool standardize = true;
  };

  GaussianProcess() = default;
  explicit GaussianProcess(Options options) : options_(options) {}

  /// Standardizes y (unless options say not to), fits θ (warm-started from the previous fit when d matches) and builds the
  /// posterior. Needs at least one observation.
  void fit(const Observations& data, std::uint64_t seed);
  /// Uses θ as given, without optimizing (tests, and restoring a checkpointed fit).
  void set(const Observations& data, const Eigen::VectorXd& theta);
  /// The next fit starts from θ; no posterior until then.
  void warm_start(const Eigen::VectorXd& theta) {
    theta_ = theta;
    posterior_.reset();
  }

  const Eigen::VectorXd& theta() const { return theta_; }
  std::shared_ptr<const TaskPosterior> posterior() const { return posterior_; }

 private:
  Options options_;
  Eigen::VectorXd theta_;
  std::shared_ptr<const TaskPosterior> posterior_;
};

/// The exact GP posterior for X (n × d), standardized y and θ (exposed for tests).
std::shared_ptr<const TaskPosterior> make_gp_posterior(const Eigen::MatrixXd& X, const Eigen::VectorXd& y_standardized,
                                                       const Eigen::VectorXd& theta, Standardization standardization);

}  // namespace lbo::surrogate
