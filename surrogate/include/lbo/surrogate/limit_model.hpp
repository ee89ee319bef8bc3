#pragma once
// LimitModel: the probability that a configuration keeps a value it reports within a limit
// (memory, latency, model size: [[constraints]]), from the values trials reported.
//
// A Gaussian process on the value (GaussianProcess: Matérn-5/2 with ARD lengthscales, its
// hyperparameters by the marginal likelihood), and P(low ≤ c(x) ≤ high) = Φ(b) − Φ(a) with
// a = (low − μ(x))/σ(x), b = (high − μ(x))/σ(x) under the posterior of the latent value: the
// constraint model of Gardner, Kusner, Xu, Weinberger & Cunningham, "Bayesian optimization with
// inequality constraints", ICML 2014, whose weighted EI multiplies EI by this probability. Unlike
// a classifier of feasible/infeasible, the values say how far each trial was from the limit, so
// the model knows which way feasibility lies before any trial was feasible.
//
// Across tasks the values are pooled (the task is not an input): what a configuration needs in
// memory or time depends on the configuration far more than on the dataset, and a new task knows
// the limit from its first proposal. Each fit starts from the same defaults and seed (no warm
// start from an earlier fit): a fit is a function of its data (a resumed --sync run fits the same).

#include <Eigen/Core>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "lbo/surrogate/feasibility.hpp"
#include "lbo/surrogate/posterior.hpp"

namespace lbo::surrogate {

/// Reported values: encoded points in [0,1]^d and what each reported.
struct LimitData {
  Eigen::MatrixXd x;      ///< n × d
  Eigen::VectorXd value;  ///< n
};

class LimitModel final : public FeasibilityModel {
 public:
  /// The most trials a fit takes, spread evenly over the data's order.
  static constexpr int kMaxPoints = 200;
  static constexpr double kNone = std::numeric_limits<double>::infinity();

  /// The GP on `data` (at least one value) and the limit low ≤ c ≤ high (−kNone or kNone: no
  /// bound on that side; low < high). `label` names the value in describe(). With `theta` (an
  /// earlier fit's theta()), the GP takes those hyperparameters instead of fitting them.
  static std::shared_ptr<const LimitModel> fit(const LimitData& data, double low, double high, std::string label,
                                               const Eigen::VectorXd* theta = nullptr);
  /// The GP's hyperparameters (GaussianProcess::theta()).
  const Eigen::VectorXd& theta() const { return theta_; }

  /// log P(low ≤ c(x) ≤ high), `task` unused, and its gradient w.r.t. x when asked.
  double log_probability(const Eigen::VectorXd& x, int task, Eigen::VectorXd* gradient = nullptr) const override;
  /// The same at each row of X, from one batched posterior.
  Eigen::VectorXd log_probabilities(const Eigen::MatrixXd& X, int task) const override;
  /// The value's posterior mean and standard deviation at x, in its own units.
  std::pair<double, double> predict(const Eigen::VectorXd& x) const;
  /// "GP of memory_gb on 40 trials (12 outside the limit)".
  std::string describe() const override;
  int points() const { return points_; }

 private:
  LimitModel(std::shared_ptr<const TaskPosterior> posterior, Eigen::VectorXd theta, double low, double high, std::string label,
             int points, int outside);
  // log P under N(mean, var) (standardized units), the bounds' z-scores a and b, and
  // d log P / da and d log P / db.
  struct Interval {
    double log = 0, a = 0, b = 0, slope_a = 0, slope_b = 0;
  };
  Interval interval(double mean, double var) const;

  std::shared_ptr<const TaskPosterior> posterior_;
  Eigen::VectorXd theta_;
  double low_z_, high_z_;  // the limit in the posterior's standardized units
  std::string label_;
  int points_ = 0, outside_ = 0;
};

/// log Φ(u), accurate far into the lower tail, and d/du log Φ(u) = φ(u)/Φ(u) when asked.
double log_normal_cdf(double u, double* derivative = nullptr);

}  // namespace lbo::surrogate
