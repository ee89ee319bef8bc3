#include "lbo/surrogate/lbo.hpp"

#include <LBFGS.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>

#include "feature_posterior.hpp"
#include "lbo/surrogate/adam.hpp"
#include "lbo/surrogate/blr.hpp"
#include "lbo/surrogate/ibp.hpp"
#include "lbo/surrogate/linalg.hpp"
#include "precisions.hpp"

namespace lbo::surrogate {

namespace {

// A sampled z below this contributes nothing measurable to the features: the network stays out
// of the linear algebra for that step (LBO supplement: only active networks cost anything).
constexpr double kActiveFloor = 1e-3;
// Weights of networks a task keeps: q(z = 1) at least this (they anchor later tasks); the
// others would weigh little in eq. (9) and only fill checkpoints.
constexpr double kKeptUsage = 0.05;

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// The networks a fitted task uses: q(z = 1) > ½, or at least the most probable one.
std::vector<int> used_networks(const Eigen::VectorXd& log_gamma) {
  std::vector<int> used;
  for (Eigen::Index m = 0; m < log_gamma.size(); ++m) {
    if (log_gamma(m) > 0) used.push_back(static_cast<int>(m));
  }
  if (used.empty()) {
    Eigen::Index best = 0;
    log_gamma.maxCoeff(&best);
    used.push_back(static_cast<int>(best));
  }
  return used;
}

}  // namespace

Lbo::Lbo(int input_dim, LboOptions options)
    : options_(std::move(options)), mlp_(std::make_shared<const Mlp>(input_dim, options_.hidden)) {
  if (options_.networks < 1) throw std::invalid_argument("Lbo: needs at least one network");
  for (int m = 0; m < options_.networks; ++m) {
    std::mt19937_64 rng(0x1b0 + static_cast<std::uint64_t>(m));
    fresh_.push_back(mlp_->initial_parameters(rng));
  }
}

bool Lbo::AnchorSums::empty() const {
  return std::all_of(s0.begin(), s0.end(), [](double v) { return v <= 0; });
}

Lbo::AnchorSums Lbo::sum_anchors(const std::vector<Anchor>& anchors) const {
  AnchorSums sums;
  const auto M = static_cast<std::size_t>(options_.networks);
  sums.s0.assign(M, 0.0);
  sums.s2.assign(M, 0.0);
  sums.s1.assign(M, Eigen::VectorXd::Zero(mlp_->parameter_count()));
  for (const Anchor& a : anchors) {
    const auto m = static_cast<std::size_t>(a.network);
    sums.s0[m] += a.usage;
    sums.s1[m] += a.usage * a.weights;
    sums.s2[m] += a.usage * a.weights.squaredNorm();
  }
  return sums;
}

double Lbo::negative_elbo(const Eigen::VectorXd& packed, const Observations& data, const AnchorSums& anchors,
                          double strength, const Eigen::VectorXd& noise, const Eigen::VectorXd& log_prior_odds,
                          Eigen::VectorXd& gradient) const {
  const int M = options_.networks;
  const int P = mlp_->parameter_count();
  const double tau = options_.temperature;
  const Eigen::Index gamma_at = static_cast<Eigen::Index>(M) * P;
  const Eigen::Index lambda_at = gamma_at + M, beta_at = lambda_at + 1;
  gradient = Eigen::VectorXd::Zero(packed.size());

  // z_m = σ(y_m), y_m = (log γ_m + L_m)/τ (eq. 7, reparameterized).
  Eigen::VectorXd y(M), z(M), dz = Eigen::VectorXd::Zero(M);
  std::vector<int> active;
  for (int m = 0; m < M; ++m) {
    y(m) = (packed(gamma_at + m) + noise(m)) / tau;
    z(m) = sigmoid(y(m));
    if (z(m) > kActiveFloor) active.push_back(m);
  }
  if (active.empty()) {
    Eigen::Index best = 0;
    z.maxCoeff(&best);
    active.push_back(static_cast<int>(best));
  }

  double value = 0;
  // −E_q[log p(Y | X, z, Θ)], one sample: the BLR evidence over the active networks' z_m φ_m.
  const Eigen::Index n = data.X.rows();
  if (n > 0) {
    const Eigen::Index D = mlp_->output_dim();
    const Eigen::MatrixXd U = detail::centred(data.X);
    std::vector<MlpCache> caches(active.size());
    std::vector<Eigen::MatrixXd> phis(active.size());
    Eigen::MatrixXd Phi(n, D * static_cast<Eigen::Index>(active.size()));
    for (std::size_t j = 0; j < active.size(); ++j) {
      const int m = active[j];
      phis[j] = mlp_->forward(packed.segment(static_cast<Eigen::Index>(m) * P, P), U, &caches[j]);
      Phi.middleCols(static_cast<Eigen::Index>(j) * D, D) = z(m) * phis[j];
    }
    const BlrEvidence e = blr_evidence(Phi, data.y, packed(lambda_at), packed(beta_at));
    value -= e.log_likelihood;
    gradient(lambda_at) = -e.d_log_alpha;
    gradient(beta_at) = -e.d_log_beta;
    for (std::size_t j = 0; j < active.size(); ++j) {
      const int m = active[j];
      const Eigen::MatrixXd d_block = -e.d_phi.middleCols(static_cast<Eigen::Index>(j) * D, D);
      dz(m) += d_block.cwiseProduct(phis[j]).sum();
      gradient.segment(static_cast<Eigen::Index>(m) * P, P) +=
          mlp_->backward(packed.segment(static_cast<Eigen::Index>(m) * P, P), caches[j], z(m) * d_block);
    }
  }

  for (int m = 0; m < M; ++m) {
    const auto W = packed.segment(static_cast<Eigen::Index>(m) * P, P);
    auto dW = gradient.segment(static_cast<Eigen::Index>(m) * P, P);
    // KL(q(z_m) ‖ p(z_m | π_m)), one sample, both Binary Concretes (eq. 8).
    const ibp::KlEstimate kl = ibp::concrete_kl(y(m), packed(gamma_at + m), log_prior_odds(m), tau);
    value += kl.value;
    gradient(gamma_at + m) += kl.d_log_gamma;
    // Graph regularizer (eq. 9): z_m Σ_u p_u ‖W_m − W_u‖².
    if (strength > 0 && !anchors.s0.empty() && anchors.s0[m] > 0) {
      const double omega = anchors.s0[m] * W.squaredNorm() - 2.0 * W.dot(anchors.s1[m]) + anchors.s2[m];
      value += strength * z(m) * omega;
      dz(m) += strength * omega;
      dW += strength * z(m) * 2.0 * (anchors.s0[m] * W - anchors.s1[m]);
    }
    value += 0.5 * options_.weight_decay * W.squaredNorm();
    dW += options_.weight_decay * W;
    gradient(gamma_at + m) += dz(m) * z(m) * (1.0 - z(m)) / tau;
  }
  return value;
}

Eigen::VectorXd Lbo::optimize(Eigen::VectorXd packed, const Observations& data, const AnchorSums& anchors,
                              double strength, int iterations, std::mt19937_64& rng) const {
  const int M = options_.networks;
  const Eigen::Index lambda_at = static_cast<Eigen::Index>(M) * mlp_->parameter_count() + M, beta_at = lambda_at + 1;
  if (data.y.size() < 2) return packed;  // one point says nothing about thousands of weights
  // λ and β move in unconstrained coordinates that map into their bounds.
  Eigen::VectorXd u = packed;
  u(lambda_at) = detail::from_bounded(packed(lambda_at), detail::kLogAlphaLow, detail::kLogAlphaHigh);
  u(beta_at) = detail::from_bounded(packed(beta_at), detail::kLogBetaLow, detail::kLogBetaHigh);
  const auto to_packed = [&](const Eigen::VectorXd& v) {
    Eigen::VectorXd p = v;
    p(lambda_at) = detail::to_bounded(v(lambda_at), detail::kLogAlphaLow, detail::kLogAlphaHigh);
    p(beta_at) = detail::to_bounded(v(beta_at), detail::kLogBetaLow, detail::kLogBetaHigh);
    return p;
  };
  Eigen::VectorXd rates = Eigen::VectorXd::Constant(u.size(), options_.learning_rate);
  rates.segment(static_cast<Eigen::Index>(M) * mlp_->parameter_count(), M).setConstant(options_.gate_learning_rate);
  Adam adam(std::move(rates));
  const double per_observation = strength * static_cast<double>(data.y.size());
  std::uniform_real_distribution<double> uniform(1e-6, 1.0 - 1e-6);
  Eigen::VectorXd noise(M), log_prior_odds(M), gradient;
  for (int it = 0; it < iterations; ++it) {
    // A fresh sample of z (logistic noise) and of the sticks π (eq. 5) every step.
    for (int m = 0; m < M; ++m) {
      const double v = uniform(rng);
      noise(m) = std::log(v) - std::log1p(-v);
    }
    const std::vector<double> pi = ibp::stick_breaking(ibp::sample_sticks(M, options_.ibp_alpha, rng));
    for (int m = 0; m < M; ++m) {
      const double p = std::clamp(pi[static_cast<std::size_t>(m)], 1e-12, 1.0 - 1e-12);
      log_prior_odds(m) = std::log(p) - std::log1p(-p);
    }
    try {
      const double value =
          negative_elbo(to_packed(u), data, anchors, per_observation, noise, log_prior_odds, gradient);
      if (!std::isfinite(value) || !gradient.allFinite()) continue;
    } catch (const NumericalError&) {
      continue;  // a sample the BLR cannot factorize: skip this step
    }
    gradient(lambda_at) *= detail::bounded_derivative(u(lambda_at), detail::kLogAlphaLow, detail::kLogAlphaHigh);
    gradient(beta_at) *= detail::bounded_derivative(u(beta_at), detail::kLogBetaLow, detail::kLogBetaHigh);
    adam.step(u, gradient, 1.0 - (1.0 - options_.final_rate) * it / std::max(1, iterations - 1));
  }
  return to_packed(u);
}

double Lbo::mode_objective(const Eigen::VectorXd& packed, const Observations& data, const std::vector<int>& used,
                           const AnchorSums& anchors, double strength, Eigen::VectorXd& gradient) const {
  const int M = options_.networks;
  const int P = mlp_->parameter_count();
  const Eigen::Index D = mlp_->output_dim();
  const Eigen::Index lambda_at = static_cast<Eigen::Index>(M) * P + M, beta_at = lambda_at + 1;
  gradient = Eigen::VectorXd::Zero(packed.size());
  const Eigen::MatrixXd U = detail::centred(data.X);
  std::vector<MlpCache> caches(used.size());
  Eigen::MatrixXd Phi(data.X.rows(), D * static_cast<Eigen::Index>(used.size()));
  for (std::size_t j = 0; j < used.size(); ++j) {
    Phi.middleCols(static_cast<Eigen::Index>(j) * D, D) =
        mlp_->forward(packed.segment(static_cast<Eigen::Index>(used[j]) * P, P), U, &caches[j]);
  }
  const BlrEvidence e = blr_evidence(Phi, data.y, packed(lambda_at), packed(beta_at));
  double value = -e.log_likelihood;
  gradient(lambda_at) = -e.d_log_alpha;
  gradient(beta_at) = -e.d_log_beta;
  for (std::size_t j = 0; j < used.size(); ++j) {
    const int m = used[j];
    const auto W = packed.segment(static_cast<Eigen::Index>(m) * P, P);
    auto dW = gradient.segment(static_cast<Eigen::Index>(m) * P, P);
    dW = mlp_->backward(W, caches[j], -e.d_phi.middleCols(static_cast<Eigen::Index>(j) * D, D));
    if (strength > 0 && !anchors.s0.empty() && anchors.s0[m] > 0) {
      value += strength * (anchors.s0[m] * W.squaredNorm() - 2.0 * W.dot(anchors.s1[m]) + anchors.s2[m]);
      dW += strength * 2.0 * (anchors.s0[m] * W - anchors.s1[m]);
    }
    value += 0.5 * options_.weight_decay * W.squaredNorm();
    dW += options_.weight_decay * W;
  }
  return value;
}

Eigen::VectorXd Lbo::polish(Eigen::VectorXd packed, const Observations& data, const AnchorSums& anchors,
                            double strength, int iterations) const {
  const int M = options_.networks;
  const int P = mlp_->parameter_count();
  const Eigen::Index gamma_at = static_cast<Eigen::Index>(M) * P, lambda_at = gamma_at + M, beta_at = lambda_at + 1;
  if (iterations < 1 || data.y.size() < 2) return packed;
  const std::vector<int> used = used_networks(packed.segment(gamma_at, M));
  const double absolute = strength * static_cast<double>(data.y.size());
  // L-BFGS sees only the used networks' weights and the two precisions (unconstrained).
  const Eigen::Index k = static_cast<Eigen::Index>(used.size()) * P;
  const auto unpack = [&](const Eigen::VectorXd& u) {
    Eigen::VectorXd p = packed;
    for (std::size_t j = 0; j < used.size(); ++j) {
      p.segment(static_cast<Eigen::Index>(used[j]) * P, P) = u.segment(static_cast<Eigen::Index>(j) * P, P);
    }
    p(lambda_at) = detail::to_bounded(u(k), detail::kLogAlphaLow, detail::kLogAlphaHigh);
    p(beta_at) = detail::to_bounded(u(k + 1), detail::kLogBetaLow, detail::kLogBetaHigh);
    return p;
  };
  Eigen::VectorXd u(k + 2);
  for (std::size_t j = 0; j < used.size(); ++j) {
    u.segment(static_cast<Eigen::Index>(j) * P, P) = packed.segment(static_cast<Eigen::Index>(used[j]) * P, P);
  }
  u(k) = detail::from_bounded(packed(lambda_at), detail::kLogAlphaLow, detail::kLogAlphaHigh);
  u(k + 1) = detail::from_bounded(packed(beta_at), detail::kLogBetaLow, detail::kLogBetaHigh);
  const auto f = [&](const Eigen::VectorXd& v, Eigen::VectorXd& grad) {
    grad.resize(v.size());
    try {
      Eigen::VectorXd full;
      const double value = mode_objective(unpack(v), data, used, anchors, absolute, full);
      for (std::size_t j = 0; j < used.size(); ++j) {
        grad.segment(static_cast<Eigen::Index>(j) * P, P) = full.segment(static_cast<Eigen::Index>(used[j]) * P, P);
      }
      grad(k) = full(lambda_at) * detail::bounded_derivative(v(k), detail::kLogAlphaLow, detail::kLogAlphaHigh);
      grad(k + 1) = full(beta_at) * detail::bounded_derivative(v(k + 1), detail::kLogBetaLow, detail::kLogBetaHigh);
      return value;
    } catch (const NumericalError&) {
      grad.setZero();
      return std::numeric_limits<double>::infinity();
    }
  };
  LBFGSpp::LBFGSParam<double> param;
  param.epsilon = 1e-5;
  param.max_linesearch = 40;
  param.max_iterations = iterations;
  Eigen::VectorXd grad;
  const double start_value = f(u, grad);
  Eigen::VectorXd best = u;
  double value = start_value;
  try {
    LBFGSpp::LBFGSSolver<double> solver(param);
    solver.minimize(f, u, value);
  } catch (const std::exception&) {
    value = f(u, grad);  // a failed line search stops at the last accepted iterate
  }
  if (!std::isfinite(value) || !u.allFinite() || !(value <= start_value)) return packed;
  return unpack(u);
}

Eigen::VectorXd Lbo::fit_task(const Eigen::VectorXd& start, const Observations& data, const AnchorSums& anchors,
                              double strength, int iterations, int polish_iterations, std::mt19937_64& rng) const {
  return polish(optimize(start, data, anchors, strength, iterations, rng), data, anchors, strength, polish_iterations);
}

std::shared_ptr<const TaskPosterior> Lbo::build_posterior(const Eigen::VectorXd& packed, const Observations& data,
                                                          Standardization s) const {
  const int M = options_.networks;
  const int P = mlp_->parameter_count();
  const Eigen::Index gamma_at = static_cast<Eigen::Index>(M) * P;
  std::vector<std::shared_ptr<const Eigen::VectorXd>> weights;
  for (int m : used_networks(packed.segment(gamma_at, M))) {
    weights.push_back(std::make_shared<const Eigen::VectorXd>(packed.segment(static_cast<Eigen::Index>(m) * P, P)));
  }
  const Eigen::VectorXd z = (data.y.array() - s.offset) / s.scale;
  BayesianLinearRegression blr(detail::features(*mlp_, weights, data.X), z, std::exp(packed(gamma_at + M)),
                               std::exp(packed(gamma_at + M + 1)));
  return std::make_shared<detail::FeaturePosterior>(mlp_, std::move(weights), std::move(blr), s);
}

Eigen::VectorXd Lbo::initial_parameters(int task) const {
  const int M = options_.networks;
  const int P = mlp_->parameter_count();
  Eigen::VectorXd packed(parameter_count());
  for (int m = 0; m < M; ++m) {
    // Network m starts where its latest earlier user left it (a user first, any keeper next).
    const Eigen::VectorXd* start = &fresh_[static_cast<std::size_t>(m)];
    bool from_user = false;
    for (int u = std::min(task, static_cast<int>(tasks_.size())) - 1; u >= 0 && !from_user; --u) {
      const TaskModel& earlier = tasks_[static_cast<std::size_t>(u)];
      const auto& w = earlier.weights.size() > static_cast<std::size_t>(m) ? earlier.weights[m] : Eigen::VectorXd();
      if (w.size() == 0) continue;
      if (earlier.log_gamma(m) > 0) {
        start = &w;
        from_user = true;
      } else if (start == &fresh_[static_cast<std::size_t>(m)]) {
        start = &w;
      }
    }
    packed.segment(static_cast<Eigen::Index>(m) * P, P) = *start;
    // q starts at the earlier tasks' mean usage where that exceeds the prior's E[π_m]: the
    // networks that served earlier tasks are tried first, the others stay as likely as the
    // prior makes them, ready for a task unlike the earlier ones.
    double q = 0;
    int earlier = 0;
    for (int u = 0; u < std::min(task, static_cast<int>(tasks_.size())); ++u) {
      if (tasks_[static_cast<std::size_t>(u)].fitted_size < 1) continue;
      q += sigmoid(tasks_[static_cast<std::size_t>(u)].log_gamma(m));
      ++earlier;
    }
    const double prior = ibp::expected_stick(m + 1, options_.ibp_alpha);
    q = earlier > 0 ? std::clamp(std::max(q / earlier, prior), 0.02, 0.98) : prior;
    packed(static_cast<Eigen::Index>(M) * P + m) = std::log(q) - std::log1p(-q);
  }
  packed(static_cast<Eigen::Index>(M) * P + M) = detail::kLogAlphaStart;
  packed(static_cast<Eigen::Index>(M) * P + M + 1) = detail::kLogBetaStart;
  return packed;
}

Eigen::VectorXd Lbo::pack(int task) const {
  Eigen::VectorXd packed = initial_parameters(task);
  const TaskModel& model = tasks_.at(static_cast<std::size_t>(task));
  const int M = options_.networks;
  const int P = mlp_->parameter_count();
  for (int m = 0; m < M; ++m) {
    if (model.weights[static_cast<std::size_t>(m)].size() == P) {
      packed.segment(static_cast<Eigen::Index>(m) * P, P) = model.weights[static_cast<std::size_t>(m)];
    }
  }
  packed.segment(static_cast<Eigen::Index>(M) * P, M) = model.log_gamma;
  packed(static_cast<Eigen::Index>(M) * P + M) = model.log_lambda;
  packed(static_cast<Eigen::Index>(M) * P + M + 1) = model.log_beta;
  return packed;
}

void Lbo::store(int task, const Eigen::VectorXd& packed) {
  const int M = options_.networks;
  const int P = mlp_->parameter_count();
  TaskModel& model = tasks_.at(static_cast<std::size_t>(task));
  model.log_gamma = packed.segment(static_cast<Eigen::Index>(M) * P, M);
  model.log_lambda = packed(static_cast<Eigen::Index>(M) * P + M);
  model.log_beta = packed(static_cast<Eigen::Index>(M) * P + M + 1);
  model.weights.assign(static_cast<std::size_t>(M), Eigen::VectorXd());
  for (int m = 0; m < M; ++m) {
    if (sigmoid(model.log_gamma(m)) >= kKeptUsage) {
      model.weights[static_cast<std::size_t>(m)] = packed.segment(static_cast<Eigen::Index>(m) * P, P);
    }
  }
}

Lbo::AnchorSums Lbo::anchors_before(int task) const {
  std::vector<Anchor> anchors;
  for (int u = 0; u < task && u < static_cast<int>(tasks_.size()); ++u) {
    const TaskModel& earlier = tasks_[static_cast<std::size_t>(u)];
    if (earlier.fitted_size < 1) continue;
    for (int m = 0; m < options_.networks; ++m) {
      const auto& w = earlier.weights[static_cast<std::size_t>(m)];
      if (w.size() == 0) continue;
      anchors.push_back({m, sigmoid(earlier.log_gamma(m)), w});
    }
  }
  return sum_anchors(anchors);
}

double Lbo::choose_strength(const Eigen::VectorXd& start, const Observations& data, const AnchorSums& anchors,
                            std::uint64_t seed) const {
  const int K = options_.cv_folds;
  const Eigen::Index n = data.y.size();
  double best_score = -std::numeric_limits<double>::infinity();
  double best = options_.regularizer_grid.front();
  for (double strength : options_.regularizer_grid) {
    double score = 0;
    for (int k = 0; k < K; ++k) {
      std::vector<Eigen::Index> train, test;
      for (Eigen::Index i = 0; i < n; ++i) (i % K == k ? test : train).push_back(i);
      const Observations fit_on{data.X(train, Eigen::all), data.y(train)};
      std::mt19937_64 rng(seed + static_cast<std::uint64_t>(k));  // the same samples for every strength
      const Eigen::VectorXd packed =
          fit_task(start, fit_on, anchors, strength, options_.cv_iterations, options_.cv_polish_iterations, rng);
      try {
        const auto post = build_posterior(packed, fit_on, Standardization{});
        const Posterior p = post->predict(data.X(test, Eigen::all));
        const double noise = std::exp(-packed(packed.size() - 1));
        for (std::size_t i = 0; i < test.size(); ++i) {
          const double var = p.var(static_cast<Eigen::Index>(i)) + noise;
          const double r = data.y(test[i]) - p.mean(static_cast<Eigen::Index>(i));
          score += -0.5 * (std::log(2 * std::numbers::pi * var) + r * r / var);
        }
      } catch (const NumericalError&) {
        score = -std::numeric_limits<double>::infinity();
      }
    }
    if (score > best_score) best_score = score, best = strength;
  }
  return best;
}

void Lbo::fit(const TaskData& data, std::uint64_t seed) {
  const int M = options_.networks;
  for (std::size_t t = 0; t < data.tasks.size(); ++t) {
    if (!data.tasks[t].y.allFinite() || !data.tasks[t].X.allFinite()) {
      throw NumericalError("lbo: task " + std::to_string(t) + " has a non-finite observation");
    }
  }
  if (tasks_.size() < data.tasks.size()) {
    TaskModel blank;
    blank.weights.assign(static_cast<std::size_t>(M), Eigen::VectorXd());
    blank.log_gamma = Eigen::VectorXd::Zero(M);
    tasks_.resize(data.tasks.size(), blank);
  }
  for (int t = 0; t < static_cast<int>(data.tasks.size()); ++t) {
    const Observations& raw = data.tasks[static_cast<std::size_t>(t)];
    TaskModel& model = tasks_[static_cast<std::size_t>(t)];
    const Eigen::Index n = raw.y.size();
    if (n == 0) {
      model.posterior.reset();
      continue;
    }
    if (n == model.fitted_size && model.posterior) continue;  // unchanged since its last fit
    const Standardization s = Standardization::of(raw.y);
    const Observations z{raw.X, ((raw.y.array() - s.offset) / s.scale).matrix()};
    const std::uint64_t task_seed = seed + 7919 * static_cast<std::uint64_t>(t);
    const bool warm = model.fitted_size > 0;
    const Eigen::VectorXd start = warm ? pack(t) : initial_parameters(t);
    const AnchorSums anchors = anchors_before(t);
    if (anchors.empty()) {
      model.strength = 0;
    } else if (n >= 2 * options_.cv_folds && (model.strength_size == 0 || n >= 2 * model.strength_size)) {
      model.strength = choose_strength(start, z, anchors, task_seed ^ 0xc5);
      model.strength_size = n;
    } else if (model.strength_size == 0) {
      // Too few points to cross-validate yet: trust the earlier tasks as far as the grid goes.
      model.strength = *std::max_element(options_.regularizer_grid.begin(), options_.regularizer_grid.end());
    }
    std::mt19937_64 rng(task_seed);
    const Eigen::VectorXd packed =
        fit_task(start, z, anchors, model.strength, warm ? options_.warm_iterations : options_.iterations,
                 warm ? options_.warm_polish_iterations : options_.polish_iterations, rng);
    store(t, packed);
    model.posterior = build_posterior(pack(t), raw, s);
    model.fitted_size = n;
  }
}

std::shared_ptr<const TaskPosterior> Lbo::posterior(int task) const {
  if (task < 0 || task >= static_cast<int>(tasks_.size())) return nullptr;
  return tasks_[static_cast<std::size_t>(task)].posterior;
}

std::vector<double> Lbo::usage(int task) const {
  std::vector<double> q;
  if (task < 0 || task >= static_cast<int>(tasks_.size()) || tasks_[static_cast<std::size_t>(task)].fitted_size < 1) {
    return q;
  }
  for (Eigen::Index m = 0; m < options_.networks; ++m) q.push_back(sigmoid(tasks_[static_cast<std::size_t>(task)].log_gamma(m)));
  return q;
}

double Lbo::regularizer_strength(int task) const {
  if (task < 0 || task >= static_cast<int>(tasks_.size())) return 0;
  return tasks_[static_cast<std::size_t>(task)].strength;
}

SurrogateState Lbo::state() const {
  LboState lbo;
  for (const TaskModel& model : tasks_) {
    LboTaskState t;
    for (const Eigen::VectorXd& w : model.weights) t.weights.emplace_back(w.data(), w.data() + w.size());
    t.log_gamma.assign(model.log_gamma.data(), model.log_gamma.data() + model.log_gamma.size());
    t.log_lambda = model.log_lambda;
    t.log_beta = model.log_beta;
    t.fitted_size = model.fitted_size;
    t.strength = model.strength;
    t.strength_size = model.strength_size;
    lbo.tasks.push_back(std::move(t));
  }
  SurrogateState state;
  if (!tasks_.empty()) state.lbo = std::move(lbo);
  return state;
}

void Lbo::restore(const SurrogateState& state, const TaskData& data) {
  if (!state.lbo) throw NumericalError("lbo: the saved state is not an LBO's");
  const int M = options_.networks;
  const int P = mlp_->parameter_count();
  std::vector<TaskModel> tasks;
  for (const LboTaskState& saved : state.lbo->tasks) {
    if (static_cast<int>(saved.log_gamma.size()) != M || static_cast<int>(saved.weights.size()) != M) {
      throw NumericalError("lbo: the saved state does not fit this model's networks");
    }
    TaskModel model;
    for (const auto& w : saved.weights) {
      if (!w.empty() && static_cast<int>(w.size()) != P) throw NumericalError("lbo: saved weights do not fit the network");
      model.weights.push_back(Eigen::Map<const Eigen::VectorXd>(w.data(), static_cast<Eigen::Index>(w.size())));
    }
    model.log_gamma = Eigen::Map<const Eigen::VectorXd>(saved.log_gamma.data(), M);
    model.log_lambda = saved.log_lambda;
    model.log_beta = saved.log_beta;
    model.fitted_size = saved.fitted_size;
    model.strength = saved.strength;
    model.strength_size = saved.strength_size;
    tasks.push_back(std::move(model));
  }
  tasks_ = std::move(tasks);
  for (std::size_t t = 0; t < tasks_.size() && t < data.tasks.size(); ++t) {
    if (tasks_[t].fitted_size < 1 || data.tasks[t].y.size() == 0) continue;
    tasks_[t].posterior = build_posterior(pack(static_cast<int>(t)), data.tasks[t], Standardization::of(data.tasks[t].y));
  }
}

}  // namespace lbo::surrogate
