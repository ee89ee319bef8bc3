#pragma once
// Feasibility: the probability that a configuration succeeds, learned from trials that failed
// (a crash, an out-of-memory exit, a timeout) and trials that did not, over every task at once.
//
// A Gaussian-process classifier with the logistic likelihood and the Laplace approximation
// (Rasmussen & Williams, "Gaussian Processes for Machine Learning", 2006: Algorithm 3.1 for the
// posterior mode, 3.2 for predictions, eq. 3.32 for the approximate evidence), the probability
// averaged over the latent's Gaussian by MacKay's probit approximation σ(κ μ), κ = (1 + π v/8)^−½
// (R&W §3.4.2). The latent has a constant mean, the logit of the share of trials that succeeded
// (with one success and one failure added), so a region no trial came near is as likely to
// succeed as trials are on the whole. Proposals weigh their acquisition by this probability, as
// constrained Bayesian optimization weighs EI by the probability of feasibility (Gardner, Kusner,
// Xu, Weinberger & Cunningham, "Bayesian optimization with inequality constraints", ICML 2014;
// Gelbart, Snoek & Adams, "Bayesian optimization with unknown constraints", UAI 2014, who model a
// crash as such a constraint with a GP classifier).
//
// Across tasks: k((x, s), (x', t)) = σ_f² m52(‖x − x'‖/ℓ) · (1 if s = t, else ρ), the intrinsic
// coregionalization model with one correlation ρ between any two tasks (Bonilla, Chai & Williams,
// "Multi-task Gaussian process prediction", NIPS 2007). A configuration too large for the GPU
// fails on every dataset (ρ near 1); a task whose own trials disagree with the others' pulls ρ
// down. ℓ, σ_f² and ρ are chosen on a grid by the approximate evidence: a fit is then a function of
// its data alone (no warm start from an earlier fit, so a resumed run fits what the run did), and
// the grid's few Newton solves are cheap at the kMaxPoints a fit takes.
//
// Written here: Eigen has no classifier, and the Laplace approximation is a page of algebra.

#include <Eigen/Core>
#include <memory>
#include <string>
#include <vector>

namespace lbo::surrogate {

/// Trials as the classifier sees them: encoded points in [0,1]^d, each with its task and whether
/// it succeeded.
struct FeasibilityData {
  Eigen::MatrixXd x;      ///< n × d
  std::vector<int> task;  ///< n task indices (any integers; equal means the same task)
  std::vector<char> ok;   ///< n: 1 succeeded, 0 failed
};

struct FeasibilityHyper {
  double lengthscale = 0.3;       ///< ℓ of the Matérn-5/2 kernel over the encoded box
  double amplitude = 4.0;         ///< σ_f², the latent's prior variance
  double task_correlation = 1.0;  ///< ρ between two tasks' latents
};

/// What a proposal weighs its acquisition by: log P(a configuration is feasible) for a task, and
/// its gradient. Feasibility (trials that failed), LimitModel (a limit on a reported value) and
/// JointFeasibility (several of them, independent) answer it.
class FeasibilityModel {
 public:
  virtual ~FeasibilityModel() = default;
  /// log P(feasible) at x (length d) for `task`, and its gradient w.r.t. x when asked.
  virtual double log_probability(const Eigen::VectorXd& x, int task, Eigen::VectorXd* gradient = nullptr) const = 0;
  /// log P(feasible) at each row of X for `task`.
  virtual Eigen::VectorXd log_probabilities(const Eigen::MatrixXd& X, int task) const;
  /// The log of what a proposal's acquisition is multiplied by (BatchProposer::weigh_feasibility):
  /// log P unless the model says otherwise (JointFeasibility's weights).
  virtual double log_weight(const Eigen::VectorXd& x, int task, Eigen::VectorXd* gradient = nullptr) const {
    return log_probability(x, task, gradient);
  }
  virtual Eigen::VectorXd log_weights(const Eigen::MatrixXd& X, int task) const { return log_probabilities(X, task); }
  /// For the log, one line.
  virtual std::string describe() const = 0;
};

/// Several feasibility models at once, taken as independent: the log probabilities add, and the
/// weight is Π P_i^{w_i} (a part may count more sharply than its probability: a limit).
class JointFeasibility final : public FeasibilityModel {
 public:
  /// `weights`: one per part, each > 0; empty: all 1.
  explicit JointFeasibility(std::vector<std::shared_ptr<const FeasibilityModel>> parts, std::vector<double> weights = {});
  double log_probability(const Eigen::VectorXd& x, int task, Eigen::VectorXd* gradient = nullptr) const override;
  Eigen::VectorXd log_probabilities(const Eigen::MatrixXd& X, int task) const override;
  double log_weight(const Eigen::VectorXd& x, int task, Eigen::VectorXd* gradient = nullptr) const override;
  Eigen::VectorXd log_weights(const Eigen::MatrixXd& X, int task) const override;
  std::string describe() const override;  ///< the parts', joined by "; "
  const std::vector<std::shared_ptr<const FeasibilityModel>>& parts() const { return parts_; }

