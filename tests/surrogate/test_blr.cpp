#include "lbo/surrogate/blr.hpp"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <random>

#include "finite_difference.hpp"

using namespace lbo::surrogate;
using lbo::testing::numerical_gradient;
using lbo::testing::relative_error;

namespace {

Eigen::MatrixXd random_matrix(Eigen::Index rows, Eigen::Index cols, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n(0.0, 1.0);
  Eigen::MatrixXd m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = n(rng);
  return m;
}

// log N(y; 0, C) by LU: the definition, nothing shared with the implementation.
double direct_log_evidence(const Eigen::MatrixXd& phi, const Eigen::VectorXd& y, double alpha, double beta) {
  const Eigen::Index n = phi.rows();
  const Eigen::MatrixXd C = phi * phi.transpose() / alpha + Eigen::MatrixXd::Identity(n, n) / beta;
  const Eigen::FullPivLU<Eigen::MatrixXd> lu(C);
  return -0.5 * static_cast<double>(n) * std::log(2 * M_PI) - 0.5 * std::log(lu.determinant()) -
         0.5 * y.dot(lu.solve(y));
}

struct Problem {
  Eigen::MatrixXd phi;
  Eigen::VectorXd y;
};

Problem problem(Eigen::Index n, Eigen::Index d, std::uint64_t seed) {
  return {random_matrix(n, d, seed), random_matrix(n, 1, seed + 1).col(0)};
}

}  // namespace

TEST(BlrTest, posterior_matches_closed_form) {
  const auto [phi, y] = problem(8, 3, 1);
  const double alpha = 0.7, beta = 4.0;
  const BayesianLinearRegression blr(phi, y, alpha, beta);
  // Σ_w = (αI + βΦᵀΦ)⁻¹, m = βΣ_wΦᵀy (Bishop 3.53–3.54), by explicit inversion.
  const Eigen::MatrixXd cov = (alpha * Eigen::MatrixXd::Identity(3, 3) + beta * phi.transpose() * phi).inverse();
  const Eigen::VectorXd mean = beta * cov * phi.transpose() * y;
  EXPECT_LT((blr.weight_mean() - mean).norm(), 1e-10);
  const Eigen::MatrixXd test = random_matrix(5, 3, 9);
  const Posterior p = blr.predict(test);
  for (Eigen::Index i = 0; i < 5; ++i) {
    const Eigen::VectorXd t = test.row(i).transpose();
    EXPECT_NEAR(p.mean(i), t.dot(mean), 1e-10);
    EXPECT_NEAR(p.var(i), t.dot(cov * t), 1e-10);
  }
}

TEST(BlrTest, evidence_equals_the_gaussian_density) {
  for (const auto& [n, d] : {std::pair<Eigen::Index, Eigen::Index>{10, 3}, {3, 10}, {6, 6}}) {
    const auto [phi, y] = problem(n, d, 2 + n);
    for (BlrForm form : {BlrForm::primal, BlrForm::dual, BlrForm::automatic}) {
      const BlrEvidence e = blr_evidence(phi, y, std::log(0.3), std::log(2.5), form);
      EXPECT_NEAR(e.log_likelihood, direct_log_evidence(phi, y, 0.3, 2.5), 1e-9) << n << "x" << d;
    }
  }
}

TEST(BlrTest, primal_and_dual_agree_on_value_and_gradients) {
  for (const auto& [n, d] : {std::pair<Eigen::Index, Eigen::Index>{12, 4}, {4, 12}}) {
    const auto [phi, y] = problem(n, d, 3 + d);
    const BlrEvidence p = blr_evidence(phi, y, -0.4, 1.1, BlrForm::primal);
    const BlrEvidence q = blr_evidence(phi, y, -0.4, 1.1, BlrForm::dual);
    EXPECT_NEAR(p.log_likelihood, q.log_likelihood, 1e-9);
    EXPECT_LT((p.d_phi - q.d_phi).cwiseAbs().maxCoeff(), 1e-8);
    EXPECT_NEAR(p.d_log_alpha, q.d_log_alpha, 1e-8);
    EXPECT_NEAR(p.d_log_beta, q.d_log_beta, 1e-8);
  }
}

TEST(BlrTest, gradients_match_finite_differences) {
  for (const auto& [n, d] : {std::pair<Eigen::Index, Eigen::Index>{9, 3}, {3, 7}}) {
    const auto [phi, y] = problem(n, d, 4 + n);
    for (BlrForm form : {BlrForm::primal, BlrForm::dual}) {
      const double la = 0.2, lb = 0.9;
      const BlrEvidence e = blr_evidence(phi, y, la, lb, form);
      // Φ
      const Eigen::VectorXd flat = Eigen::Map<const Eigen::VectorXd>(phi.data(), phi.size());
      const Eigen::VectorXd numeric = numerical_gradient(
          [&](const Eigen::VectorXd& v) {
            return blr_evidence(Eigen::Map<const Eigen::MatrixXd>(v.data(), n, d), y, la, lb, form).log_likelihood;
          },
          flat);
      const Eigen::VectorXd analytic = Eigen::Map<const Eigen::VectorXd>(e.d_phi.data(), e.d_phi.size());
      EXPECT_LT(relative_error(analytic, numeric), 1e-6);
      // log α, log β
      const Eigen::VectorXd precisions = numerical_gradient(
          [&](const Eigen::VectorXd& v) { return blr_evidence(phi, y, v(0), v(1), form).log_likelihood; },
          Eigen::Vector2d(la, lb));
      EXPECT_NEAR(e.d_log_alpha, precisions(0), 1e-6);
      EXPECT_NEAR(e.d_log_beta, precisions(1), 1e-6);
    }
  }
}

