#include "lbo/surrogate/jumbo.hpp"

#include <LBFGS.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>

#include "lbo/surrogate/linalg.hpp"

namespace lbo::surrogate {

namespace {

// Weight decay of the network's fit: keeps the features smooth where the earlier tasks had no
// data, without competing with the squared error of standardized targets.
constexpr double kDecay = 1e-4;

// x ↦ (φ(x) + 1)/2: the tanh features in [0,1]^k, the box the warm GP's priors are set for.
Eigen::MatrixXd feature_map(const Mlp& network, const Eigen::VectorXd& parameters, const Eigen::MatrixXd& X) {
  return (network.forward(parameters, X).array() + 1.0) / 2.0;
}

class FeatureTracked final : public TrackedPosterior {
 public:
  FeatureTracked(std::shared_ptr<const Mlp> network, std::shared_ptr<const Eigen::VectorXd> parameters,
                 std::unique_ptr<TrackedPosterior> inner)
      : network_(std::move(network)), parameters_(std::move(parameters)), inner_(std::move(inner)) {
    current_ = inner_->at_points();
  }
  double mean_at(const Eigen::VectorXd& x) const override { return inner_->mean_at(map(x)); }
  int add(const Eigen::VectorXd& x, const double* y) override {
    const int index = inner_->add(map(x), y);
    current_ = inner_->at_points();
    return index;
  }
  void set_value(int index, double y) override {
    inner_->set_value(index, y);
    current_ = inner_->at_points();
  }

 private:
  Eigen::VectorXd map(const Eigen::VectorXd& x) const {
    return feature_map(*network_, *parameters_, x.transpose()).row(0).transpose();
  }
  std::shared_ptr<const Mlp> network_;
  std::shared_ptr<const Eigen::VectorXd> parameters_;
  std::unique_ptr<TrackedPosterior> inner_;
};

class FeaturePosterior final : public TaskPosterior {
 public:
  FeaturePosterior(std::shared_ptr<const Mlp> network, std::shared_ptr<const Eigen::VectorXd> parameters,
                   std::shared_ptr<const TaskPosterior> inner)
      : TaskPosterior(inner->standardization()),
        network_(std::move(network)),
        parameters_(std::move(parameters)),
        inner_(std::move(inner)) {}

  int dimension() const override { return network_->input_dim(); }
  Posterior predict(const Eigen::MatrixXd& X) const override { return inner_->predict(map(X)); }
  PointPosterior predict_with_gradient(const Eigen::VectorXd& x) const override {
    const PointPosterior at = inner_->predict_with_gradient(map(x.transpose()).row(0).transpose());
    // d/dx = J_h(x)ᵀ d/dh, J_h = J_φ / 2.
    Eigen::MatrixXd V(at.d_mean.size(), 2);
    V.col(0) = at.d_mean;
    V.col(1) = at.d_var;
    const Eigen::MatrixXd G = network_->input_gradient(*parameters_, x, V) / 2.0;
    return PointPosterior{at.mean, at.var, G.col(0), G.col(1)};
  }
  std::shared_ptr<const TaskPosterior> condition(const Eigen::MatrixXd& X, const Eigen::VectorXd* y) const override {
    return std::make_shared<FeaturePosterior>(network_, parameters_, inner_->condition(map(X), y));
  }
  std::unique_ptr<TrackedPosterior> track(const Eigen::MatrixXd& C) const override {
    return std::make_unique<FeatureTracked>(network_, parameters_, inner_->track(map(C)));
  }

 private:
  Eigen::MatrixXd map(const Eigen::MatrixXd& X) const { return feature_map(*network_, *parameters_, X); }
  std::shared_ptr<const Mlp> network_;
  std::shared_ptr<const Eigen::VectorXd> parameters_;
  std::shared_ptr<const TaskPosterior> inner_;
};

class JumboPosterior final : public TaskPosterior {
 public:
  JumboPosterior(std::shared_ptr<const TaskPosterior> cold, std::shared_ptr<const TaskPosterior> warm, double threshold)
      : TaskPosterior(cold->standardization()), cold_(std::move(cold)), warm_(std::move(warm)), threshold_(threshold) {}

  int dimension() const override { return cold_->dimension(); }
  Posterior predict(const Eigen::MatrixXd& X) const override { return cold_->predict(X); }
  PointPosterior predict_with_gradient(const Eigen::VectorXd& x) const override {
    return cold_->predict_with_gradient(x);
  }
  std::shared_ptr<const TaskPosterior> condition(const Eigen::MatrixXd& X, const Eigen::VectorXd* y) const override {
    return std::make_shared<JumboPosterior>(cold_->condition(X, y), warm_->condition(X, y), threshold_);
  }
  std::unique_ptr<TrackedPosterior> track(const Eigen::MatrixXd& C) const override { return cold_->track(C); }
  Guide guide() const override { return {warm_, threshold_}; }

