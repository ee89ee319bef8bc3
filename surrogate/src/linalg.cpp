#include "lbo/surrogate/linalg.hpp"

#include <algorithm>
#include <cmath>

#include "lbo/surrogate/posterior.hpp"

namespace lbo::surrogate {

Eigen::MatrixXd stack_rows(const std::vector<Eigen::VectorXd>& points, int d) {
  Eigen::MatrixXd X(static_cast<Eigen::Index>(points.size()), d);
  for (std::size_t i = 0; i < points.size(); ++i) X.row(static_cast<Eigen::Index>(i)) = points[i].transpose();
  return X;
}

Eigen::LLT<Eigen::MatrixXd> robust_cholesky(const Eigen::MatrixXd& A) {
  if (!A.allFinite()) throw NumericalError("cholesky: matrix has non-finite entries");
  Eigen::LLT<Eigen::MatrixXd> llt(A);
  if (llt.info() == Eigen::Success) return llt;
  const double scale = std::max(A.diagonal().mean(), 1e-300);
  for (double jitter = 1e-10; jitter <= 1e-4; jitter *= 10) {
    Eigen::MatrixXd B = A;
    B.diagonal().array() += jitter * scale;
    llt.compute(B);
    if (llt.info() == Eigen::Success) return llt;
  }
  throw NumericalError("cholesky: matrix is not positive definite, even with jitter");
}

Eigen::MatrixXd extend_cholesky(const Eigen::MatrixXd& L, const Eigen::MatrixXd& B, const Eigen::MatrixXd& C) {
  const Eigen::Index n = L.rows(), m = C.rows();
  const Eigen::MatrixXd S = L.triangularView<Eigen::Lower>().solve(B);
  const Eigen::LLT<Eigen::MatrixXd> schur = robust_cholesky(C - S.transpose() * S);
  Eigen::MatrixXd extended = Eigen::MatrixXd::Zero(n + m, n + m);
  extended.topLeftCorner(n, n) = L;
  extended.bottomLeftCorner(m, n) = S.transpose();
  extended.bottomRightCorner(m, m) = schur.matrixL();
  return extended;
}

Standardization Standardization::of(const Eigen::VectorXd& y) {
  Standardization s;
  if (y.size() == 0) return s;
  s.offset = y.mean();
  const double var = y.size() > 1 ? (y.array() - s.offset).square().sum() / static_cast<double>(y.size() - 1) : 0.0;
  s.scale = var > 1e-24 ? std::sqrt(var) : 1.0;
  return s;
}

double sample_quantile(const std::vector<double>& sorted, double q) {
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (position - static_cast<double>(below)) * (sorted[above] - sorted[below]);
}

}  // namespace lbo::surrogate
