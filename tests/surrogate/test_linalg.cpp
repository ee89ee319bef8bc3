#include "lbo/surrogate/linalg.hpp"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <random>

using namespace lbo::surrogate;

namespace {

// A Aᵀ/n + I for A with standard normal entries: symmetric positive definite, well conditioned.
Eigen::MatrixXd random_spd(Eigen::Index n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  Eigen::MatrixXd A(n, n);
  for (Eigen::Index i = 0; i < A.size(); ++i) A.data()[i] = normal(rng);
  return A * A.transpose() / static_cast<double>(n) + Eigen::MatrixXd::Identity(n, n);
}

// The factor of K's leading n × n block extended by the remaining rows and columns.
Eigen::MatrixXd extended_factor(const Eigen::MatrixXd& K, Eigen::Index n) {
  const Eigen::Index m = K.rows() - n;
  const Eigen::MatrixXd L = Eigen::LLT<Eigen::MatrixXd>(K.topLeftCorner(n, n)).matrixL();
  return extend_cholesky(L, K.topRightCorner(n, m), K.bottomRightCorner(m, m));
}

}  // namespace

TEST(LinalgTest, extend_cholesky_matches_the_factor_of_the_whole_matrix) {
  const Eigen::Index size = 9;
  const Eigen::MatrixXd K = random_spd(size, 11);
  const Eigen::MatrixXd whole = Eigen::LLT<Eigen::MatrixXd>(K).matrixL();
  // One new row, then blocks of several.
  for (const Eigen::Index n : {8, 6, 4, 1}) {
    const Eigen::MatrixXd L = extended_factor(K, n);
    ASSERT_EQ(L.rows(), size);
    ASSERT_EQ(L.cols(), size);
    EXPECT_LT((L - whole).cwiseAbs().maxCoeff(), 1e-12) << "extending " << n << " rows by " << size - n;
  }
}

TEST(LinalgTest, extend_cholesky_twice_matches_extending_once) {
  const Eigen::MatrixXd K = random_spd(10, 12);
  const Eigen::MatrixXd L3 = Eigen::LLT<Eigen::MatrixXd>(K.topLeftCorner(3, 3)).matrixL();
  const Eigen::MatrixXd L7 = extend_cholesky(L3, K.block(0, 3, 3, 4), K.block(3, 3, 4, 4));
  const Eigen::MatrixXd L10 = extend_cholesky(L7, K.block(0, 7, 7, 3), K.block(7, 7, 3, 3));
  EXPECT_LT((L10 - Eigen::MatrixXd(Eigen::LLT<Eigen::MatrixXd>(K).matrixL())).cwiseAbs().maxCoeff(), 1e-12);
}

TEST(LinalgTest, extend_cholesky_keeps_the_old_factor_and_jitters_only_a_new_block_not_positive_definite) {
  // B = L S and C = SᵀS + D, so the Schur complement is D = [[1, 1], [1, 1 − 1e-12]], whose
  // eigenvalue −5e-13 fails LLT: robust_cholesky's first jitter, 1e-10·mean(diag D)·I, goes
  // on D alone.
  const Eigen::MatrixXd K = random_spd(4, 13);
  const Eigen::MatrixXd L4 = Eigen::LLT<Eigen::MatrixXd>(K).matrixL();
  Eigen::MatrixXd S(4, 2);
  S << 1.0, 0.5, 2.0, -1.0, -1.0, 0.25, 0.5, 2.0;
  Eigen::Matrix2d D;
  D << 1.0, 1.0, 1.0, 1.0 - 1e-12;
  ASSERT_NE(Eigen::LLT<Eigen::MatrixXd>(D).info(), Eigen::Success);
  const Eigen::MatrixXd L = extend_cholesky(L4, L4 * S, S.transpose() * S + D);
  EXPECT_EQ(L.topLeftCorner(4, 4), L4);
  EXPECT_TRUE(L.topRightCorner(4, 2).isZero(0.0));
  EXPECT_LT((L.bottomLeftCorner(2, 4).transpose() - S).cwiseAbs().maxCoeff(), 1e-12);
  const Eigen::MatrixXd L22 = L.bottomRightCorner(2, 2);
  const Eigen::Matrix2d jittered = D + 1e-10 * D.diagonal().mean() * Eigen::Matrix2d::Identity();
  EXPECT_LT((L22 * L22.transpose() - jittered).cwiseAbs().maxCoeff(), 1e-13);
}

// The jitter scales with the Schur complement's own diagonal: one that is not positive gets none.
TEST(LinalgTest, extend_cholesky_throws_when_the_new_block_is_far_from_positive_definite) {
  const Eigen::MatrixXd L = Eigen::MatrixXd::Identity(2, 2);
  const Eigen::MatrixXd B = Eigen::MatrixXd::Zero(2, 1);
  EXPECT_THROW(extend_cholesky(L, B, Eigen::MatrixXd::Constant(1, 1, -1.0)), NumericalError);
}

// Type 7 on 1..5 (position q·4): the ends and the median are order statistics; q = 0.3 is 0.2 of
// the way from 2 to 3; one value is every quantile.
TEST(LinalgTest, sample_quantile_interpolates_between_order_statistics) {
  const std::vector<double> xs = {1.0, 2.0, 3.0, 4.0, 10.0};
  EXPECT_EQ(sample_quantile(xs, 0.0), 1.0);
  EXPECT_EQ(sample_quantile(xs, 0.5), 3.0);
  EXPECT_EQ(sample_quantile(xs, 1.0), 10.0);
  EXPECT_NEAR(sample_quantile(xs, 0.3), 2.2, 1e-15);
  EXPECT_NEAR(sample_quantile(xs, 0.9), 4.0 + 0.6 * 6.0, 1e-14);
  EXPECT_EQ(sample_quantile({7.0}, 0.75), 7.0);
}