 private:
  std::shared_ptr<const TaskPosterior> cold_, warm_;
  double threshold_;
};

// The network's layers: the hidden ones, then the features.
std::vector<int> layers(const JumboOptions& options) {
  std::vector<int> widths = options.hidden;
  widths.push_back(options.features);
  return widths;
}

// Each finished task's rows, thinned evenly when all of them exceed `max_rows`.
std::vector<Observations> training_tasks(const TaskData& data, const std::vector<std::int64_t>& key, int max_rows) {
  Eigen::Index total = 0;
  for (std::size_t i = 0; i < key.size(); i += 2) total += key[i + 1];
  std::vector<Observations> tasks;
  for (std::size_t i = 0; i < key.size(); i += 2) {
    const Observations& o = data.tasks[static_cast<std::size_t>(key[i])];
    const Eigen::Index n = o.y.size();
    if (total <= max_rows) {
      tasks.push_back(o);
      continue;
    }
    const Eigen::Index keep = std::max<Eigen::Index>(2, n * max_rows / total);
    std::vector<Eigen::Index> rows;
    for (Eigen::Index k = 0; k < keep && k < n; ++k) rows.push_back(k * n / keep);
    tasks.push_back({o.X(rows, Eigen::all), o.y(rows)});
  }
  return tasks;
}

}  // namespace

double pretrain_objective(const Mlp& network, const std::vector<Observations>& standardized,
                          const Eigen::VectorXd& packed, Eigen::VectorXd& gradient) {
  const int p = network.parameter_count();
  const int k = network.output_dim();
  const auto T = static_cast<double>(standardized.size());
  const Eigen::VectorXd params = packed.head(p);
  gradient = Eigen::VectorXd::Zero(packed.size());
  double loss = kDecay * packed.squaredNorm();
  Eigen::VectorXd d_params = Eigen::VectorXd::Zero(p);
  for (std::size_t t = 0; t < standardized.size(); ++t) {
    const Observations& o = standardized[t];
    if (o.y.size() == 0) continue;
    const Eigen::Index head = p + static_cast<Eigen::Index>(t) * (k + 1);
    const Eigen::VectorXd w = packed.segment(head, k);
    const double b = packed(head + k);
    MlpCache cache;
    const Eigen::MatrixXd Phi = network.forward(params, o.X, &cache);
    const Eigen::VectorXd residual = (Phi * w).array() + b - o.y.array();
    const double c = 1.0 / (T * static_cast<double>(o.y.size()));
    loss += c * residual.squaredNorm();
    const Eigen::VectorXd d_out = 2 * c * residual;  // ∂loss/∂prediction
    gradient.segment(head, k) += Phi.transpose() * d_out;
    gradient(head + k) += d_out.sum();
    d_params += network.backward(params, cache, d_out * w.transpose());
  }
  gradient.head(p) += d_params;
  gradient += 2 * kDecay * packed;
  return loss;
}

Pretrained pretrain_features(const Mlp& network, const std::vector<Observations>& tasks, std::uint64_t seed,
                             int iterations) {
  std::vector<Observations> standardized;
  for (const Observations& o : tasks) {
    const Standardization s = Standardization::of(o.y);
    standardized.push_back({o.X, s.apply(o.y)});
  }
  const int p = network.parameter_count();
  const int k = network.output_dim();
  std::mt19937_64 rng(seed);
  Eigen::VectorXd x = Eigen::VectorXd::Zero(p + static_cast<Eigen::Index>(tasks.size()) * (k + 1));
  x.head(p) = network.initial_parameters(rng);
  std::normal_distribution<double> normal(0.0, 1.0 / std::sqrt(static_cast<double>(k)));
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    for (int j = 0; j < k; ++j) x(p + static_cast<Eigen::Index>(t) * (k + 1) + j) = normal(rng);
  }
  auto f = [&](const Eigen::VectorXd& u, Eigen::VectorXd& g) { return pretrain_objective(network, standardized, u, g); };
  LBFGSpp::LBFGSParam<double> param;
  param.epsilon = 1e-6;
  param.max_iterations = iterations;
  param.max_linesearch = 40;
  double value = std::numeric_limits<double>::infinity();
  try {
    // LBFGSpp reads 0 iterations as no limit; here it means the initial network.
    if (iterations > 0) {
      LBFGSpp::LBFGSSolver<double> solver(param);
      solver.minimize(f, x, value);
    }
  } catch (const std::exception&) {
    // A failed line search stops at the last accepted iterate, which is as good a network.
  }
  Eigen::VectorXd g;
  const double loss = f(x, g) - kDecay * x.squaredNorm();
  if (!x.allFinite() || !std::isfinite(loss)) throw NumericalError("jumbo: the network's fit diverged");
  return {x.head(p), loss};
}

