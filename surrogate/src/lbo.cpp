#include "lbo/surrogate/lbo.hpp"

#include <LBFGS.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <exception>
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

// The scale e^ρ of the latent columns stays within [e^-3, e^6].
constexpr double kLogRhoLow = -3.0, kLogRhoHigh = 6.0;

// Where each parameter sits in the packed vector [W_1 … W_M, log γ_1 … log γ_M, log λ, log β, ρ].
struct Layout {
  Eigen::Index P, M;
  Eigen::Index weights(int m) const { return static_cast<Eigen::Index>(m) * P; }
  Eigen::Index gamma(int m = 0) const { return M * P + m; }
  Eigen::Index lambda() const { return M * P + M; }
  Eigen::Index beta() const { return lambda() + 1; }
  Eigen::Index rho() const { return lambda() + 2; }
  Eigen::Index size() const { return rho() + 1; }
};

Layout layout_of(const Lbo& lbo) { return {lbo.network().parameter_count(), lbo.options().networks}; }

// The precisions and the latent scale move in unconstrained coordinates mapped into their boxes.
struct Bounded {
  Eigen::Index at;
  double low, high;
};
std::array<Bounded, 3> bounded(const Layout& l) {
  return {{{l.lambda(), detail::kLogAlphaLow, detail::kLogAlphaHigh},
           {l.beta(), detail::kLogBetaLow, detail::kLogBetaHigh},
           {l.rho(), kLogRhoLow, kLogRhoHigh}}};
}

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

double Lbo::data_term(const Eigen::VectorXd& packed, const Observations& data, const std::vector<int>& active,
                      const Eigen::VectorXd& z, const Earlier& earlier, Eigen::VectorXd& gradient,
                      Eigen::VectorXd* dz) const {
  const Eigen::Index n = data.X.rows();
  if (n == 0) return 0;
  const int P = mlp_->parameter_count();
  const Eigen::Index D = mlp_->output_dim();
  const Layout at = layout_of(*this);
  const double scale = std::exp(packed(at.rho()));  // of the latent columns
  const auto head_of = [&](int m) -> const Eigen::VectorXd* {
    const auto& heads = earlier.heads;
    return static_cast<std::size_t>(m) < heads.size() && heads[static_cast<std::size_t>(m)].size() == D
               ? &heads[static_cast<std::size_t>(m)]
               : nullptr;
  };
  const auto k = static_cast<Eigen::Index>(active.size());
  bool latent = false;
  for (int m : active) latent = latent || head_of(m) != nullptr;

  // Columns: z_m φ_m for each active network, then Σ_m z_m e^ρ φ_m h̄_m over those with a
  // latent function, then the bias e^ρ: the structured columns share the scale e^ρ, so with
  // few points empirical Bayes can let them explain the task and shrink the generic features.
  const Eigen::MatrixXd U = detail::centred(data.X);
  std::vector<MlpCache> caches(active.size());
  std::vector<Eigen::MatrixXd> phis(active.size());
  const Eigen::Index bias = options_.bias_column ? 1 : 0;
  const Eigen::Index latent_col = D * k;
  Eigen::MatrixXd Phi(n, D * k + (latent ? 1 : 0) + bias);
  if (latent) Phi.col(latent_col).setZero();
  if (bias != 0) Phi.col(Phi.cols() - 1).setConstant(scale);
  for (std::size_t j = 0; j < active.size(); ++j) {
    const int m = active[j];
    phis[j] = mlp_->forward(packed.segment(at.weights(m), P), U, &caches[j]);
    Phi.middleCols(static_cast<Eigen::Index>(j) * D, D) = z(m) * phis[j];
    if (const Eigen::VectorXd* h = head_of(m)) Phi.col(latent_col) += (z(m) * scale) * (phis[j] * *h);
  }
  const BlrEvidence e = blr_evidence(Phi, data.y, packed(at.lambda()), packed(at.beta()));
  gradient(at.lambda()) -= e.d_log_alpha;
  gradient(at.beta()) -= e.d_log_beta;
  const Eigen::VectorXd d_latent = latent ? Eigen::VectorXd(-e.d_phi.col(latent_col)) : Eigen::VectorXd();
  if (bias != 0) gradient(at.rho()) -= scale * e.d_phi.col(Phi.cols() - 1).sum();
  for (std::size_t j = 0; j < active.size(); ++j) {
    const int m = active[j];
    const Eigen::MatrixXd d_block = -e.d_phi.middleCols(static_cast<Eigen::Index>(j) * D, D);
    double d_z = d_block.cwiseProduct(phis[j]).sum();
    Eigen::MatrixXd d_phi = z(m) * d_block;
    if (const Eigen::VectorXd* h = head_of(m)) {
      const double g_dot = d_latent.dot(phis[j] * *h);
      d_z += scale * g_dot;
      gradient(at.rho()) += z(m) * scale * g_dot;
      d_phi.noalias() += (z(m) * scale) * d_latent * h->transpose();
    }
    if (dz != nullptr) (*dz)(m) += d_z;
    gradient.segment(at.weights(m), P) += mlp_->backward(packed.segment(at.weights(m), P), caches[j], d_phi);
  }
  return -e.log_likelihood;
}

