#include "lbo/surrogate/ablr.hpp"

#include <LBFGS.h>

#include <cmath>
#include <string>
#include <limits>
#include <random>

#include "lbo/surrogate/blr.hpp"
#include "lbo/surrogate/linalg.hpp"
#include "feature_posterior.hpp"
#include "precisions.hpp"

namespace lbo::surrogate {

namespace {

using detail::kLogAlphaHigh;
using detail::kLogAlphaLow;
using detail::kLogAlphaStart;
using detail::kLogBetaHigh;
using detail::kLogBetaLow;
using detail::kLogBetaStart;

// L-BFGS works on unconstrained variables u: the weights as they are and each log precision as
// bounded by detail::to_bounded. (L-BFGS-B would do, but sorts all breakpoints of thousands of
// weights every iteration, which dominated the fit time.)
struct Unconstrained {
  static void bounds(Eigen::Index i, int p, double& low, double& high) {
    const bool alpha = (i - p) % 2 == 0;
    low = alpha ? kLogAlphaLow : kLogBetaLow;
    high = alpha ? kLogAlphaHigh : kLogBetaHigh;
  }
  static Eigen::VectorXd from_packed(const Eigen::VectorXd& packed, int p) {
    Eigen::VectorXd u = packed;
    for (Eigen::Index i = p; i < packed.size(); ++i) {
      double low = 0, high = 0;
      bounds(i, p, low, high);
      u(i) = detail::from_bounded(packed(i), low, high);
    }
    return u;
  }
  static Eigen::VectorXd to_packed(const Eigen::VectorXd& u, int p) {
    Eigen::VectorXd packed = u;
    for (Eigen::Index i = p; i < u.size(); ++i) {
      double low = 0, high = 0;
      bounds(i, p, low, high);
      packed(i) = detail::to_bounded(u(i), low, high);
    }
    return packed;
  }
  // ∂/∂u from ∂/∂packed, in place.
  static void chain(const Eigen::VectorXd& u, int p, Eigen::VectorXd& grad) {
    for (Eigen::Index i = p; i < u.size(); ++i) {
      double low = 0, high = 0;
      bounds(i, p, low, high);
      grad(i) *= detail::bounded_derivative(u(i), low, high);
    }
  }
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
  // The network's passes run over fixed chunks of rows, in parallel on large data; gradients are
  // summed in chunk order, so the result does not depend on the number of threads.
  constexpr Eigen::Index kChunk = 1024;
  const Eigen::Index chunks = std::max<Eigen::Index>(1, (total + kChunk - 1) / kChunk);
  const auto rows_of = [&](Eigen::Index c) { return std::min(kChunk, total - c * kChunk); };
  std::vector<MlpCache> caches(static_cast<std::size_t>(chunks));
  Eigen::MatrixXd phi(total, mlp_->output_dim());
#pragma omp parallel for schedule(static) if (chunks > 1)
  for (Eigen::Index c = 0; c < chunks; ++c) {
    if (rows_of(c) > 0) {
      phi.middleRows(c * kChunk, rows_of(c)) =
          mlp_->forward(weights, detail::centred(X.middleRows(c * kChunk, rows_of(c))), &caches[c]);
    }
  }