std::shared_ptr<const TaskPosterior> make_feature_posterior(std::shared_ptr<const Mlp> network,
                                                            std::shared_ptr<const Eigen::VectorXd> parameters,
                                                            std::shared_ptr<const TaskPosterior> inner) {
  return std::make_shared<FeaturePosterior>(std::move(network), std::move(parameters), std::move(inner));
}

std::shared_ptr<const TaskPosterior> make_jumbo_posterior(std::shared_ptr<const TaskPosterior> cold,
                                                          std::shared_ptr<const TaskPosterior> warm, double threshold) {
  return std::make_shared<JumboPosterior>(std::move(cold), std::move(warm), threshold);
}

bool jumbo_cold_alone(const JumboState& state, std::size_t task) {
  if (state.network.empty() || task >= state.warm.theta.size() || state.warm.theta[task].empty()) return true;
  // NaN (not compared) is false: JUMBO's combination.
  return task < state.loo_cold.size() && task < state.loo_warm.size() && state.loo_cold[task] > state.loo_warm[task];
}

std::string describe_jumbo_task(const JumboState& state, std::size_t task) {
  if (state.network.empty()) return "cold GP (no warm network yet)";
  if (task >= state.warm.theta.size() || state.warm.theta[task].empty()) return "cold GP (no warm GP: it finished first)";
  if (!jumbo_cold_alone(state, task)) return "cold GP within the warm GP's best";
  char text[128];
  std::snprintf(text, sizeof text, "cold GP alone (leave-one-out log density: cold %.4g > warm %.4g)",
                state.loo_cold[task], state.loo_warm[task]);
  return text;
}

std::vector<std::int64_t> jumbo_training_key(const TaskData& data) {
  std::vector<std::int64_t> key;
  for (std::size_t t = 0; t < data.tasks.size() && t < data.finished.size(); ++t) {
    if (!data.finished[t] || data.tasks[t].y.size() < 2) continue;
    key.push_back(static_cast<std::int64_t>(t));
    key.push_back(static_cast<std::int64_t>(data.tasks[t].y.size()));
  }
  return key;
}

Jumbo::Jumbo(int dimension, JumboOptions options)
    : dimension_(dimension),
      options_(std::move(options)),
      network_(std::make_shared<const Mlp>(dimension, layers(options_))) {}

std::vector<int> Jumbo::trained_on() const {
  std::vector<int> tasks;
  if (!parameters_) return tasks;
  for (std::size_t i = 0; i < state_.trained_key.size(); i += 2) tasks.push_back(static_cast<int>(state_.trained_key[i]));
  return tasks;
}

Eigen::MatrixXd Jumbo::features(const Eigen::MatrixXd& X) const {
  if (!parameters_) throw NumericalError("jumbo: no network yet");
  return feature_map(*network_, *parameters_, X);
}

void Jumbo::build(const TaskData& data, std::size_t t, bool refit, std::uint64_t seed) {
  const Observations& o = data.tasks[t];
  if (refit) {
    cold_[t].fit(o, seed + 7919 * t);
  } else {
    cold_[t].set(o, Eigen::Map<const Eigen::VectorXd>(state_.cold.theta[t].data(),
                                                      static_cast<Eigen::Index>(state_.cold.theta[t].size())));
  }
  state_.cold.theta[t].assign(cold_[t].theta().data(), cold_[t].theta().data() + cold_[t].theta().size());
  state_.cold.fitted_sizes[t] = o.y.size();
  if (!parameters_) {
    posteriors_[t] = cold_[t].posterior();
    return;
  }
  const Observations mapped{features(o.X), o.y};
  const std::vector<double>& saved = state_.warm.theta[t];
  if (refit) {
    warm_[t].fit(mapped, seed + 104729 * t);
  } else if (static_cast<int>(saved.size()) == GpHyperparameters::size(options_.features)) {
    warm_[t].set(mapped, Eigen::Map<const Eigen::VectorXd>(saved.data(), static_cast<Eigen::Index>(saved.size())));
  } else {
    // Restored, fitted before the network existed (a task that finished first): as it ran.
    posteriors_[t] = cold_[t].posterior();
    return;
  }
  state_.warm.theta[t].assign(warm_[t].theta().data(), warm_[t].theta().data() + warm_[t].theta().size());
  state_.warm.fitted_sizes[t] = o.y.size();
  state_.loo_cold[t] = state_.loo_warm[t] = std::numeric_limits<double>::quiet_NaN();
  if (options_.cold_switch && o.y.size() >= 2) {
    // Both GPs standardize y alike (GaussianProcess::fit): their densities are of the same z.
    const Standardization s = Standardization::of(o.y);
    const Eigen::VectorXd z = s.apply(o.y);
    state_.loo_cold[t] = loo_log_predictive(o.X, z, cold_[t].theta());
    state_.loo_warm[t] = loo_log_predictive(mapped.X, z, warm_[t].theta());
    if (jumbo_cold_alone(state_, t)) {
      posteriors_[t] = cold_[t].posterior();
      return;
    }
  }
  posteriors_[t] = make_jumbo_posterior(cold_[t].posterior(),
                                        make_feature_posterior(network_, parameters_, warm_[t].posterior()),
                                        options_.threshold);
}