double Lbo::negative_elbo(const Eigen::VectorXd& packed, const Observations& data, const Earlier& earlier,
                          double strength, const Eigen::VectorXd& noise, const Eigen::VectorXd& log_prior_odds,
                          Eigen::VectorXd& gradient) const {
  const int M = options_.networks;
  const int P = mlp_->parameter_count();
  const double tau = options_.temperature;
  const Eigen::Index gamma_at = layout_of(*this).gamma();
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

  // −E_q[log p(Y | X, z, Θ)], one sample: the BLR evidence over the active networks' z_m φ_m.
  double value = data_term(packed, data, active, z, earlier, gradient, &dz);
  const AnchorSums& anchors = earlier.anchors;
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

Eigen::VectorXd Lbo::optimize(Eigen::VectorXd packed, const Observations& data, const Earlier& earlier,
                              double strength, int iterations, std::mt19937_64& rng) const {
  const int M = options_.networks;
  const Layout at = layout_of(*this);
  if (data.y.size() < 2) return packed;  // one point says nothing about thousands of weights
  Eigen::VectorXd u = packed;
  for (const Bounded& b : bounded(at)) u(b.at) = detail::from_bounded(packed(b.at), b.low, b.high);
  const auto to_packed = [&](const Eigen::VectorXd& v) {
    Eigen::VectorXd p = v;
    for (const Bounded& b : bounded(at)) p(b.at) = detail::to_bounded(v(b.at), b.low, b.high);
    return p;
  };
  Eigen::VectorXd rates = Eigen::VectorXd::Constant(u.size(), options_.learning_rate);
  rates.segment(at.gamma(), M).setConstant(options_.gate_learning_rate);
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
          negative_elbo(to_packed(u), data, earlier, per_observation, noise, log_prior_odds, gradient);
      if (!std::isfinite(value) || !gradient.allFinite()) continue;
    } catch (const NumericalError&) {
      continue;  // a sample the BLR cannot factorize: skip this step
    }
    for (const Bounded& b : bounded(at)) gradient(b.at) *= detail::bounded_derivative(u(b.at), b.low, b.high);
    adam.step(u, gradient, 1.0 - (1.0 - options_.final_rate) * it / std::max(1, iterations - 1));
  }
  return to_packed(u);
}

