#include "lbo/surrogate/kernel_dictionary.hpp"

#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <cmath>
#include <random>

#include "finite_difference.hpp"

using namespace lbo::surrogate;
using lbo::testing::numerical_gradient;
using lbo::testing::relative_error;

namespace {

Eigen::MatrixXd uniform_points(Eigen::Index n, Eigen::Index d, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Eigen::MatrixXd X(n, d);
  for (Eigen::Index i = 0; i < X.size(); ++i) X.data()[i] = u(rng);
  return X;
}

}  // namespace

TEST(KernelDictionaryTest, standard_sizes_follow_the_documented_layout) {
  EXPECT_EQ(KernelDictionary::standard(1).size(), 16 + 50);
  EXPECT_EQ(KernelDictionary::standard(2).size(), 16 * 3 + 100);
  EXPECT_EQ(KernelDictionary::standard(3).size(), 16 * 4);
  for (int d = 1; d <= 8; ++d) EXPECT_GE(KernelDictionary::standard(d).size(), 50) << "d = " << d;
  EXPECT_THROW(KernelDictionary::standard(0), std::invalid_argument);
}

TEST(KernelDictionaryTest, every_kernel_is_bounded_symmetric_and_positive_semidefinite) {
  for (int d : {1, 2, 3}) {
    const KernelDictionary dictionary = KernelDictionary::standard(d);
    const Eigen::MatrixXd X = uniform_points(25, d, 7 + d);
    for (const BaseKernel& k : dictionary.kernels()) {
      const Eigen::MatrixXd K = k.gram(X, X);
      EXPECT_LE(K.cwiseAbs().maxCoeff(), 1.0 + 1e-12) << k.name();
      EXPECT_LT((K - K.transpose()).cwiseAbs().maxCoeff(), 1e-12) << k.name();
      const double smallest = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(K).eigenvalues().minCoeff();
      EXPECT_GT(smallest, -1e-9) << k.name();
      if (k.family != KernelFamily::cosine) {
        EXPECT_NEAR(K.diagonal().minCoeff(), 1.0, 1e-12) << k.name();
      }
    }
  }
}

TEST(KernelDictionaryTest, kernels_match_their_closed_forms) {
  Eigen::MatrixXd a(1, 2), b(1, 2);
  a << 0.1, 0.7;
  b << 0.4, 0.3;
  const double l = 0.5;
  const double r_all = std::sqrt(0.3 * 0.3 + 0.4 * 0.4) / l;  // over both dimensions
  const double r_x1 = 0.4 / l;                                 // over x1 alone
  const BaseKernel rbf{KernelFamily::rbf, {0, 1}, l, {}};
  EXPECT_NEAR(rbf.gram(a, b)(0, 0), std::exp(-0.5 * r_all * r_all), 1e-14);
  const BaseKernel matern{KernelFamily::matern52, {1}, l, {}};
  const double s = std::sqrt(5.0) * r_x1;
  EXPECT_NEAR(matern.gram(a, b)(0, 0), (1 + s + s * s / 3) * std::exp(-s), 1e-14);
  const BaseKernel cosine{KernelFamily::cosine, {0, 1}, 1, {3, 2}};
  EXPECT_NEAR(cosine.gram(a, b)(0, 0),
              std::cos(3 * M_PI * 0.1) * std::cos(2 * M_PI * 0.7) * std::cos(3 * M_PI * 0.4) * std::cos(2 * M_PI * 0.3),
              1e-14);
  EXPECT_EQ(cosine.name(), "cos(3πx0)·cos(2πx1)");
  EXPECT_EQ(matern.name(), "matern52(x1; l=0.5)");
}

TEST(KernelDictionaryTest, gradients_match_finite_differences) {
  const Eigen::MatrixXd B = uniform_points(6, 3, 3);
  const Eigen::VectorXd x = uniform_points(1, 3, 4).row(0).transpose();
  const std::vector<BaseKernel> kernels = {
      {KernelFamily::matern52, {0, 2}, 0.3, {}}, {KernelFamily::rbf, {1}, 0.2, {}},
      {KernelFamily::cosine, {0, 1}, 1, {4, 7}}, {KernelFamily::matern52, {0, 1, 2}, 2.0, {}}};
  for (const BaseKernel& k : kernels) {
    const Eigen::MatrixXd g = k.gradient(x, B);
    for (Eigen::Index i = 0; i < B.rows(); ++i) {
      const auto f = [&](const Eigen::VectorXd& p) { return k.gram(p.transpose(), B.row(i))(0, 0); };
      EXPECT_LT(relative_error(g.col(i), numerical_gradient(f, x)), 1e-6) << k.name();
    }
  }
  const KernelDictionary dictionary(kernels);
  const std::vector<int> active = {0, 2};
  const Eigen::MatrixXd g = dictionary.combined_gradient(x, B, active);
  for (Eigen::Index i = 0; i < B.rows(); ++i) {
    const auto f = [&](const Eigen::VectorXd& p) { return dictionary.combined(p.transpose(), B.row(i), active)(0, 0); };
    EXPECT_LT(relative_error(g.col(i), numerical_gradient(f, x)), 1e-6);
  }
}

TEST(KernelDictionaryTest, combination_is_the_mean_of_the_active_kernels_and_empty_means_all) {
  const KernelDictionary dictionary = KernelDictionary::standard(2);
  const Eigen::MatrixXd A = uniform_points(4, 2, 11), B = uniform_points(5, 2, 12);
  const Eigen::MatrixXd two = dictionary.combined(A, B, {3, 60});
  EXPECT_LT((two - 0.5 * (dictionary.kernel(3).gram(A, B) + dictionary.kernel(60).gram(A, B))).cwiseAbs().maxCoeff(),
            1e-14);
  Eigen::MatrixXd sum = Eigen::MatrixXd::Zero(4, 5);
  for (const BaseKernel& k : dictionary.kernels()) sum += k.gram(A, B);
  EXPECT_LT((dictionary.combined(A, B, {}) - sum / dictionary.size()).cwiseAbs().maxCoeff(), 1e-12);
}
