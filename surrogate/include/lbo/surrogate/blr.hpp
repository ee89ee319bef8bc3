#pragma once
// Bayesian linear regression on features: y = Φ w + ε, w ~ N(0, α⁻¹ I), ε ~ N(0, β⁻¹ I)
// (ABLR eqs. 1–3; LBO §2.1 eqs. 2–4, with LBO's λ written α here).

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <cstdint>

#include "lbo/surrogate/posterior.hpp"

namespace lbo::surrogate {

/// Which factorization the evidence uses: primal K = I + (β/α) ΦᵀΦ (D × D), or dual
/// C = ΦΦᵀ/α + I/β (N × N). `automatic` takes the smaller one (primal when N > D).
enum class BlrForm : std::uint8_t { automatic, primal, dual };

/// log p(y | Φ, α, β) = log N(y; 0, ΦΦᵀ/α + I/β) and its gradients.
struct BlrEvidence {
  double log_likelihood = 0;
  Eigen::MatrixXd d_phi;  ///< N × D
  double d_log_alpha = 0;
  double d_log_beta = 0;
};

/// The evidence of targets y (N) under features phi (N × D). Throws NumericalError when the
/// factorization fails.
BlrEvidence blr_evidence(const Eigen::MatrixXd& phi, const Eigen::VectorXd& y, double log_alpha,
                         double log_beta, BlrForm form = BlrForm::automatic);

/// The prior and noise precisions of a BLR, α and β.
struct BlrPrecisions {
  double alpha = 1;
  double beta = 1;
};

/// The (α, β) of greatest evidence log p(y | Φ, α, β) for targets y (N) under features phi
/// (N × D), by MacKay's fixed point (Bishop, "Pattern Recognition and Machine Learning", 2006,
/// §3.5.2, eqs. 3.91–3.95): with λᵢ the eigenvalues of βΦᵀΦ and m the posterior mean,
/// γ = Σ λᵢ/(α + λᵢ), α ← γ/mᵀm, β ← (N − γ)/‖y − Φm‖², until both change by less than 1e-9
/// relatively (at most 500 rounds). Both stay within [1e-10, 1e10]·(their start): the start is
/// α = 1 and β = 1/var(y). A function of its inputs only.
BlrPrecisions blr_evidence_maximum(const Eigen::MatrixXd& phi, const Eigen::VectorXd& y);

/// The posterior over w, kept as the Cholesky factor of K = I + (β/α) ΦᵀΦ and r = Φᵀy, so more
/// observations are rank-one updates.
class BayesianLinearRegression {
 public:
  /// phi: N × D (N may be 0), y: N.
  BayesianLinearRegression(const Eigen::MatrixXd& phi, const Eigen::VectorXd& y, double alpha, double beta);

  int features() const { return static_cast<int>(r_.size()); }
  double alpha() const { return alpha_; }
  double beta() const { return beta_; }
  /// Posterior mean of w: m = (β/α) K⁻¹ Φᵀ y.
  const Eigen::VectorXd& weight_mean() const { return mean_; }
  /// Σ_w v with Σ_w = (αI + βΦᵀΦ)⁻¹ = K⁻¹/α, by two triangular solves.
  Eigen::VectorXd weight_covariance_times(const Eigen::VectorXd& v) const;
  /// Latent mean φᵀm and variance φᵀΣ_wφ at the rows of phi_star (M × D).
  Posterior predict(const Eigen::MatrixXd& phi_star) const;
  /// Adds rows phi (n × D) with targets y, or at the current mean when y is null (the mean
  /// then stays and only the covariance shrinks). One rank-one Cholesky update per row.
  void observe(const Eigen::MatrixXd& phi, const Eigen::VectorXd* y);

 private:
  void update_mean();

  double alpha_, beta_;
  Eigen::LLT<Eigen::MatrixXd> factor_;  // of K
  Eigen::VectorXd r_;                   // Φᵀ y
  Eigen::VectorXd mean_;
};

}  // namespace lbo::surrogate
