#include "lbo/surrogate/blr.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <numbers>

#include "lbo/surrogate/linalg.hpp"

namespace lbo::surrogate {

namespace {

constexpr double kLog2Pi = 1.8378770664093454836;  // log(2π)

double log_det_from(const Eigen::LLT<Eigen::MatrixXd>& llt) {
  return 2.0 * llt.matrixLLT().diagonal().array().log().sum();
}

// Primal: K = I + (β/α)ΦᵀΦ = LLᵀ, c = K⁻¹Φᵀy, m = (β/α)c, e = y − Φm.
//   log p = −N/2 log 2π + N/2 log β − β/2‖y‖² + β²/(2α) rᵀK⁻¹r − ½ log|K|
//   ∂/∂Φ = β e mᵀ − (β/α) Φ K⁻¹
//   ∂/∂log β = N/2 − (D − tr K⁻¹)/2 − β/2 ‖e‖²
//   ∂/∂log α = (D − tr K⁻¹)/2 − β²/(2α) ‖Φᵀe‖²
BlrEvidence primal(const Eigen::MatrixXd& phi, const Eigen::VectorXd& y, double alpha, double beta) {
  const auto n = static_cast<double>(phi.rows());
  const Eigen::Index d = phi.cols();
  Eigen::MatrixXd K = (beta / alpha) * (phi.transpose() * phi);
  K.diagonal().array() += 1.0;
  const Eigen::LLT<Eigen::MatrixXd> llt = robust_cholesky(K);
  const Eigen::VectorXd r = phi.transpose() * y;
  const Eigen::VectorXd c = llt.solve(r);
  const Eigen::VectorXd m = (beta / alpha) * c;
  const Eigen::VectorXd e = y - phi * m;

  BlrEvidence out;
  out.log_likelihood = -0.5 * n * kLog2Pi + 0.5 * n * std::log(beta) - 0.5 * beta * y.squaredNorm() +
                       0.5 * beta * beta / alpha * r.dot(c) - 0.5 * log_det_from(llt);
  // K⁻¹ by solves against I (D × D, D small): needed for tr K⁻¹ and Φ K⁻¹.
  const Eigen::MatrixXd K_inv = llt.solve(Eigen::MatrixXd::Identity(d, d));
  const double trace_k_inv = K_inv.trace();
  out.d_phi = beta * e * m.transpose() - (beta / alpha) * (phi * K_inv);
  out.d_log_beta = 0.5 * n - 0.5 * (static_cast<double>(d) - trace_k_inv) - 0.5 * beta * e.squaredNorm();
  out.d_log_alpha = 0.5 * (static_cast<double>(d) - trace_k_inv) -
                    0.5 * beta * beta / alpha * (phi.transpose() * e).squaredNorm();
  return out;
}

// Dual: C = ΦΦᵀ/α + I/β, a = C⁻¹y, W = aaᵀ − C⁻¹.
//   log p = −N/2 log 2π − ½ log|C| − ½ yᵀa
//   ∂/∂Φ = W Φ / α,  ∂/∂log α = −tr(W ΦΦᵀ)/(2α),  ∂/∂log β = −tr(W)/(2β)
BlrEvidence dual(const Eigen::MatrixXd& phi, const Eigen::VectorXd& y, double alpha, double beta) {
  const Eigen::Index n = phi.rows();
  const Eigen::MatrixXd gram = phi * phi.transpose();
  Eigen::MatrixXd C = gram / alpha;
  C.diagonal().array() += 1.0 / beta;
  const Eigen::LLT<Eigen::MatrixXd> llt = robust_cholesky(C);
  const Eigen::VectorXd a = llt.solve(y);

  BlrEvidence out;
  out.log_likelihood = -0.5 * static_cast<double>(n) * kLog2Pi - 0.5 * log_det_from(llt) - 0.5 * y.dot(a);
  const Eigen::MatrixXd W = a * a.transpose() - llt.solve(Eigen::MatrixXd::Identity(n, n));
  out.d_phi = W * phi / alpha;
  out.d_log_alpha = -0.5 / alpha * W.cwiseProduct(gram).sum();
  out.d_log_beta = -0.5 / beta * W.trace();
  return out;
}

}  // namespace

BlrEvidence blr_evidence(const Eigen::MatrixXd& phi, const Eigen::VectorXd& y, double log_alpha, double log_beta,
                         BlrForm form) {
  const double alpha = std::exp(log_alpha), beta = std::exp(log_beta);
  if (form == BlrForm::automatic) form = phi.rows() > phi.cols() ? BlrForm::primal : BlrForm::dual;
  return form == BlrForm::primal ? primal(phi, y, alpha, beta) : dual(phi, y, alpha, beta);
}

BlrPrecisions blr_evidence_maximum(const Eigen::MatrixXd& phi, const Eigen::VectorXd& y) {
  const auto n = static_cast<double>(phi.rows());
  // In the eigenbasis of ΦᵀΦ = V diag(s) Vᵀ, the posterior mean is m = V diag(β/(α + βsᵢ)) Vᵀ Φᵀy:
  // one decomposition serves every round.
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eigen(phi.transpose() * phi);
  const Eigen::VectorXd s = eigen.eigenvalues().cwiseMax(0.0);
  const Eigen::VectorXd projected = eigen.eigenvectors().transpose() * (phi.transpose() * y);
  const double variance = n > 1 ? (y.array() - y.mean()).square().sum() / (n - 1) : 0.0;
  const double beta0 = 1.0 / std::max(variance, 1e-12);
  const auto clamp = [](double v, double start) { return std::clamp(v, 1e-10 * start, 1e10 * start); };
  BlrPrecisions at{1.0, beta0};
  for (int round = 0; round < 500; ++round) {
    const Eigen::VectorXd lambda = at.beta * s;
    const Eigen::VectorXd m_rotated = (at.beta * projected.array() / (at.alpha + lambda.array())).matrix();
    const double gamma = (lambda.array() / (at.alpha + lambda.array())).sum();
    const Eigen::VectorXd m = eigen.eigenvectors() * m_rotated;
    const double residual = (y - phi * m).squaredNorm();
    const BlrPrecisions next{clamp(gamma / std::max(m_rotated.squaredNorm(), 1e-300), 1.0),
                             clamp(std::max(n - gamma, 1e-12) / std::max(residual, 1e-300), beta0)};
    const bool settled = std::abs(next.alpha - at.alpha) <= 1e-9 * at.alpha && std::abs(next.beta - at.beta) <= 1e-9 * at.beta;
    at = next;
    if (settled) break;
  }
  return at;
}

BayesianLinearRegression::BayesianLinearRegression(const Eigen::MatrixXd& phi, const Eigen::VectorXd& y,
                                                   double alpha, double beta)
    : alpha_(alpha), beta_(beta) {
  Eigen::MatrixXd K = (beta / alpha) * (phi.transpose() * phi);
  K.diagonal().array() += 1.0;
  factor_ = robust_cholesky(K);
  r_ = phi.transpose() * y;
  update_mean();
}

void BayesianLinearRegression::update_mean() { mean_ = (beta_ / alpha_) * factor_.solve(r_); }

Eigen::VectorXd BayesianLinearRegression::weight_covariance_times(const Eigen::VectorXd& v) const {
  return factor_.solve(v) / alpha_;
}

Posterior BayesianLinearRegression::predict(const Eigen::MatrixXd& phi_star) const {
  Posterior p;
  p.mean = phi_star * mean_;
  // φᵀK⁻¹φ/α = ‖L⁻¹φ‖²/α, one triangular solve for all rows.
  const Eigen::MatrixXd half = factor_.matrixL().solve(phi_star.transpose());
  p.var = half.colwise().squaredNorm().transpose() / alpha_;
  return p;
}

void BayesianLinearRegression::observe(const Eigen::MatrixXd& phi, const Eigen::VectorXd* y) {
  for (Eigen::Index i = 0; i < phi.rows(); ++i) {
    const Eigen::VectorXd row = phi.row(i).transpose();
    // With y = φᵀm: K'm = Km + (β/α)φφᵀm = (β/α)(r + φy), so m stays (GP-BUCB).
    const double target = y != nullptr ? (*y)(i) : row.dot(mean_);
    factor_.rankUpdate(row, beta_ / alpha_);
    r_ += row * target;
    update_mean();
  }
}

}  // namespace lbo::surrogate
