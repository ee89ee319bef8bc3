#include "lbo/surrogate/mlp.hpp"

#include <gtest/gtest.h>

#include "finite_difference.hpp"

using namespace lbo::surrogate;
using lbo::testing::numerical_gradient;
using lbo::testing::relative_error;

TEST(MlpTest, shapes_and_parameter_count) {
  const Mlp mlp(3, {5, 4});
  EXPECT_EQ(mlp.parameter_count(), 3 * 5 + 5 + 5 * 4 + 4);
  EXPECT_EQ(mlp.output_dim(), 4);
  std::mt19937_64 rng(1);
  const Eigen::VectorXd w = mlp.initial_parameters(rng);
  const Eigen::MatrixXd phi = mlp.forward(w, Eigen::MatrixXd::Random(7, 3));
  EXPECT_EQ(phi.rows(), 7);
  EXPECT_EQ(phi.cols(), 4);
  EXPECT_LE(phi.cwiseAbs().maxCoeff(), 1.0);  // tanh outputs
}

TEST(MlpTest, forward_matches_the_layer_formula) {
  const Mlp mlp(2, {3});
  Eigen::VectorXd w(2 * 3 + 3);
  w << 0.1, -0.2, 0.3, 0.4, -0.5, 0.6, 0.05, -0.05, 0.2;  // W (3 × 2, column-major), then b
  Eigen::MatrixXd W(3, 2);
  W << 0.1, 0.4, -0.2, -0.5, 0.3, 0.6;
  const Eigen::Vector3d b(0.05, -0.05, 0.2);
  const Eigen::Vector2d x(0.7, -1.1);
  const Eigen::VectorXd expected = (W * x + b).array().tanh();
  EXPECT_LT((mlp.forward(w, x.transpose()).row(0).transpose() - expected).norm(), 1e-14);
}

TEST(MlpTest, backward_matches_finite_differences) {
  const Mlp mlp(3, {6, 5, 4});
  std::mt19937_64 rng(2);
  const Eigen::VectorXd w = mlp.initial_parameters(rng);
  const Eigen::MatrixXd X = Eigen::MatrixXd::Random(9, 3);
  const Eigen::MatrixXd R = Eigen::MatrixXd::Random(9, 4);  // loss = Σ R ∘ Φ
  MlpCache cache;
  mlp.forward(w, X, &cache);
  const Eigen::VectorXd analytic = mlp.backward(w, cache, R);
  const Eigen::VectorXd numeric =
      numerical_gradient([&](const Eigen::VectorXd& v) { return mlp.forward(v, X).cwiseProduct(R).sum(); }, w);
  EXPECT_LT(relative_error(analytic, numeric), 1e-7);
}

TEST(MlpTest, input_gradient_matches_finite_differences) {
  const Mlp mlp(4, {7, 5});
  std::mt19937_64 rng(3);
  const Eigen::VectorXd w = mlp.initial_parameters(rng);
  const Eigen::VectorXd x = Eigen::VectorXd::Random(4);
  const Eigen::MatrixXd V = Eigen::MatrixXd::Random(5, 2);
  const Eigen::MatrixXd analytic = mlp.input_gradient(w, x, V);
  ASSERT_EQ(analytic.rows(), 4);
  ASSERT_EQ(analytic.cols(), 2);
  for (int j = 0; j < 2; ++j) {
    const Eigen::VectorXd numeric = numerical_gradient(
        [&](const Eigen::VectorXd& v) { return mlp.forward(w, v.transpose()).row(0).dot(V.col(j).transpose()); }, x);
    EXPECT_LT(relative_error(analytic.col(j), numeric), 1e-7);
  }
}
