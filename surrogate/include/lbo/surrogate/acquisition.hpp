#pragma once
// Acquisition functions on a task posterior, maximization convention, standardized units.

#include <Eigen/Core>
#include <cstdint>
#include <memory>
#include <string_view>

#include "lbo/surrogate/posterior.hpp"

namespace lbo::surrogate {

enum class AcquisitionKind : std::uint8_t { ucb, ei, pi };
std::string_view to_string(AcquisitionKind kind);

struct AcquisitionParams {
  double ucb_beta = 4.0;   ///< UCB: μ + √β σ
  double xi = 0.01;        ///< EI/PI: improvement margin over the incumbent
  double incumbent = 0.0;  ///< EI/PI: the best value so far (standardized)
};

/// An acquisition value with its partial derivatives w.r.t. the posterior mean and variance.
struct AcquisitionValue {
  double value = 0, d_mean = 0, d_var = 0;
};

/// UCB = μ + √β σ; EI = σ(uΦ(u) + φ(u)); PI = Φ(u); u = (μ − incumbent − ξ)/σ.
AcquisitionValue acquisition_value(AcquisitionKind kind, double mean, double var, const AcquisitionParams& params);

/// GP-UCB's β_t = scale · 2 log(t^{d/2+2} π² / (3δ)) (Srinivas et al. 2010, Theorem 2, with
/// the scale of Kandasamy et al. 2015, who found the theoretical value far too exploratory).
double ucb_beta_schedule(int t, int dimension, double delta = 0.1, double scale = 0.2);

/// An acquisition over a task posterior with pending points (which the posterior conditions on
/// as hallucinated observations, so their neighbourhood looks explored).
class Acquisition {
 public:
  Acquisition(AcquisitionKind kind, AcquisitionParams params, std::shared_ptr<const TaskPosterior> posterior);

  /// P: p × d points being evaluated right now.
  void set_pending(const Eigen::MatrixXd& P);
  /// X: n × d, rows in [0,1]^d → n values.
  Eigen::VectorXd evaluate(const Eigen::MatrixXd& X) const;
  /// Value at x (length d) and its gradient w.r.t. x.
  double evaluate(const Eigen::VectorXd& x, Eigen::VectorXd& gradient) const;

  AcquisitionKind kind() const { return kind_; }
  const TaskPosterior& posterior() const { return *conditioned_; }

 private:
  AcquisitionKind kind_;
  AcquisitionParams params_;
  std::shared_ptr<const TaskPosterior> base_, conditioned_;
};

}  // namespace lbo::surrogate