void Jumbo::fit(const TaskData& data, std::uint64_t seed) {
  const std::vector<std::int64_t> key = jumbo_training_key(data);
  bool retrained = false;
  if (key != state_.trained_key) {
    if (key.empty()) {
      parameters_.reset();
      state_.network.clear();
    } else {
      const Pretrained trained =
          pretrain_features(*network_, training_tasks(data, key, options_.max_rows), seed ^ 0x6a0b0u, options_.pretrain_iterations);
      parameters_ = std::make_shared<const Eigen::VectorXd>(trained.parameters);
      state_.network.assign(trained.parameters.data(), trained.parameters.data() + trained.parameters.size());
    }
    state_.trained_key = key;
    retrained = true;
  }
  const std::size_t tasks = data.tasks.size();
  for (GpState* s : {&state_.cold, &state_.warm}) {
    s->theta.resize(std::max(s->theta.size(), tasks));
    s->fitted_sizes.resize(std::max(s->fitted_sizes.size(), tasks), -1);
  }
  for (std::vector<double>* loo : {&state_.loo_cold, &state_.loo_warm}) {
    loo->resize(std::max(loo->size(), tasks), std::numeric_limits<double>::quiet_NaN());
  }
  cold_.resize(std::max(cold_.size(), tasks), GaussianProcess(options_.gp));
  warm_.resize(std::max(warm_.size(), tasks), GaussianProcess(options_.gp));
  posteriors_.resize(tasks);
  for (std::size_t t = 0; t < tasks; ++t) {
    const Observations& o = data.tasks[t];
    if (o.y.size() == 0) {
      posteriors_[t].reset();
      continue;
    }
    // A finished task keeps the network it ran with: it proposes nothing more.
    const bool finished = t < data.finished.size() && data.finished[t];
    if (posteriors_[t] && state_.cold.fitted_sizes[t] == o.y.size() && (!retrained || finished)) continue;
    build(data, t, true, seed);
  }
}

std::shared_ptr<const TaskPosterior> Jumbo::posterior(int task) const { return task_posterior(posteriors_, task); }

SurrogateState Jumbo::state() const {
  SurrogateState s;
  s.jumbo = state_;
  return s;
}

void Jumbo::restore(const SurrogateState& saved, const TaskData& data) {
  if (!saved.jumbo) throw NumericalError("jumbo: the saved state is not JUMBO's");
  Jumbo restored(dimension_, options_);
  restored.state_ = *saved.jumbo;
  JumboState& s = restored.state_;
  if (!s.network.empty()) {
    if (static_cast<int>(s.network.size()) != network_->parameter_count()) {
      throw NumericalError("jumbo: the saved network has " + std::to_string(s.network.size()) + " parameters, not " +
                           std::to_string(network_->parameter_count()) + " (network_width or network_depth changed)");
    }
    restored.parameters_ = std::make_shared<const Eigen::VectorXd>(
        Eigen::Map<const Eigen::VectorXd>(s.network.data(), static_cast<Eigen::Index>(s.network.size())));
  }
  const std::size_t tasks = std::max(data.tasks.size(), s.cold.theta.size());
  for (GpState* g : {&s.cold, &s.warm}) {
    g->theta.resize(tasks);
    g->fitted_sizes.resize(tasks, -1);
  }
  for (std::vector<double>* loo : {&s.loo_cold, &s.loo_warm}) loo->resize(tasks, std::numeric_limits<double>::quiet_NaN());
  restored.cold_.assign(tasks, GaussianProcess(options_.gp));
  restored.warm_.assign(tasks, GaussianProcess(options_.gp));
  restored.posteriors_.resize(data.tasks.size());
  for (std::size_t t = 0; t < data.tasks.size(); ++t) {
    if (data.tasks[t].y.size() == 0 || s.cold.theta[t].size() != static_cast<std::size_t>(GpHyperparameters::size(dimension_))) {
      continue;
    }
    // The data as they are now with the saved θ (as GpSurrogate::restore): a task whose size
    // differs from its fitted one is refitted by the next fit.
    const std::int64_t fitted = s.cold.fitted_sizes[t];
    restored.build(data, t, false, 0);
    s.cold.fitted_sizes[t] = fitted;
  }
  *this = std::move(restored);
}

}  // namespace lbo::surrogate
