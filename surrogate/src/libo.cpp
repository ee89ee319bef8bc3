#include "lbo/surrogate/libo.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdio>

#include "lbo/surrogate/linalg.hpp"

namespace lbo::surrogate {

namespace {

constexpr double kLog2Pi = 1.8378770664093454836;

// Box of θ = [log σ_f², log σ_n², logit s], as GpHyperparameters': σ_f² ∈ [0.01, 100],
// σ_n² ∈ [1e-6, 2]; s ∈ [0.001, 0.999].
const double kLower[] = {std::log(0.01), std::log(1e-6), -6.9};
const double kUpper[] = {std::log(100.0), std::log(2.0), 6.9};
// The prior's centre of logit s: s = 0.05.
const double kShareCentre = std::log(0.05 / 0.95);
const double kDefault[] = {0.0, std::log(1e-2), kShareCentre};

double sigmoid(double u) { return 1.0 / (1.0 + std::exp(-u)); }

// The GP posterior under σ_f² k̂ + σ_n² I: LLᵀ over the training points, extended by condition().
// The same algebra as GpPosterior (gp.cpp) with the kernel given instead of Matérn-5/2.
class FixedKernelPosterior final : public TaskPosterior {
 public:
  FixedKernelPosterior(std::shared_ptr<const CombinedKernel> kernel, Eigen::MatrixXd X, Eigen::VectorXd y,
                       Eigen::Vector2d theta, Eigen::MatrixXd L, Standardization s)
      : TaskPosterior(s),
        kernel_(std::move(kernel)),
        X_(std::move(X)),
        y_(std::move(y)),
        theta_(theta),
        L_(std::move(L)),
        signal_(std::exp(theta(0))),
        noise_(std::exp(theta(1))) {
    alpha_ = L_.triangularView<Eigen::Lower>().transpose().solve(L_.triangularView<Eigen::Lower>().solve(y_));
  }

  int dimension() const override { return static_cast<int>(X_.cols()); }

  Posterior predict(const Eigen::MatrixXd& Xs) const override {
    const Eigen::MatrixXd Ks = signal_ * kernel_->gram(Xs, X_);
    Posterior p;
    p.mean = Ks * alpha_;
    const Eigen::MatrixXd v = L_.triangularView<Eigen::Lower>().solve(Ks.transpose());
    p.var = (signal_ * kernel_->diagonal(Xs) - v.colwise().squaredNorm().transpose()).cwiseMax(1e-12);
    return p;
  }

  PointPosterior predict_with_gradient(const Eigen::VectorXd& x) const override {
    const Eigen::VectorXd k = signal_ * kernel_->gram(x.transpose(), X_).row(0).transpose();  // n
    const Eigen::MatrixXd dk = signal_ * kernel_->gradient(x, X_);                         // d × n
    const Eigen::VectorXd kinv_k =
        L_.triangularView<Eigen::Lower>().transpose().solve(L_.triangularView<Eigen::Lower>().solve(k));
    PointPosterior p;
    p.mean = k.dot(alpha_);
    p.d_mean = dk * alpha_;
    p.var = std::max(signal_ * kernel_->diagonal(x.transpose())(0) - k.dot(kinv_k), 1e-12);
    p.d_var = signal_ * kernel_->diagonal_gradient(x) - 2.0 * dk * kinv_k;
    return p;
  }

  std::shared_ptr<const TaskPosterior> condition(const Eigen::MatrixXd& Xn, const Eigen::VectorXd* y) const override {
    const Eigen::Index n = X_.rows(), m = Xn.rows();
    const Eigen::MatrixXd B = signal_ * kernel_->gram(X_, Xn);
    Eigen::MatrixXd C = signal_ * kernel_->gram(Xn, Xn);
    C.diagonal().array() += noise_;
    Eigen::MatrixXd L = extend_cholesky(L_, B, C);
    Eigen::MatrixXd X(n + m, X_.cols());
    X << X_, Xn;
    Eigen::VectorXd yy(n + m);
    yy << y_, (y != nullptr ? *y : predict(Xn).mean);
    return std::make_shared<FixedKernelPosterior>(kernel_, std::move(X), std::move(yy), theta_, std::move(L),
                                                  standardization());
  }