double Lbo::mode_objective(const Eigen::VectorXd& packed, const Observations& data, const std::vector<int>& used,
                           const Earlier& earlier, double strength, Eigen::VectorXd& gradient) const {
  const int P = mlp_->parameter_count();
  gradient = Eigen::VectorXd::Zero(packed.size());
  const Eigen::VectorXd ones = Eigen::VectorXd::Ones(options_.networks);
  double value = data_term(packed, data, used, ones, earlier, gradient, nullptr);
  const AnchorSums& anchors = earlier.anchors;
  for (int m : used) {
    const auto W = packed.segment(static_cast<Eigen::Index>(m) * P, P);
    auto dW = gradient.segment(static_cast<Eigen::Index>(m) * P, P);
    if (strength > 0 && !anchors.s0.empty() && anchors.s0[m] > 0) {
      value += strength * (anchors.s0[m] * W.squaredNorm() - 2.0 * W.dot(anchors.s1[m]) + anchors.s2[m]);
      dW += strength * 2.0 * (anchors.s0[m] * W - anchors.s1[m]);
    }
    value += 0.5 * options_.weight_decay * W.squaredNorm();
    dW += options_.weight_decay * W;
  }
  return value;
}

Eigen::VectorXd Lbo::polish(Eigen::VectorXd packed, const Observations& data, const Earlier& earlier,
                            double strength, int iterations) const {
  const int M = options_.networks;
  const int P = mlp_->parameter_count();
  const Layout at = layout_of(*this);
  if (iterations < 1 || data.y.size() < 2) return packed;
  const std::vector<int> used = used_networks(packed.segment(at.gamma(), M));
  const double absolute = strength * static_cast<double>(data.y.size());
  // L-BFGS sees only the used networks' weights, then the bounded scalars (unconstrained).
  const Eigen::Index k = static_cast<Eigen::Index>(used.size()) * P;
  const auto scalars = bounded(at);
  const auto unpack = [&](const Eigen::VectorXd& u) {
    Eigen::VectorXd p = packed;
    for (std::size_t j = 0; j < used.size(); ++j) {
      p.segment(at.weights(used[j]), P) = u.segment(static_cast<Eigen::Index>(j) * P, P);
    }
    for (std::size_t i = 0; i < scalars.size(); ++i) {
      p(scalars[i].at) = detail::to_bounded(u(k + static_cast<Eigen::Index>(i)), scalars[i].low, scalars[i].high);
    }
    return p;
  };
  Eigen::VectorXd u(k + static_cast<Eigen::Index>(scalars.size()));
  for (std::size_t j = 0; j < used.size(); ++j) {
    u.segment(static_cast<Eigen::Index>(j) * P, P) = packed.segment(at.weights(used[j]), P);
  }
  for (std::size_t i = 0; i < scalars.size(); ++i) {
    u(k + static_cast<Eigen::Index>(i)) = detail::from_bounded(packed(scalars[i].at), scalars[i].low, scalars[i].high);
  }
  const auto f = [&](const Eigen::VectorXd& v, Eigen::VectorXd& grad) {
    grad.resize(v.size());
    try {
      Eigen::VectorXd full;
      const double value = mode_objective(unpack(v), data, used, earlier, absolute, full);
      for (std::size_t j = 0; j < used.size(); ++j) {
        grad.segment(static_cast<Eigen::Index>(j) * P, P) = full.segment(at.weights(used[j]), P);
      }
      for (std::size_t i = 0; i < scalars.size(); ++i) {
        const Eigen::Index c = k + static_cast<Eigen::Index>(i);
        grad(c) = full(scalars[i].at) * detail::bounded_derivative(v(c), scalars[i].low, scalars[i].high);
      }
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

Eigen::VectorXd Lbo::fit_task(const Eigen::VectorXd& start, const Observations& data, const Earlier& earlier,
                              double strength, int iterations, int polish_iterations, std::mt19937_64& rng) const {
  return polish(optimize(start, data, earlier, strength, iterations, rng), data, earlier, strength, polish_iterations);
}

std::shared_ptr<const TaskPosterior> Lbo::build_posterior(const Eigen::VectorXd& packed, const Observations& data,
                                                          Standardization s, const Earlier& earlier) const {
  const int M = options_.networks;
  const int P = mlp_->parameter_count();
  const Layout at = layout_of(*this);
  detail::FeatureMaps maps{mlp_, {}, {}, options_.bias_column ? std::exp(packed(at.rho())) : 0.0};
  for (int m : used_networks(packed.segment(at.gamma(), M))) {
    maps.weights.push_back(std::make_shared<const Eigen::VectorXd>(packed.segment(at.weights(m), P)));
    const bool has_head = static_cast<std::size_t>(m) < earlier.heads.size() &&
                          earlier.heads[static_cast<std::size_t>(m)].size() == mlp_->output_dim();
    // The column's scale e^ρ goes into its head.
    maps.heads.push_back(has_head ? Eigen::VectorXd(std::exp(packed(at.rho())) * earlier.heads[static_cast<std::size_t>(m)])
                                  : Eigen::VectorXd());
  }
  const Eigen::VectorXd z = s.apply(data.y);
  BayesianLinearRegression blr(maps(data.X), z, std::exp(packed(at.lambda())), std::exp(packed(at.beta())));
  return std::make_shared<detail::FeaturePosterior>(std::move(maps), std::move(blr), s);
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
      // A reference to the task's own weights: `start` outlives this iteration.
      if (earlier.weights.size() <= static_cast<std::size_t>(m)) continue;
      const Eigen::VectorXd& w = earlier.weights[static_cast<std::size_t>(m)];
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
  const Layout at = layout_of(*this);
  packed(at.lambda()) = detail::kLogAlphaStart;
  packed(at.beta()) = detail::kLogBetaStart;
  // The latent columns start with as much prior variance as a whole feature block.
  packed(at.rho()) = 0.5 * std::log(static_cast<double>(mlp_->output_dim()));
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
  const Layout at = layout_of(*this);
  packed.segment(at.gamma(), M) = model.log_gamma;
  packed(at.lambda()) = model.log_lambda;
  packed(at.beta()) = model.log_beta;
  packed(at.rho()) = model.log_rho;
  return packed;
}

void Lbo::store(int task, const Eigen::VectorXd& packed, const Observations& raw, const Earlier& earlier) {
  const int M = options_.networks;
  const int P = mlp_->parameter_count();
  TaskModel& model = tasks_.at(static_cast<std::size_t>(task));
  const Layout at = layout_of(*this);
  model.log_gamma = packed.segment(at.gamma(), M);
  model.log_lambda = packed(at.lambda());
  model.log_beta = packed(at.beta());
  model.log_rho = packed(at.rho());
  model.weights.assign(static_cast<std::size_t>(M), Eigen::VectorXd());
  for (int m = 0; m < M; ++m) {
    if (sigmoid(model.log_gamma(m)) >= kKeptUsage) {
      model.weights[static_cast<std::size_t>(m)] = packed.segment(static_cast<Eigen::Index>(m) * P, P);
    }
  }
  model.prior_heads = earlier.heads;
  model.heads.assign(static_cast<std::size_t>(M), Eigen::VectorXd());
  model.posterior.reset();
  if (raw.y.size() == 0) return;
  const auto posterior = std::static_pointer_cast<const detail::FeaturePosterior>(
      build_posterior(packed, raw, Standardization::of(raw.y), earlier));
  const std::vector<int> used = used_networks(model.log_gamma);
  const std::vector<Eigen::VectorXd> heads = posterior->effective_heads();
  for (std::size_t j = 0; j < used.size(); ++j) model.heads[static_cast<std::size_t>(used[j])] = heads[j];
  model.posterior = posterior;
}

Lbo::Earlier Lbo::earlier_than(int task) const {
  const int M = options_.networks;
  const Eigen::Index D = mlp_->output_dim();
  std::vector<Anchor> anchors;
  std::vector<Eigen::VectorXd> head_sums(static_cast<std::size_t>(M), Eigen::VectorXd::Zero(D));
  std::vector<double> head_weights(static_cast<std::size_t>(M), 0.0);
  for (int u = 0; u < task && u < static_cast<int>(tasks_.size()); ++u) {
    const TaskModel& earlier = tasks_[static_cast<std::size_t>(u)];
    if (earlier.fitted_size < 1) continue;
    for (int m = 0; m < M; ++m) {
      const double q = sigmoid(earlier.log_gamma(m));
      const auto& w = earlier.weights[static_cast<std::size_t>(m)];
      if (w.size() > 0) anchors.push_back({m, q, w});
      const auto& h = earlier.heads.size() > static_cast<std::size_t>(m) ? earlier.heads[m] : Eigen::VectorXd();
      if (options_.latent_columns && h.size() == D) {
        head_sums[static_cast<std::size_t>(m)] += q * h;
        head_weights[static_cast<std::size_t>(m)] += q;
      }
    }
  }
  Earlier result;
  result.anchors = sum_anchors(anchors);
  result.heads.assign(static_cast<std::size_t>(M), Eigen::VectorXd());
  for (int m = 0; m < M; ++m) {
    if (head_weights[static_cast<std::size_t>(m)] > 0) {
      result.heads[static_cast<std::size_t>(m)] = head_sums[static_cast<std::size_t>(m)] / head_weights[static_cast<std::size_t>(m)];
    }
  }
  return result;
}

double Lbo::choose_strength(const Eigen::VectorXd& start, const Observations& data, const Earlier& earlier,
                            std::uint64_t seed) const {
  const int K = options_.cv_folds;
  const Eigen::Index n = data.y.size();
  const auto& grid = options_.regularizer_grid;
  // Every (strength, fold) fit is independent: they run in parallel (OpenMP), each fold's
  // log predictive terms kept apart and summed afterwards in the serial order, so the choice does
  // not depend on the thread count. Exceptions must not leave an OpenMP region: they are kept.
  const int fits = static_cast<int>(grid.size()) * K;
  std::vector<std::vector<double>> terms(static_cast<std::size_t>(fits));
  std::vector<char> failed(static_cast<std::size_t>(fits), 0);
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(fits));
#pragma omp parallel for schedule(dynamic)
  for (int job = 0; job < fits; ++job) {
    const double strength = grid[static_cast<std::size_t>(job / K)];
    const int k = job % K;
    const auto j = static_cast<std::size_t>(job);
    try {
      std::vector<Eigen::Index> train, test;
      for (Eigen::Index i = 0; i < n; ++i) (i % K == k ? test : train).push_back(i);
      const Observations fit_on{data.X(train, Eigen::all), data.y(train)};
      std::mt19937_64 rng(seed + static_cast<std::uint64_t>(k));  // the same samples for every strength
      const Eigen::VectorXd packed =
          fit_task(start, fit_on, earlier, strength, options_.cv_iterations, options_.cv_polish_iterations, rng);
      try {
        const auto post = build_posterior(packed, fit_on, Standardization{}, earlier);
        const Posterior p = post->predict(data.X(test, Eigen::all));
        const double noise = std::exp(-packed(layout_of(*this).beta()));
        for (std::size_t i = 0; i < test.size(); ++i) {
          const double var = p.var(static_cast<Eigen::Index>(i)) + noise;
          const double r = data.y(test[i]) - p.mean(static_cast<Eigen::Index>(i));
          terms[j].push_back(-0.5 * (std::log(2 * std::numbers::pi * var) + r * r / var));
        }
      } catch (const NumericalError&) {
        failed[j] = 1;
      }
    } catch (...) {
      errors[j] = std::current_exception();
    }
  }
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  double best_score = -std::numeric_limits<double>::infinity();
  double best = grid.front();
  for (std::size_t g = 0; g < grid.size(); ++g) {
    double score = 0;
    for (int k = 0; k < K; ++k) {
      const std::size_t j = g * static_cast<std::size_t>(K) + static_cast<std::size_t>(k);
      for (double t : terms[j]) score += t;
      if (failed[j]) score = -std::numeric_limits<double>::infinity();
    }
    if (score > best_score) best_score = score, best = grid[g];
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
    blank.heads.assign(static_cast<std::size_t>(M), Eigen::VectorXd());
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
    const Observations z{raw.X, s.apply(raw.y)};
    const std::uint64_t task_seed = seed + 7919 * static_cast<std::uint64_t>(t);
    const bool warm = model.fitted_size > 0;
    const Eigen::VectorXd start = warm ? pack(t) : initial_parameters(t);
    const Earlier earlier = earlier_than(t);
    if (earlier.anchors.empty()) {
      model.strength = 0;
    } else if (n >= 2 * options_.cv_folds && (model.strength_size == 0 || n >= 2 * model.strength_size)) {
      model.strength = choose_strength(start, z, earlier, task_seed ^ 0xc5);
      model.strength_size = n;
    } else if (model.strength_size == 0) {
      // Too few points to cross-validate yet: trust the earlier tasks as far as the grid goes.
      model.strength = *std::max_element(options_.regularizer_grid.begin(), options_.regularizer_grid.end());
    }
    std::mt19937_64 rng(task_seed);
    const Eigen::VectorXd packed =
        fit_task(start, z, earlier, model.strength, warm ? options_.warm_iterations : options_.iterations,
                 warm ? options_.warm_polish_iterations : options_.polish_iterations, rng);
    store(t, packed, raw, earlier);
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
    const auto flat = [](const std::vector<Eigen::VectorXd>& vs) {
      std::vector<std::vector<double>> out;
      for (const Eigen::VectorXd& v : vs) out.emplace_back(v.data(), v.data() + v.size());
      return out;
    };
    t.weights = flat(model.weights);
    t.heads = flat(model.heads);
    t.prior_heads = flat(model.prior_heads);
    t.log_gamma.assign(model.log_gamma.data(), model.log_gamma.data() + model.log_gamma.size());
    t.log_lambda = model.log_lambda;
    t.log_beta = model.log_beta;
    t.log_rho = model.log_rho;
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
  const auto vectors = [&](const std::vector<std::vector<double>>& saved, Eigen::Index size, std::size_t count) {
    if (saved.size() != count) throw NumericalError("lbo: the saved state does not fit this model's networks");
    std::vector<Eigen::VectorXd> out;
    for (const auto& v : saved) {
      if (!v.empty() && static_cast<Eigen::Index>(v.size()) != size) {
        throw NumericalError("lbo: the saved state does not fit this model's networks");
      }
      out.push_back(Eigen::Map<const Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size())));
    }
    return out;
  };
  std::vector<TaskModel> tasks;
  for (const LboTaskState& saved : state.lbo->tasks) {
    if (static_cast<int>(saved.log_gamma.size()) != M) throw NumericalError("lbo: the saved state does not fit this model's networks");
    TaskModel model;
    model.weights = vectors(saved.weights, P, static_cast<std::size_t>(M));
    model.heads = vectors(saved.heads, mlp_->output_dim(), static_cast<std::size_t>(M));
    model.prior_heads = vectors(saved.prior_heads, mlp_->output_dim(), saved.prior_heads.size());
    model.log_gamma = Eigen::Map<const Eigen::VectorXd>(saved.log_gamma.data(), M);
    model.log_lambda = saved.log_lambda;
    model.log_beta = saved.log_beta;
    model.log_rho = saved.log_rho;
    model.fitted_size = saved.fitted_size;
    model.strength = saved.strength;
    model.strength_size = saved.strength_size;
    tasks.push_back(std::move(model));
  }
  tasks_ = std::move(tasks);
  for (std::size_t t = 0; t < tasks_.size() && t < data.tasks.size(); ++t) {
    if (tasks_[t].fitted_size < 1 || data.tasks[t].y.size() == 0) continue;
    Earlier earlier;
    earlier.heads = tasks_[t].prior_heads;
    tasks_[t].posterior =
        build_posterior(pack(static_cast<int>(t)), data.tasks[t], Standardization::of(data.tasks[t].y), earlier);
  }
}

}  // namespace lbo::surrogate
