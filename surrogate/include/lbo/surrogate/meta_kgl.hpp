#pragma once
// META-KGL (Kassraie et al., "Lifelong Bandit Optimization", §3): which base kernels of a
// dictionary the task family needs, from the forced-exploration data of finished tasks.
//
// Each task s's function is a sum of one function per base kernel, f_s = Σ_j f_s^(j) with
// f_s^(j) ∈ H_{k_j}, and the group lasso
//     min_β  (1/N) Σ_s ‖y_s − Σ_j Φ_s^(j) β_s^(j)‖² + λ Σ_j ‖β^(j)‖₂,   β^(j) = (β_1^(j), …, β_s^(j)),
// with N = Σ_s n_s, groups kernel j's coefficients across all tasks: a kernel is used by every
// task or by none. Φ_s^(j) is a square root of k_j's Gram matrix on task s's points
// (Φ Φᵀ = K_j(X_s, X_s), by eigendecomposition), so by the representer theorem ‖β_s^(j)‖ is
// ‖f_s^(j)‖ in H_{k_j}: the paper's features for finite-rank kernels, and the kernelized group
// lasso for the others. Ĵ = {j : ‖β̂^(j)‖₂ > ω} with ω chosen by cross-validation (meta_kgl.cpp),
// k̂ = (1/|Ĵ|) Σ_{j∈Ĵ} k_j.

#include <Eigen/Core>
#include <cstdint>
#include <vector>

#include "lbo/surrogate/kernel_dictionary.hpp"
#include "lbo/surrogate/posterior.hpp"

namespace lbo::surrogate {

/// The group lasso above in its features: block (s, j) is Φ_s^(j) (n_s × r_sj, r_sj may be 0).
struct GroupLassoProblem {
  std::vector<std::vector<Eigen::MatrixXd>> features;  ///< [task][group]
  std::vector<Eigen::VectorXd> targets;                ///< [task], length n_s
  int groups() const { return features.empty() ? 0 : static_cast<int>(features.front().size()); }
  Eigen::Index observations() const;
};

struct GroupLassoSolution {
  std::vector<std::vector<Eigen::VectorXd>> beta;  ///< [task][group]
  Eigen::VectorXd group_norms;                     ///< ‖β^(j)‖₂ per group
  int iterations = 0;
  bool converged = false;
};

/// The objective above at β.
double group_lasso_objective(const GroupLassoProblem& problem, const std::vector<std::vector<Eigen::VectorXd>>& beta,
                             double lambda);
/// The smallest λ whose solution is β = 0: max_j ‖∇_j‖₂ of the loss at 0.
double group_lasso_lambda_max(const GroupLassoProblem& problem);

/// FISTA (Beck & Teboulle 2009) with block soft-thresholding, prox_{tλ‖·‖}(v) = v·max(0, 1 − tλ/‖v‖),
/// step 1/L with L = (2/N) max_s λ_max(Φ_s Φ_sᵀ) (the loss is separable over tasks), and
/// O'Donoghue–Candès adaptive restart. Stops when no coefficient moves by more than
/// `tolerance` (relative to the largest) in an iteration, or after `max_iterations`. Starts
/// from `warm` when given (a λ path).
GroupLassoSolution solve_group_lasso(const GroupLassoProblem& problem, double lambda,
                                     const GroupLassoSolution* warm = nullptr, int max_iterations = 5000,
                                     double tolerance = 1e-9);

struct MetaKglOptions {
  /// λ = ratio · λ_max for the ratios tried, largest first; one of them is chosen by K-fold
  /// cross-validation over the pooled points (each fold holds out points of every task),
  /// taking the sparsest λ whose error is within one standard error of the best (the 1-SE
  /// rule, Hastie et al. ESL §7.10: support recovery, not prediction, is the aim).
  std::vector<double> lambda_ratios = {0.7, 0.5, 0.35, 0.25, 0.18, 0.12, 0.08, 0.05, 0.035, 0.025, 0.015, 0.01};
  int folds = 5;
  /// Groups below omega · max_j ‖β̂^(j)‖₂ are never in Ĵ; of the others, the k largest for the
  /// k chosen by cross-validating the combined kernel (meta_kgl.cpp, choose_support).
  double omega = 1e-2;
};

struct MetaKglResult {
  std::vector<int> active;    ///< Ĵ, ascending; empty when no task had data (k_full then)
  Eigen::VectorXd group_norms;  ///< ‖β̂^(j)‖₂ at the chosen λ
  double lambda = 0, lambda_max = 0;
};

/// Kernel j's feature block for the points X: a square root of K_j(X, X) from its
/// eigendecomposition, eigenvalues below 1e-10 · n dropped (n × rank).
Eigen::MatrixXd kernel_features(const BaseKernel& kernel, const Eigen::MatrixXd& X);

/// META-KGL on the tasks' data (raw y, each task standardized to mean 0 and unit variance
/// first; tasks with fewer than 2 points are left out).
MetaKglResult meta_kgl(const KernelDictionary& dictionary, const std::vector<Observations>& tasks,
                       std::uint64_t seed, const MetaKglOptions& options = {});

}  // namespace lbo::surrogate