 private:
  std::shared_ptr<const CombinedKernel> kernel_;
  Eigen::MatrixXd X_;
  Eigen::VectorXd y_;
  Eigen::Vector2d theta_;
  Eigen::MatrixXd L_;
  Eigen::VectorXd alpha_;
  double signal_, noise_;
};

// σ_f² K + σ_n² I.
Eigen::MatrixXd noisy(const Eigen::MatrixXd& K, double log_signal, double log_noise) {
  Eigen::MatrixXd Kn = std::exp(log_signal) * K;
  Kn.diagonal().array() += std::exp(log_noise);
  return Kn;
}

// θ maximizing fixed_kernel_objective (with K_full: three entries, else two) from the starts:
// the warm one (when its length fits), the default, then random ones in the inner half of the box.
std::vector<double> fit_theta(const Eigen::MatrixXd& K, const Eigen::MatrixXd* K_full, const Eigen::VectorXd& z,
                              const std::vector<double>& warm, std::uint64_t seed, const LiboOptions& options) {
  const Eigen::Index size = K_full != nullptr ? 3 : 2;
  const Eigen::VectorXd lower = Eigen::Map<const Eigen::VectorXd>(kLower, size);
  const Eigen::VectorXd upper = Eigen::Map<const Eigen::VectorXd>(kUpper, size);
  std::vector<Eigen::VectorXd> starts;
  if (static_cast<Eigen::Index>(warm.size()) == size) starts.push_back(Eigen::Map<const Eigen::VectorXd>(warm.data(), size));
  starts.push_back(Eigen::Map<const Eigen::VectorXd>(kDefault, size));
  for (Eigen::VectorXd& t : inner_half_points(lower, upper, options.restarts, seed)) starts.push_back(std::move(t));
  const BestStart best = maximize_from_starts([&](const Eigen::VectorXd& t) { return fixed_kernel_objective(K, K_full, z, t); },
                                              starts, lower, upper, options.max_iterations);
  if (!std::isfinite(best.value)) throw NumericalError("libo: no hyperparameters give a positive definite kernel matrix");
  return std::vector<double>(best.theta.data(), best.theta.data() + best.theta.size());
}

}  // namespace

Eigen::MatrixXd CombinedKernel::gram(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) const {
  Eigen::MatrixXd k = dictionary_->combined(A, B, active_);
  if (full_share_ > 0) k = (1 - full_share_) * k + full_share_ * dictionary_->combined(A, B, {});
  return k;
}

Eigen::VectorXd CombinedKernel::diagonal(const Eigen::MatrixXd& A) const {
  Eigen::VectorXd k = dictionary_->combined_diagonal(A, active_);
  if (full_share_ > 0) k = (1 - full_share_) * k + full_share_ * dictionary_->combined_diagonal(A, {});
  return k;
}

Eigen::MatrixXd CombinedKernel::gradient(const Eigen::VectorXd& x, const Eigen::MatrixXd& B) const {
  Eigen::MatrixXd g = dictionary_->combined_gradient(x, B, active_);
  if (full_share_ > 0) g = (1 - full_share_) * g + full_share_ * dictionary_->combined_gradient(x, B, {});
  return g;
}

Eigen::VectorXd CombinedKernel::diagonal_gradient(const Eigen::VectorXd& x) const {
  Eigen::VectorXd g = dictionary_->combined_diagonal_gradient(x, active_);
  if (full_share_ > 0) g = (1 - full_share_) * g + full_share_ * dictionary_->combined_diagonal_gradient(x, {});
  return g;
}

GpObjective fixed_kernel_objective(const Eigen::MatrixXd& K, const Eigen::MatrixXd* K_full, const Eigen::VectorXd& y,
                                   const Eigen::VectorXd& theta) {
  const Eigen::Index n = y.size();
  const double signal = std::exp(theta(0)), noise = std::exp(theta(1));
  const double share = K_full != nullptr ? sigmoid(theta(2)) : 0.0;
  const Eigen::MatrixXd mixed = K_full != nullptr ? Eigen::MatrixXd((1 - share) * K + share * *K_full) : K;
  const Eigen::LLT<Eigen::MatrixXd> llt = robust_cholesky(noisy(mixed, theta(0), theta(1)));
  const Eigen::VectorXd alpha = llt.solve(y);
  GpObjective out;
  out.value = -0.5 * y.dot(alpha) - llt.matrixLLT().diagonal().array().log().sum() - 0.5 * static_cast<double>(n) * kLog2Pi;
  // ∂/∂θ_j = ½ tr(W ∂K/∂θ_j), W = ααᵀ − K⁻¹: ∂K/∂log σ_f² = σ_f² K_mixed, ∂K/∂log σ_n² = σ_n² I,
  // ∂K/∂logit s = σ_f² s (1 − s) (K_full − K).
  const Eigen::MatrixXd W = alpha * alpha.transpose() - llt.solve(Eigen::MatrixXd::Identity(n, n));
  out.gradient.resize(theta.size());
  out.gradient(0) = 0.5 * signal * W.cwiseProduct(mixed).sum();
  out.gradient(1) = 0.5 * noise * W.trace();
  // The GaussianProcess priors: log σ_f² ~ N(0, 1), log σ_n² ~ N(log 1e-2, 2²).
  out.value += -0.5 * theta(0) * theta(0);
  out.gradient(0) += -theta(0);
  const double u = (theta(1) - std::log(1e-2)) / 2.0;
  out.value += -0.5 * u * u;
  out.gradient(1) += -u / 2.0;
  if (K_full != nullptr) {
    out.gradient(2) = 0.5 * signal * share * (1 - share) * W.cwiseProduct(*K_full - K).sum();
    const double v = (theta(2) - kShareCentre) / 2.0;
    out.value += -0.5 * v * v;
    out.gradient(2) += -v / 2.0;
  }
  return out;
}

std::shared_ptr<const TaskPosterior> make_fixed_kernel_posterior(std::shared_ptr<const CombinedKernel> kernel,
                                                                 const Eigen::MatrixXd& X,
                                                                 const Eigen::VectorXd& y_standardized,
                                                                 const Eigen::Vector2d& theta,
                                                                 Standardization standardization) {
  const Eigen::LLT<Eigen::MatrixXd> llt = robust_cholesky(noisy(kernel->gram(X, X), theta(0), theta(1)));
  return std::make_shared<FixedKernelPosterior>(std::move(kernel), X, y_standardized, theta,
                                                llt.matrixL().toDenseMatrix(), standardization);
}

std::vector<std::int64_t> libo_learning_key(const TaskData& data) {
  std::vector<std::int64_t> key;
  for (std::size_t t = 0; t < data.tasks.size() && t < data.finished.size(); ++t) {
    if (!data.finished[t]) continue;
    const std::size_t rows = t < data.exploration.size() ? data.exploration[t].size() : 0;
    key.push_back(static_cast<std::int64_t>(t));
    key.push_back(static_cast<std::int64_t>(rows));
  }
  return key;
}

Libo::Libo(int dimension, LiboOptions options, std::shared_ptr<const KernelDictionary> dictionary)
    : dimension_(dimension),
      options_(std::move(options)),
      dictionary_(dictionary ? std::move(dictionary)
                             : std::make_shared<const KernelDictionary>(KernelDictionary::standard(dimension))) {}

std::string Libo::describe_active() const {
  if (state_.active.empty()) return "k_full";
  std::string text;
  for (int j : state_.active) text += (text.empty() ? "" : " + ") + dictionary_->kernel(j).name();
  return text;
}

std::shared_ptr<const CombinedKernel> Libo::kernel(int task) const {
  if (task < 0 || static_cast<std::size_t>(task) >= kernels_.size()) return nullptr;
  return kernels_[static_cast<std::size_t>(task)];
}

std::shared_ptr<const CombinedKernel> Libo::kernel_for(const std::vector<double>& theta) const {
  return std::make_shared<const CombinedKernel>(dictionary_, state_.active, theta.size() == 3 ? sigmoid(theta[2]) : 0.0);
}

void Libo::fit(const TaskData& data, std::uint64_t seed) {
  const std::vector<std::int64_t> key = libo_learning_key(data);
  bool kernel_changed = false;
  if (key != state_.learned_key) {
    // META-KGL on the exploration rows of the finished tasks (each standardized by meta_kgl).
    std::vector<Observations> exploration;
    std::vector<int> from;
    for (std::size_t i = 0; i < key.size(); i += 2) {
      const auto t = static_cast<std::size_t>(key[i]);
      const std::vector<Eigen::Index> rows = t < data.exploration.size() ? data.exploration[t] : std::vector<Eigen::Index>{};
      exploration.push_back({data.tasks[t].X(rows, Eigen::all), data.tasks[t].y(rows)});
      from.push_back(static_cast<int>(t));
    }
    const MetaKglResult learned = meta_kgl(*dictionary_, exploration, seed, options_.meta);
    kernel_changed = learned.active != state_.active;
    state_.active = learned.active;
    state_.learned_from = from;
    state_.learned_key = key;
    state_.lambda = learned.lambda;
    state_.lambda_max = learned.lambda_max;
    state_.group_norms.assign(learned.group_norms.data(), learned.group_norms.data() + learned.group_norms.size());
  }
  const bool mixing = options_.full_share && !state_.active.empty();
  const CombinedKernel learned(dictionary_, state_.active), full(dictionary_, {});
  const std::size_t tasks = data.tasks.size();
  state_.gp.theta.resize(std::max(state_.gp.theta.size(), tasks));
  state_.gp.fitted_sizes.resize(std::max(state_.gp.fitted_sizes.size(), tasks), -1);
  state_.task_kernels.resize(std::max(state_.task_kernels.size(), tasks));
  state_.plain.theta.resize(std::max(state_.plain.theta.size(), tasks));
  state_.plain.fitted_sizes.resize(std::max(state_.plain.fitted_sizes.size(), tasks), -1);
  for (std::vector<double>* loo : {&state_.loo_learned, &state_.loo_plain}) {
    loo->resize(std::max(loo->size(), tasks), std::numeric_limits<double>::quiet_NaN());
  }
  posteriors_.resize(tasks);
  kernels_.resize(tasks);
  plain_.resize(std::max(plain_.size(), tasks), GaussianProcess(options_.gp));
  for (std::size_t t = 0; t < tasks; ++t) {
    const Observations& o = data.tasks[t];
    if (o.y.size() == 0) {
      posteriors_[t].reset();
      continue;
    }
    // A finished task keeps the kernel it ran with: it proposes nothing more.
    const bool finished = t < data.finished.size() && data.finished[t];
    if (posteriors_[t] && state_.gp.fitted_sizes[t] == o.y.size() && (!kernel_changed || finished)) continue;
    const Standardization s = Standardization::of(o.y);
    const Eigen::VectorXd z = s.apply(o.y);
    const Eigen::MatrixXd K = learned.gram(o.X, o.X);
    const Eigen::MatrixXd K_full = mixing ? full.gram(o.X, o.X) : Eigen::MatrixXd();
    const std::vector<double> theta = fit_theta(K, mixing ? &K_full : nullptr, z, state_.gp.theta[t], seed + 7919 * t, options_);
    kernels_[t] = kernel_for(theta);
    posteriors_[t] = make_fixed_kernel_posterior(kernels_[t], o.X, z, Eigen::Vector2d(theta[0], theta[1]), s);
    state_.gp.theta[t] = theta;
    state_.gp.fitted_sizes[t] = o.y.size();
    switch_gp(o, z, t, true, seed);
  }
}

void Libo::switch_gp(const Observations& o, const Eigen::VectorXd& z, std::size_t t, bool refit, std::uint64_t seed) {
  const std::vector<double>& theta = state_.gp.theta[t];
  if (refit) {
    // Restored, a task keeps the text it was saved with (a finished one: the k̂ it ran with).
    char share[48] = "";
    if (theta.size() == 3) std::snprintf(share, sizeof share, " (k_full share %.2g)", sigmoid(theta[2]));
    state_.task_kernels[t] = describe_active() + share;
  }
  state_.loo_learned[t] = state_.loo_plain[t] = std::numeric_limits<double>::quiet_NaN();
  if (!options_.gp_switch || o.y.size() < 2) return;
  const std::vector<double>& saved = state_.plain.theta[t];
  if (refit) {
    plain_[t].fit(o, seed + 104729 * t);
  } else if (static_cast<int>(saved.size()) == GpHyperparameters::size(dimension_)) {
    plain_[t].set(o, Eigen::Map<const Eigen::VectorXd>(saved.data(), static_cast<Eigen::Index>(saved.size())));
  } else {
    return;  // restored from a state without the switch: as it ran, until the next fit
  }
  state_.plain.theta[t].assign(plain_[t].theta().data(), plain_[t].theta().data() + plain_[t].theta().size());
  state_.plain.fitted_sizes[t] = o.y.size();
  // z is the k̂ GP's standardized y, and the plain GP standardizes alike: both densities are of z.
  state_.loo_learned[t] = loo_log_predictive(noisy(kernels_[t]->gram(o.X, o.X), theta[0], theta[1]), z);
  state_.loo_plain[t] = loo_log_predictive(o.X, z, plain_[t].theta());
  if (!libo_plain_chosen(state_, t)) return;
  posteriors_[t] = plain_[t].posterior();
  if (!refit) return;
  char text[128];
  std::snprintf(text, sizeof text, "plain GP (leave-one-out log density %.4g > k̂'s %.4g); k̂: ", state_.loo_plain[t],
                state_.loo_learned[t]);
  state_.task_kernels[t] = text + state_.task_kernels[t];
}

bool libo_plain_chosen(const LiboState& state, std::size_t task) {
  // NaN (not compared) is false: the k̂ GP.
  return task < state.loo_plain.size() && task < state.loo_learned.size() &&
         state.loo_plain[task] > state.loo_learned[task];
}

std::shared_ptr<const TaskPosterior> Libo::posterior(int task) const { return task_posterior(posteriors_, task); }

SurrogateState Libo::state() const {
  SurrogateState s;
  s.libo = state_;
  return s;
}

void Libo::restore(const SurrogateState& saved, const TaskData& data) {
  if (!saved.libo) throw NumericalError("libo: the saved state is not LiBO's");
  Libo restored(dimension_, options_, dictionary_);
  restored.state_ = *saved.libo;
  LiboState& l = restored.state_;
  for (int j : l.active) {
    if (j < 0 || j >= dictionary_->size()) {
      throw NumericalError("libo: the saved kernel " + std::to_string(j) + " is not in the dictionary of " +
                           std::to_string(dictionary_->size()));
    }
  }
  const std::size_t tasks = std::max(data.tasks.size(), l.gp.theta.size());
  l.gp.theta.resize(tasks);
  l.gp.fitted_sizes.resize(tasks, -1);
  l.task_kernels.resize(std::max(l.task_kernels.size(), tasks));
  l.plain.theta.resize(tasks);
  l.plain.fitted_sizes.resize(tasks, -1);
  for (std::vector<double>* loo : {&l.loo_learned, &l.loo_plain}) loo->resize(tasks, std::numeric_limits<double>::quiet_NaN());
  restored.posteriors_.resize(data.tasks.size());
  restored.kernels_.resize(data.tasks.size());
  restored.plain_.assign(tasks, GaussianProcess(options_.gp));
  for (std::size_t t = 0; t < data.tasks.size(); ++t) {
    const Observations& o = data.tasks[t];
    const std::vector<double>& theta = l.gp.theta[t];
    if (o.y.size() == 0 || theta.size() < 2 || theta.size() > 3) continue;
    // The data as they are now with the saved θ, as GpSurrogate::restore: the next fit refits
    // a task whose size differs from its fitted one. A finished task that ran with an earlier
    // k̂ is rebuilt with the current one (it proposes nothing; only reports read it).
    const Standardization s = Standardization::of(o.y);
    const Eigen::VectorXd z = s.apply(o.y);
    restored.kernels_[t] = restored.kernel_for(theta);
    restored.posteriors_[t] =
        make_fixed_kernel_posterior(restored.kernels_[t], o.X, z, Eigen::Vector2d(theta[0], theta[1]), s);
    const std::int64_t fitted = l.plain.fitted_sizes[t];
    restored.switch_gp(o, z, t, false, 0);
    l.plain.fitted_sizes[t] = fitted;
  }
  *this = std::move(restored);
}

}  // namespace lbo::surrogate