  gradient = Eigen::VectorXd::Zero(packed.size());
  Eigen::MatrixXd d_phi = Eigen::MatrixXd::Zero(phi.rows(), phi.cols());
  std::vector<double> nll(static_cast<std::size_t>(tasks), 0.0);
  std::vector<char> failed(static_cast<std::size_t>(tasks), 0);
  // Tasks are independent given the features; each writes only its own rows and slots. Threads
  // only pay off on large data: for small fits their wake-ups (and spinning) cost more.
#pragma omp parallel for schedule(dynamic) if (total > 4096)
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
  std::vector<Eigen::VectorXd> chunk_gradients(static_cast<std::size_t>(chunks));
#pragma omp parallel for schedule(static) if (chunks > 1)
  for (Eigen::Index c = 0; c < chunks; ++c) {
    if (rows_of(c) > 0) chunk_gradients[c] = mlp_->backward(weights, caches[c], d_phi.middleRows(c * kChunk, rows_of(c)));
  }
  Eigen::VectorXd network_gradient = options_.weight_decay * weights;
  for (const Eigen::VectorXd& g : chunk_gradients) {
    if (g.size() > 0) network_gradient += g;
  }
  gradient.head(p) = network_gradient;
  return value;
}

std::shared_ptr<const TaskPosterior> Ablr::build_posterior(const Observations& data, Standardization s,
                                                           std::shared_ptr<const Eigen::VectorXd> weights,
                                                           const Eigen::VectorXd& packed, int task) const {
  const int p = mlp_->parameter_count();
  const Eigen::VectorXd z = s.apply(data.y);
  detail::FeatureMaps maps{mlp_, {std::move(weights)}, {}, 0.0};
  BayesianLinearRegression blr(maps(data.X), z, std::exp(packed(p + 2 * task)), std::exp(packed(p + 2 * task + 1)));
  return std::make_shared<detail::FeaturePosterior>(std::move(maps), std::move(blr), s);
}

void Ablr::fit(const TaskData& data, std::uint64_t seed) {
  const auto tasks = static_cast<int>(data.tasks.size());
  TaskData standardized = data;
  Eigen::Index observations = 0;
  for (int t = 0; t < tasks; ++t) {
    if (!data.tasks[t].y.allFinite() || !data.tasks[t].X.allFinite()) {
      throw NumericalError("ablr: task " + std::to_string(t) + " has a non-finite observation");
    }
    standardized.tasks[t].y = Standardization::of(data.tasks[t].y).apply(data.tasks[t].y);
    observations += data.tasks[t].y.size();
  }
  std::mt19937_64 rng(seed);
  Eigen::VectorXd best = best_descent(starts(tasks, observations, rng), standardized, observations, tasks, rng);
  if (best.size() == 0) {
    throw NumericalError("ablr: no usable fit after " + std::to_string(options_.restarts + 1) + " attempts");
  }
  // Publish only a fit whose every posterior can be built.
  posteriors_ = build_posteriors(data, best);
  parameters_ = std::move(best);
  tasks_ = tasks;
}

// Starting points: the previous fit (warm, with defaults for tasks that arrived since), and a
// fresh initialization when there is no previous fit, when the data have doubled since the last
// fresh one, or when the previous weights collapsed to zero: a saddle of tanh networks that no
// gradient leaves, which a fit on one or two points can fall into.
std::vector<Ablr::Start> Ablr::starts(int tasks, Eigen::Index observations, std::mt19937_64& rng) {
  const int p = mlp_->parameter_count();
  std::vector<Start> starts;
  const bool warm = parameters_.size() >= p;
  if (warm) {
    Eigen::VectorXd x = cold_start(tasks, rng);
    x.head(p) = parameters_.head(p);
    const int known = std::min(tasks_, tasks);
    x.segment(p, 2 * known) = parameters_.segment(p, 2 * known);
    starts.push_back({x, options_.warm_iterations});
  }
  const bool collapsed = warm && parameters_.head(p).norm() < 1e-3 * std::sqrt(static_cast<double>(p));
  if (!warm || collapsed || observations >= 2 * cold_fit_size_) {
    starts.push_back({cold_start(tasks, rng), options_.max_iterations});
    cold_fit_size_ = std::max<Eigen::Index>(observations, 1);
  }
  return starts;
}

Eigen::VectorXd Ablr::best_descent(std::vector<Start> starts, const TaskData& standardized, Eigen::Index observations,
                                   int tasks, std::mt19937_64& rng) const {
  const int p = mlp_->parameter_count();
  const auto f = [&](const Eigen::VectorXd& u, Eigen::VectorXd& grad) {
    try {
      const double value = objective(Unconstrained::to_packed(u, p), standardized, grad);
      Unconstrained::chain(u, p, grad);
      return value;
    } catch (const NumericalError&) {
      grad = Eigen::VectorXd::Zero(u.size());
      return std::numeric_limits<double>::infinity();
    }
  };
  LBFGSpp::LBFGSParam<double> param;
  param.epsilon = 1e-5;
  param.max_linesearch = 40;
  double best_value = std::numeric_limits<double>::infinity();
  Eigen::VectorXd best;
  for (int restart = 0; restart <= options_.restarts && !std::isfinite(best_value); ++restart) {
    if (restart > 0) starts = {{cold_start(tasks, rng), options_.max_iterations}};
    for (Start& start : starts) {
      Eigen::VectorXd u = Unconstrained::from_packed(start.x, p);
      double value = std::numeric_limits<double>::infinity();
      if (observations < 2) {
        // One point says nothing about thousands of weights: keep the start as it is.
        Eigen::VectorXd grad;
        value = f(u, grad);
      } else {
        param.max_iterations = start.iterations;
        try {
          LBFGSpp::LBFGSSolver<double> solver(param);
          solver.minimize(f, u, value);
        } catch (const std::exception&) {
          // A failed line search stops at the last accepted iterate; judge it like any other.
          Eigen::VectorXd grad;
          value = f(u, grad);
        }
      }
      if (std::isfinite(value) && u.allFinite() && value < best_value) {
        best_value = value;
        best = Unconstrained::to_packed(u, p);
      }
    }
  }
  return std::isfinite(best_value) ? best : Eigen::VectorXd();
}

std::vector<std::shared_ptr<const TaskPosterior>> Ablr::build_posteriors(const TaskData& data,
                                                                         const Eigen::VectorXd& packed) const {
  const int p = mlp_->parameter_count();
  auto weights = std::make_shared<const Eigen::VectorXd>(packed.head(p));
  std::vector<std::shared_ptr<const TaskPosterior>> posteriors(data.tasks.size());
  for (std::size_t t = 0; t < data.tasks.size(); ++t) {
    if (data.tasks[t].y.size() == 0) continue;
    posteriors[t] = build_posterior(data.tasks[t], Standardization::of(data.tasks[t].y), weights, packed, static_cast<int>(t));
  }
  return posteriors;
}

SurrogateState Ablr::state() const {
  AblrState ablr;
  ablr.parameters.assign(parameters_.data(), parameters_.data() + parameters_.size());
  ablr.tasks = tasks_;
  ablr.cold_fit_size = cold_fit_size_;
  SurrogateState state;
  if (parameters_.size() > 0) state.ablr = std::move(ablr);
  return state;
}

void Ablr::restore(const SurrogateState& state, const TaskData& data) {
  if (!state.ablr) throw NumericalError("ablr: the saved state is not an ABLR's");
  const AblrState& saved = *state.ablr;
  const int p = mlp_->parameter_count();
  if (static_cast<int>(saved.parameters.size()) != p + 2 * saved.tasks) {
    throw NumericalError("ablr: the saved parameters do not fit this network");
  }
  // Tasks that arrived after the checkpoint start from the default precisions.
  const int tasks = std::max(saved.tasks, static_cast<int>(data.tasks.size()));
  std::mt19937_64 unused(0);
  Eigen::VectorXd packed = cold_start(tasks, unused);
  packed.head(p + 2 * saved.tasks) = Eigen::Map<const Eigen::VectorXd>(saved.parameters.data(), p + 2 * saved.tasks);
  posteriors_ = build_posteriors(data, packed);
  parameters_ = packed.head(p + 2 * saved.tasks);
  tasks_ = saved.tasks;
  cold_fit_size_ = saved.cold_fit_size;
}

std::shared_ptr<const TaskPosterior> Ablr::posterior(int task) const { return task_posterior(posteriors_, task); }

}  // namespace lbo::surrogate
