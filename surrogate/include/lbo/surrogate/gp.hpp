#pragma once
// GaussianProcess: an exact GP for one task, Matérn-5/2 kernel with ARD length-scales, signal
// and noise variance fitted by marginal likelihood (MAP: weak priors keep it from collapsing on
// a handful of points; multi-start L-BFGS-B in log space).

#include <Eigen/Core>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <vector>

#include "lbo/surrogate/posterior.hpp"

namespace lbo::surrogate {

/// Fixed functions g₁ … g_k of the input whose span a GP takes into its prior (Rasmussen &
/// Williams §2.7, the coefficients integrated out): y = β₀ + Σ_j β_j g_j(x) + f(x) with
/// β₀ ~ N(0, 1), β_j ~ N(0, s²/k), f ~ GP(0, Matérn), i.e. the kernel
/// Matérn(x, x') + 1 + (s²/k) g(x)ᵀ g(x'). The g_j here are other tasks' posterior means (each in
/// its own standardized units): a task leans on them as far as its own data bear them out, and
/// keeps the GP's uncertainty where they do not.
class MeanBasis {
 public:
  explicit MeanBasis(std::vector<std::shared_ptr<const TaskPosterior>> functions);
  int size() const { return static_cast<int>(functions_.size()); }
  /// n × k.
  Eigen::MatrixXd values(const Eigen::MatrixXd& X) const;
  /// g(x) (length k), with its Jacobian (k × d) in `jacobian`.
  Eigen::VectorXd value(const Eigen::VectorXd& x, Eigen::MatrixXd& jacobian) const;

 private:
  std::vector<std::shared_ptr<const TaskPosterior>> functions_;
};

/// Packed log-hyperparameters θ = [log ℓ₁ … log ℓ_d, log σ_f², log σ_n²] (length d + 2), and
/// log s² last (length d + 3) for a GP with a MeanBasis.
struct GpHyperparameters {
  static int size(int dimension, bool basis = false) { return dimension + 2 + (basis ? 1 : 0); }
  /// ℓ = 0.5, σ_f² = 1, σ_n² = 1e-2 (s² = 1): a middle-of-the-road start for standardized outputs.
  static Eigen::VectorXd defaults(int dimension, bool basis = false);
  /// Box for the optimizer: ℓ ∈ [0.01, 100], σ_f² ∈ [0.01, 100], σ_n² ∈ [1e-6, 2], s² ∈ [1e-3, 100].
  static Eigen::VectorXd lower(int dimension, bool basis = false);
  static Eigen::VectorXd upper(int dimension, bool basis = false);
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
/// log σ_n² ~ N(log 1e-2, 2²), log s² ~ N(0, 1). G: a MeanBasis's values at X (n × k), or null
/// for the plain GP. Throws NumericalError when K cannot be factorized.
GpObjective gp_objective(const Eigen::MatrixXd& X, const Eigen::VectorXd& y, const Eigen::VectorXd& theta,
                         bool with_prior = true, const Eigen::MatrixXd* G = nullptr);

/// Leave-one-out log predictive density of standardized y at X under θ, plain GP (no basis):
/// Σᵢ log N(yᵢ; μ₋ᵢ, σ²₋ᵢ), each point predicted from the others with the same θ. Closed form
/// (Rasmussen & Williams eq. 5.12): σ²₋ᵢ = 1/[K⁻¹]ᵢᵢ, yᵢ − μ₋ᵢ = [K⁻¹y]ᵢ σ²₋ᵢ, K with noise.
/// Two GPs of the same outputs, on different inputs or with different priors, compare by it
/// where their evidences would not (each evidence carries its own prior). Throws
/// NumericalError when K cannot be factorized.
double loo_log_predictive(const Eigen::MatrixXd& X, const Eigen::VectorXd& y, const Eigen::VectorXd& theta);
/// The same for any GP, given its covariance of y (noise included).
double loo_log_predictive(const Eigen::MatrixXd& covariance, const Eigen::VectorXd& y);

/// The best of the L-BFGS-B maximizations of `objective` (its value and gradient at θ; a
/// NumericalError where it cannot be evaluated counts as −∞) from each of `starts`, each first
/// clamped into [lower, upper]: a start whose line search fails ends where it stands. `value`
/// is −∞ when no start reached a finite one. The fits of GaussianProcess and Libo.
struct BestStart {
  Eigen::VectorXd theta;
  double value = -std::numeric_limits<double>::infinity();
};
BestStart maximize_from_starts(const std::function<GpObjective(const Eigen::VectorXd&)>& objective,
                               const std::vector<Eigen::VectorXd>& starts, const Eigen::VectorXd& lower,
                               const Eigen::VectorXd& upper, int max_iterations);

/// `count` points drawn uniformly from the inner half of the box [lower, upper] (random starts).
std::vector<Eigen::VectorXd> inner_half_points(const Eigen::VectorXd& lower, const Eigen::VectorXd& upper, int count,
                                               std::uint64_t seed);

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

  /// Standardizes y (unless options say not to), fits θ (warm-started from the previous fit when
  /// its length matches) and builds the posterior. Needs at least one observation. With a basis
  /// (non-empty), the prior spans it as MeanBasis describes.
  void fit(const Observations& data, std::uint64_t seed, std::shared_ptr<const MeanBasis> basis = nullptr);
  /// Uses θ as given, without optimizing (tests, and restoring a checkpointed fit).
  void set(const Observations& data, const Eigen::VectorXd& theta, std::shared_ptr<const MeanBasis> basis = nullptr);
  /// The next fit starts from θ; no posterior until then.
  void warm_start(const Eigen::VectorXd& theta) {
    theta_ = theta;
    posterior_.reset();
  }

  const Eigen::VectorXd& theta() const { return theta_; }
  std::shared_ptr<const TaskPosterior> posterior() const { return posterior_; }
  /// The objective the fit maximized (log marginal likelihood plus log prior) at θ, for the
  /// data and basis of the last fit or set (NaN before one): models of the same data compare by it.
  double log_evidence() const { return log_evidence_; }

 private:
  Options options_;
  Eigen::VectorXd theta_;
  std::shared_ptr<const TaskPosterior> posterior_;
  double log_evidence_ = std::numeric_limits<double>::quiet_NaN();
};

/// The exact GP posterior for X (n × d), standardized y and θ (exposed for tests), with the
/// prior spanning `basis` when given (θ then has log s² last).
std::shared_ptr<const TaskPosterior> make_gp_posterior(const Eigen::MatrixXd& X, const Eigen::VectorXd& y_standardized,
                                                       const Eigen::VectorXd& theta, Standardization standardization,
                                                       std::shared_ptr<const MeanBasis> basis = nullptr);

}  // namespace lbo::surrogate
