#pragma once
// Local penalization: a batch that does not condition its posterior on a running trial keeps
// proposals out of the trial's neighbourhood by multiplying the acquisition with a penalty that
// is 0 at the trial's point and 1 beyond a radius (González, Dai, Hennig & Lawrence, "Batch
// Bayesian optimization via local penalization", AISTATS 2016). The penalty is the hard local
// penalizer of Alvi, Ru, Calliess, Roberts & Osborne ("Asynchronous batch Bayesian
// optimisation with improved local penalisation", ICML 2019): φ_j(x) = min(‖x − x_j‖ / r_j, 1),
// r_j = (|μ_j − M| + σ_j) / L, with μ_j, σ_j the posterior at x_j, M the best value so far and
// L a Lipschitz constant of the posterior mean. Its radius does not vanish where μ_j ≥ M, as
// González's does, so a point the model rates highly still keeps the next proposals off it. A
// point costs O(n d) for n candidates, against O(m² + m n) for conditioning an m-point posterior
// on // it (BatchProposer), which is what lets thousands of running trials share one batch.
// Written here: BoTorch and GPyOpt are Python; the algebra is a few lines.

#include <Eigen/Core>
#include <vector>

namespace lbo::surrogate {

class LocalPenalty {
 public:
  /// r = (|mean − best| + sd) / lipschitz (standardized units; lipschitz > 0).
  static double radius(double mean, double sd, double best, double lipschitz);
  /// A value penalized by P = exp(log_penalty) ∈ [0, 1]: value · P when value ≥ 0, value / P
  /// below, so that any penalty lowers it (UCB may be negative); −∞ for P = 0 and value < 0.
  static double apply(double value, double log_penalty);

  /// Starts with no penalty at the n candidates C (rows).
  explicit LocalPenalty(Eigen::Index candidates = 0);

  /// A penalty around `center` (length d) of radius `radius`; C: the candidates (n × d) of the
  /// constructor. O(n d).
  void add(const Eigen::MatrixXd& C, const Eigen::VectorXd& center, double radius);
  /// Points penalized so far.
  int size() const { return static_cast<int>(radii_.size()); }
  /// log Π_j φ_j at each candidate (−∞ at a center).
  const Eigen::VectorXd& log_at_candidates() const { return log_candidates_; }
  /// log Π_j φ_j at x (length d), and in *gradient its gradient w.r.t. x when asked (zero where
  /// the log is −∞). O(size() · d), without allocating per center: the refinement of a
  /// proposal calls it at every step, with thousands of running trials penalized.
  double log_at(const Eigen::VectorXd& x, Eigen::VectorXd* gradient = nullptr) const;

 private:
  std::vector<double> centers_;  // d per center, one after the other (a d × size() matrix)
  std::vector<double> radii_;
  Eigen::VectorXd log_candidates_;
};

}  // namespace lbo::surrogate
