#include "lbo/surrogate/ablr.hpp"

#include <LBFGSB.h>

#include <cmath>
#include <limits>
#include <random>

#include "lbo/surrogate/blr.hpp"
#include "lbo/surrogate/linalg.hpp"

namespace lbo::surrogate {

namespace {

// Bounds of the per-task precisions (standardized outputs): the weight prior precision α within
// [1e-3, 1e3]; the noise precision β within [1, 1e4], i.e. noise std between 0.01 and 1. Without
// the upper bound a network that interpolates a few points drives β to infinity.
constexpr double kLogAlphaLow = -6.907755279, kLogAlphaHigh = 6.907755279;
constexpr double kLogBetaLow = 0.0, kLogBetaHigh = 9.210340372;
constexpr double kLogAlphaStart = 0.0, kLogBetaStart = 4.605170186;  // α = 1, β = 100
constexpr double kWeightBound = 50.0;

// The posterior of one task: the shared network's features under a BLR.
class AblrPosterior final : public TaskPosterior {
 public:
  AblrPosterior(std::shared_ptr<const Mlp> mlp, std::shared_ptr<const Eigen::VectorXd> weights,
                BayesianLinearRegression blr, Standardization s)
      : TaskPosterior(s), mlp_(std::move(mlp)), weights_(std::move(weights)), blr_(std::move(blr)) {}

  int dimension() const override { return mlp_->input_dim(); }

  Posterior predict(const Eigen::MatrixXd& X) const override { return blr_.predict(mlp_->forward(*weights_, X)); }

  PointPosterior predict_with_gradient(const Eigen::VectorXd& x) const override {
    const Eigen::VectorXd phi = mlp_->forward(*weights_, x.transpose()).row(0).transpose();
    const Eigen::VectorXd cov_phi = blr_.weight_covariance_times(phi);
    PointPosterior p;
    p.mean = phi.dot(blr_.weight_mean());
    p.var = std::max(phi.dot(cov_phi), 1e-12);
    // ∂(φᵀm)/∂x = J_φᵀ m,  ∂(φᵀΣφ)/∂x = 2 J_φᵀ Σφ: one backward pass for both.
    Eigen::MatrixXd V(phi.size(), 2);
    V << blr_.weight_mean(), 2.0 * cov_phi;
    const Eigen::MatrixXd g = mlp_->input_gradient(*weights_, x, V);
    p.d_mean = g.col(0);
    p.d_var = g.col(1);
    return p;
  }

  std::shared_ptr<const TaskPosterior> condition(const Eigen::MatrixXd& X, const Eigen::VectorXd* y) const override {
    BayesianLinearRegression blr = blr_;
    blr.observe(mlp_->forward(*weights_, X), y);
    return std::make_shared<AblrPosterior>(mlp_, weights_, std::move(blr), standardization());
  }

