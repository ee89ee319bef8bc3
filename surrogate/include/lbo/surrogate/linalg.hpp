#pragma once
// Small numerical helpers shared by the models.

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <stdexcept>
#include <vector>

namespace lbo::surrogate {

/// A factorization failed even with the largest jitter; the caller restarts or falls back.
class NumericalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Cholesky of a symmetric positive (semi-)definite A. When A is not numerically positive
/// definite, adds jitter·mean(diag A)·I with jitter escalating from 1e-10 to 1e-4; throws
/// NumericalError past that. Never forms an inverse.
Eigen::LLT<Eigen::MatrixXd> robust_cholesky(const Eigen::MatrixXd& A);

/// The lower Cholesky factor of [[A, B], [Bᵀ, C]] ((n+m) × (n+m)) from L, that of A (n × n),
/// and the new blocks B (n × m) and C (m × m), in O(n²m + m³) instead of O((n+m)³):
///   [[L, 0], [Sᵀ, L₂₂]] with S = L⁻¹B and L₂₂ = chol(C − SᵀS).
/// L₂₂ is robust_cholesky's: any jitter goes on the Schur complement alone, and NumericalError
/// is thrown as it throws. A GP conditioned on m new points extends its factor so.
Eigen::MatrixXd extend_cholesky(const Eigen::MatrixXd& L, const Eigen::MatrixXd& B, const Eigen::MatrixXd& C);

/// The points (each of length d) as the rows of an n × d matrix.
Eigen::MatrixXd stack_rows(const std::vector<Eigen::VectorXd>& points, int d);

/// The q-quantile of ascending, non-empty `sorted`, interpolated between order statistics
/// (Hyndman and Fan's type 7: numpy's and R's default, which Ray Tune's ASHA uses).
double sample_quantile(const std::vector<double>& sorted, double q);

/// Whether every entry is finite.
template <class Derived>
bool all_finite(const Eigen::DenseBase<Derived>& m) {
  return m.allFinite();
}

}  // namespace lbo::surrogate