TEST(BlrTest, hallucinated_points_keep_the_mean_and_shrink_the_variance) {
  const auto [phi, y] = problem(10, 4, 5);
  BayesianLinearRegression blr(phi, y, 1.3, 7.0);
  const Eigen::MatrixXd pending = random_matrix(2, 4, 11);
  const Eigen::MatrixXd test = random_matrix(6, 4, 12);
  const Posterior before = blr.predict(test);
  const Posterior at_pending_before = blr.predict(pending);
  BayesianLinearRegression hallucinated = blr;
  hallucinated.observe(pending, nullptr);
  const Posterior after = hallucinated.predict(test);
  const Posterior at_pending_after = hallucinated.predict(pending);
  EXPECT_LT((after.mean - before.mean).cwiseAbs().maxCoeff(), 1e-10);
  EXPECT_TRUE((at_pending_after.var.array() < at_pending_before.var.array()).all());
  // The same as adding the points with y = the current mean and refitting.
  Eigen::MatrixXd stacked(12, 4);
  stacked << phi, pending;
  Eigen::VectorXd targets(12);
  targets << y, at_pending_before.mean;
  const BayesianLinearRegression refit(stacked, targets, 1.3, 7.0);
  const Posterior expected = refit.predict(test);
  EXPECT_LT((after.mean - expected.mean).cwiseAbs().maxCoeff(), 1e-10);
  EXPECT_LT((after.var - expected.var).cwiseAbs().maxCoeff(), 1e-10);
}

TEST(BlrTest, observing_real_targets_equals_refitting) {
  const auto [phi, y] = problem(10, 4, 6);
  BayesianLinearRegression blr(phi.topRows(7), y.head(7), 0.8, 3.0);
  const Eigen::VectorXd rest = y.tail(3);
  blr.observe(phi.bottomRows(3), &rest);
  const BayesianLinearRegression refit(phi, y, 0.8, 3.0);
  const Eigen::MatrixXd test = random_matrix(4, 4, 13);
  EXPECT_LT((blr.predict(test).mean - refit.predict(test).mean).cwiseAbs().maxCoeff(), 1e-10);
  EXPECT_LT((blr.predict(test).var - refit.predict(test).var).cwiseAbs().maxCoeff(), 1e-10);
}

// MacKay's fixed point is the evidence's maximum: both gradients vanish there, and no (α, β) of a
// grid around it (factors 0.5 to 2 in each) has a greater evidence. The targets are a linear
// function of the features plus noise of sd 0.3, so the fitted noise precision is near 1/0.09.
TEST(BlrTest, evidence_maximum_is_stationary_and_the_best_of_its_neighbourhood) {
  const Eigen::Index n = 60, d = 4;
  const Eigen::MatrixXd phi = random_matrix(n, d, 11);
  const Eigen::VectorXd w = Eigen::Vector4d(0.5, -1.0, 2.0, 0.0);
  const Eigen::VectorXd y = phi * w + 0.3 * random_matrix(n, 1, 12).col(0);
  const BlrPrecisions at = blr_evidence_maximum(phi, y);
  const BlrEvidence e = blr_evidence(phi, y, std::log(at.alpha), std::log(at.beta));
  EXPECT_NEAR(e.d_log_alpha, 0.0, 1e-6);
  EXPECT_NEAR(e.d_log_beta, 0.0, 1e-6);
  EXPECT_GT(at.beta, 1.0 / (0.45 * 0.45));
  EXPECT_LT(at.beta, 1.0 / (0.2 * 0.2));
  for (const double fa : {0.5, 0.8, 1.25, 2.0}) {
    for (const double fb : {0.5, 0.8, 1.0, 1.25, 2.0}) {
      EXPECT_LT(direct_log_evidence(phi, y, fa * at.alpha, fb * at.beta), direct_log_evidence(phi, y, at.alpha, at.beta))
          << fa << " " << fb;
    }
  }
}

// Targets the features explain exactly keep β finite (its bound), and constant features with
// varying targets give a finite α: the fixed point never divides by zero.
TEST(BlrTest, evidence_maximum_stays_finite_on_degenerate_data) {
  const Eigen::MatrixXd phi = random_matrix(20, 3, 13);
  const BlrPrecisions exact = blr_evidence_maximum(phi, phi * Eigen::Vector3d(1, 2, 3));
  EXPECT_TRUE(std::isfinite(exact.alpha) && std::isfinite(exact.beta));
  EXPECT_GT(exact.beta, 1e3);
  const BlrPrecisions none = blr_evidence_maximum(Eigen::MatrixXd::Zero(20, 3), random_matrix(20, 1, 14).col(0));
  EXPECT_TRUE(std::isfinite(none.alpha) && std::isfinite(none.beta));
  EXPECT_GT(none.beta, 0.0);
}