 private:
  std::shared_ptr<const Mlp> mlp_;
  std::shared_ptr<const Eigen::VectorXd> weights_;
  BayesianLinearRegression blr_;
};

}  // namespace

Ablr::Ablr(int input_dim, AblrOptions options)
    : options_(std::move(options)), mlp_(std::make_shared<const Mlp>(input_dim, options_.hidden)) {}

Eigen::VectorXd Ablr::cold_start(int tasks, std::mt19937_64& rng) const {
  const int p = mlp_->parameter_count();
  Eigen::VectorXd packed(p + 2 * tasks);
  packed.head(p) = mlp_->initial_parameters(rng);
  for (int t = 0; t < tasks; ++t) {
    packed(p + 2 * t) = kLogAlphaStart;
    packed(p + 2 * t + 1) = kLogBetaStart;
  }
  return packed;
}

double Ablr::objective(const Eigen::VectorXd& packed, const TaskData& standardized, Eigen::VectorXd& gradient) const {
  const int p = mlp_->parameter_count();
  const Eigen::VectorXd weights = packed.head(p);
  const auto tasks = static_cast<int>(standardized.tasks.size());
  // One forward pass over every task's points stacked.
  Eigen::Index total = 0;
  std::vector<Eigen::Index> offset(static_cast<std::size_t>(tasks) + 1, 0);
  for (int t = 0; t < tasks; ++t) offset[t + 1] = total += standardized.tasks[t].X.rows();
  Eigen::MatrixXd X(total, mlp_->input_dim());
  for (int t = 0; t < tasks; ++t) {
    if (standardized.tasks[t].X.rows() > 0) X.middleRows(offset[t], standardized.tasks[t].X.rows()) = standardized.tasks[t].X;
  }
  MlpCache cache;
  const Eigen::MatrixXd phi = mlp_->forward(weights, X, &cache);

  gradient = Eigen::VectorXd::Zero(packed.size());
  Eigen::MatrixXd d_phi = Eigen::MatrixXd::Zero(phi.rows(), phi.cols());
  std::vector<double> nll(static_cast<std::size_t>(tasks), 0.0);
  std::vector<char> failed(static_cast<std::size_t>(tasks), 0);
  // Tasks are independent given the features; each writes only its own rows and slots.
#pragma omp parallel for schedule(dynamic)
  for (int t = 0; t < tasks; ++t) {
    const Eigen::Index n = offset[t + 1] - offset[t];
    if (n == 0) continue;
    try {
      const BlrEvidence e = blr_evidence(phi.middleRows(offset[t], n), standardized.tasks[t].y, packed(p + 2 * t),
                                         packed(p + 2 * t + 1));
      nll[t] = -e.log_likelihood;
      d_phi.middleRows(offset[t], n) = -e.d_phi;
      gradient(p + 2 * t) = -e.d_log_alpha;
      gradient(p + 2 * t + 1) = -e.d_log_beta;
    } catch (const std::exception&) {
      failed[t] = 1;
    }
  }
  double value = 0.5 * options_.weight_decay * weights.squaredNorm();
  for (int t = 0; t < tasks; ++t) {
    if (failed[t] != 0) throw NumericalError("ablr: evidence of task " + std::to_string(t) + " failed");
    value += nll[t];
  }
  gradient.head(p) = mlp_->backward(weights, cache, d_phi) + options_.weight_decay * weights;
  return value;
}

std::shared_ptr<const TaskPosterior> Ablr::build_posterior(const Observations& data, Standardization s, int task) const {
  const int p = mlp_->parameter_count();
  const Eigen::VectorXd z = (data.y.array() - s.offset) / s.scale;
  BayesianLinearRegression blr(mlp_->forward(*weights_, data.X), z, std::exp(parameters_(p + 2 * task)),
                               std::exp(parameters_(p + 2 * task + 1)));
  return std::make_shared<AblrPosterior>(mlp_, weights_, std::move(blr), s);
}

void Ablr::fit(const TaskData& data, std::uint64_t seed) {
  const int p = mlp_->parameter_count();
  const auto tasks = static_cast<int>(data.tasks.size());
  TaskData standardized = data;
  std::vector<Standardization> scales(static_cast<std::size_t>(tasks));
  for (int t = 0; t < tasks; ++t) {
    scales[t] = Standardization::of(data.tasks[t].y);
    standardized.tasks[t].y = (data.tasks[t].y.array() - scales[t].offset) / scales[t].scale;
  }

  std::mt19937_64 rng(seed);
  // Warm start: the previous parameters, with defaults for tasks that arrived since.
  const bool warm = parameters_.size() >= p;
  Eigen::VectorXd start = cold_start(tasks, rng);
  if (warm) {
    start.head(p) = parameters_.head(p);
    const int known = std::min(tasks_, tasks);
    start.segment(p, 2 * known) = parameters_.segment(p, 2 * known);
  }

  Eigen::VectorXd lower(start.size()), upper(start.size());
  lower.head(p).setConstant(-kWeightBound);
  upper.head(p).setConstant(kWeightBound);
  for (int t = 0; t < tasks; ++t) {
    lower(p + 2 * t) = kLogAlphaLow, upper(p + 2 * t) = kLogAlphaHigh;
    lower(p + 2 * t + 1) = kLogBetaLow, upper(p + 2 * t + 1) = kLogBetaHigh;
  }

  LBFGSpp::LBFGSBParam<double> param;
  param.epsilon = 1e-5;
  param.max_linesearch = 40;
  for (int attempt = 0; attempt <= options_.restarts; ++attempt) {
    Eigen::VectorXd x = attempt == 0 ? start : cold_start(tasks, rng);
    x = x.cwiseMax(lower).cwiseMin(upper);
    param.max_iterations = attempt == 0 && warm ? options_.warm_iterations : options_.max_iterations;
    auto f = [&](const Eigen::VectorXd& v, Eigen::VectorXd& grad) {
      try {
        return objective(v, standardized, grad);
      } catch (const NumericalError&) {
        grad = Eigen::VectorXd::Zero(v.size());
        return std::numeric_limits<double>::infinity();
      }
    };
    double value = std::numeric_limits<double>::infinity();
    try {
      LBFGSpp::LBFGSBSolver<double> solver(param);
      solver.minimize(f, x, value, lower, upper);
    } catch (const std::exception&) {
      // A failed line search stops at the last accepted iterate; judge it like any other.
      Eigen::VectorXd grad;
      value = f(x, grad);
    }
    if (!std::isfinite(value) || !x.allFinite()) continue;
    // Publish only a fit whose every posterior can be built.
    const Eigen::VectorXd previous = parameters_;
    const int previous_tasks = tasks_;
    const auto previous_weights = weights_;
    parameters_ = x;
    tasks_ = tasks;
    weights_ = std::make_shared<const Eigen::VectorXd>(x.head(p));
    try {
      std::vector<std::shared_ptr<const TaskPosterior>> posteriors(static_cast<std::size_t>(tasks));
      for (int t = 0; t < tasks; ++t) {
        if (data.tasks[t].y.size() > 0) posteriors[t] = build_posterior(data.tasks[t], scales[t], t);
      }
      posteriors_ = std::move(posteriors);
      return;
    } catch (const NumericalError&) {
      parameters_ = previous;
      tasks_ = previous_tasks;
      weights_ = previous_weights;
    }
  }
  throw NumericalError("ablr: no usable fit after " + std::to_string(options_.restarts + 1) + " attempts");
}

std::shared_ptr<const TaskPosterior> Ablr::posterior(int task) const {
  if (task < 0 || task >= static_cast<int>(posteriors_.size())) return nullptr;
  return posteriors_[task];
}

}  // namespace lbo::surrogate
