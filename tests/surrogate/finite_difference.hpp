#pragma once
// Central finite differences for gradient checks.

#include <Eigen/Core>
#include <functional>

namespace lbo::testing {

/// ∂f/∂x by central differences with step h·max(1, |xᵢ|).
inline Eigen::VectorXd numerical_gradient(const std::function<double(const Eigen::VectorXd&)>& f,
                                          const Eigen::VectorXd& x, double h = 1e-6) {
  Eigen::VectorXd g(x.size());
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    const double step = h * std::max(1.0, std::abs(x(i)));
    Eigen::VectorXd a = x, b = x;
    a(i) += step;
    b(i) -= step;
    g(i) = (f(a) - f(b)) / (2 * step);
  }
  return g;
}

/// max |a − b| / max(1, |b|)
inline double relative_error(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  return ((a - b).cwiseAbs().array() / b.cwiseAbs().array().max(1.0)).maxCoeff();
}

}  // namespace lbo::testing
