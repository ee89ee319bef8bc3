#include "lbo/surrogate/mlp.hpp"

#include <cmath>
#include <stdexcept>

namespace lbo::surrogate {

namespace {

using ConstMatrixMap = Eigen::Map<const Eigen::MatrixXd>;
using ConstVectorMap = Eigen::Map<const Eigen::VectorXd>;

}  // namespace

Mlp::Mlp(int input_dim, std::vector<int> hidden) : input_dim_(input_dim), hidden_(std::move(hidden)) {
  if (input_dim_ < 1 || hidden_.empty()) throw std::invalid_argument("Mlp: needs an input and a layer");
  int in = input_dim_;
  for (int out : hidden_) {
    if (out < 1) throw std::invalid_argument("Mlp: layer width must be >= 1");
    Layer layer{in, out, parameter_count_, parameter_count_ + in * out};
    parameter_count_ += in * out + out;
    layers_.push_back(layer);
    in = out;
  }
}

Eigen::VectorXd Mlp::initial_parameters(std::mt19937_64& rng) const {
  Eigen::VectorXd params = Eigen::VectorXd::Zero(parameter_count_);
  for (const Layer& l : layers_) {
    const double limit = std::sqrt(6.0 / (l.in + l.out));
    std::uniform_real_distribution<double> u(-limit, limit);
    for (int i = 0; i < l.in * l.out; ++i) params(l.weight_offset + i) = u(rng);
  }
  return params;
}

namespace {

// tanh through Eigen's vectorized exp: glibc's scalar tanh (by way of expm1) was a fifth of an
// LBO fit. tanh z = sign(z) (1 − e^{−2|z|}) / (1 + e^{−2|z|}): no overflow, absolute error a few
// ulp of 1 (relative error grows near 0, where the value is that small).
Eigen::MatrixXd tanh_of(const Eigen::MatrixXd& Z) {
  const Eigen::ArrayXXd e = (-2.0 * Z.array().abs()).exp();
  return (Z.array().sign() * (1.0 - e) / (1.0 + e)).matrix();
}

}  // namespace

Eigen::MatrixXd Mlp::forward(const Eigen::VectorXd& params, const Eigen::MatrixXd& X, MlpCache* cache) const {
  if (X.cols() != input_dim_) throw std::invalid_argument("Mlp::forward: X has the wrong number of columns");
  if (cache != nullptr) {
    cache->activations.clear();
    cache->activations.push_back(X);
  }
  Eigen::MatrixXd A = X;
  for (const Layer& l : layers_) {
    const ConstMatrixMap W(params.data() + l.weight_offset, l.out, l.in);
    const ConstVectorMap b(params.data() + l.bias_offset, l.out);
    Eigen::MatrixXd Z = A * W.transpose();
    Z.rowwise() += b.transpose();
    A = tanh_of(Z);
    if (cache != nullptr) cache->activations.push_back(A);
  }
  return A;
}

Eigen::VectorXd Mlp::backward(const Eigen::VectorXd& params, const MlpCache& cache, const Eigen::MatrixXd& d_out) const {
  Eigen::VectorXd grad = Eigen::VectorXd::Zero(parameter_count_);
  Eigen::MatrixXd G = d_out;  // ∂L/∂A_l
  for (int i = static_cast<int>(layers_.size()) - 1; i >= 0; --i) {
    const Layer& l = layers_[i];
    const Eigen::MatrixXd& A = cache.activations[i + 1];
    const Eigen::MatrixXd& A_prev = cache.activations[i];
    const Eigen::MatrixXd dZ = (G.array() * (1.0 - A.array().square())).matrix();  // tanh' = 1 − tanh²
    Eigen::Map<Eigen::MatrixXd>(grad.data() + l.weight_offset, l.out, l.in) = dZ.transpose() * A_prev;
    Eigen::Map<Eigen::VectorXd>(grad.data() + l.bias_offset, l.out) = dZ.colwise().sum().transpose();
    if (i > 0) G = dZ * ConstMatrixMap(params.data() + l.weight_offset, l.out, l.in);
  }
  return grad;
}

Eigen::MatrixXd Mlp::input_gradient(const Eigen::VectorXd& params, const Eigen::VectorXd& x,
                                    const Eigen::MatrixXd& V) const {
  MlpCache cache;
  forward(params, x.transpose(), &cache);
  Eigen::MatrixXd G = V.transpose();  // k × out: one row per vector
  for (int i = static_cast<int>(layers_.size()) - 1; i >= 0; --i) {
    const Layer& l = layers_[i];
    const Eigen::RowVectorXd derivative = 1.0 - cache.activations[i + 1].row(0).array().square();
    const Eigen::MatrixXd dZ = G.array().rowwise() * derivative.array();
    G = dZ * ConstMatrixMap(params.data() + l.weight_offset, l.out, l.in);
  }
  return G.transpose();
}

}  // namespace lbo::surrogate