 private:
  double weighted(const Eigen::VectorXd& x, int task, Eigen::VectorXd* gradient, bool with_weights) const;
  std::vector<std::shared_ptr<const FeasibilityModel>> parts_;
  std::vector<double> weights_;
};

class Feasibility final : public FeasibilityModel {
 public:
  /// The most trials a fit takes: every failure up to half of them (the newest), then the
  /// successes spread evenly over the others in their order.
  static constexpr int kMaxPoints = 200;

  /// The classifier on `data` with hyperparameters chosen on the grid by the approximate
  /// evidence; null when no trial failed (nothing to learn: every probability would be 1).
  static std::shared_ptr<const Feasibility> fit(const FeasibilityData& data);
  /// The classifier on `data` (at most kMaxPoints trials, at least one) with `hyper`.
  Feasibility(FeasibilityData data, const FeasibilityHyper& hyper);

  /// log P(success) at x (length d) for `task`, and its gradient w.r.t. x when asked.
  double log_probability(const Eigen::VectorXd& x, int task, Eigen::VectorXd* gradient = nullptr) const override;
  /// log P(success) at each row of X for `task`.
  Eigen::VectorXd log_probabilities(const Eigen::MatrixXd& X, int task) const override;
  /// The latent's posterior mean and variance at x for `task` (before the probit average).
  std::pair<double, double> latent(const Eigen::VectorXd& x, int task) const;

  /// The approximate log evidence log q(y | X, θ) (R&W eq. 3.32) the grid maximized.
  double log_evidence() const { return log_evidence_; }
  /// The latent at the trials at the mode (their mean included).
  Eigen::VectorXd mode() const { return f_.array() + mean_; }
  /// The latent's constant mean.
  double mean() const { return mean_; }
  const FeasibilityHyper& hyper() const { return hyper_; }
  int points() const { return static_cast<int>(data_.x.rows()); }
  int failures() const;
  /// "GP classifier on 40 trials (12 failed), ℓ 0.21, σ_f² 4, task correlation 0.9".
  std::string describe() const override;

 private:
  Eigen::MatrixXd kernel(const Eigen::MatrixXd& A, const std::vector<int>& tasks_a) const;  // A × data
  FeasibilityData data_;
  FeasibilityHyper hyper_;
  double mean_ = 0;
  Eigen::VectorXd f_;         // the mode, less the mean
  Eigen::VectorXd gradient_;  // ∇ log p(y | f) at the mode: predictions' weights
  Eigen::VectorXd sqrt_w_;    // W^½ at the mode
  Eigen::MatrixXd chol_;      // L, lower: B = I + W^½ K W^½ = L Lᵀ
  double log_evidence_ = 0;
};

}  // namespace lbo::surrogate
