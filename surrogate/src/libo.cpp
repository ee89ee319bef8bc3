#include "lbo/surrogate/libo.hpp"

#include <LBFGSB.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>

#include "lbo/surrogate/linalg.hpp"

namespace lbo::surrogate {

namespace {

constexpr double kLog2Pi = 1.8378770664093454836;

// Box of θ = [log σ_f², log σ_n²], as GpHyperparameters': σ_f² ∈ [0.01, 100], σ_n² ∈ [1e-6, 2].
const Eigen::Vector2d kLower(std::log(0.01), std::log(1e-6));
const Eigen::Vector2d kUpper(std::log(100.0), std::log(2.0));
const Eigen::Vector2d kDefault(0.0, std::log(1e-2));

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
    // Block Cholesky, as GpPosterior::condition.
    const Eigen::MatrixXd B = signal_ * kernel_->gram(X_, Xn);
    Eigen::MatrixXd C = signal_ * kernel_->gram(Xn, Xn);
    C.diagonal().array() += noise_;
    const Eigen::MatrixXd S = L_.triangularView<Eigen::Lower>().solve(B);
    const Eigen::LLT<Eigen::MatrixXd> schur = robust_cholesky(C - S.transpose() * S);
    Eigen::MatrixXd L = Eigen::MatrixXd::Zero(n + m, n + m);
    L.topLeftCorner(n, n) = L_;
    L.bottomLeftCorner(m, n) = S.transpose();
    L.bottomRightCorner(m, m) = schur.matrixL();
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

Eigen::MatrixXd noisy(const Eigen::MatrixXd& K, const Eigen::Vector2d& theta) {
  Eigen::MatrixXd Kn = std::exp(theta(0)) * K;
  Kn.diagonal().array() += std::exp(theta(1));
  return Kn;
}

// θ maximizing fixed_kernel_objective from the starts: the warm one (when given), the default,
// then random ones in the inner half of the box.
Eigen::Vector2d fit_theta(const Eigen::MatrixXd& K, const Eigen::VectorXd& z, const std::vector<double>& warm,
                          std::uint64_t seed, const LiboOptions& options) {
  std::vector<Eigen::Vector2d> starts;
  if (warm.size() == 2) starts.emplace_back(warm[0], warm[1]);
  starts.push_back(kDefault);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < options.restarts; ++i) {
    Eigen::Vector2d t;
    for (int j = 0; j < 2; ++j) {
      const double mid = 0.5 * (kLower(j) + kUpper(j)), half = 0.25 * (kUpper(j) - kLower(j));
      t(j) = std::uniform_real_distribution<double>(mid - half, mid + half)(rng);
    }
    starts.push_back(t);
  }
  LBFGSpp::LBFGSBParam<double> param;
  param.max_iterations = options.max_iterations;
  param.epsilon = 1e-5;
  param.max_linesearch = 30;
  const Eigen::VectorXd lower = kLower, upper = kUpper;
  double best_value = -std::numeric_limits<double>::infinity();
  Eigen::Vector2d best = starts.front();
  for (const Eigen::Vector2d& start : starts) {
    auto negative = [&](const Eigen::VectorXd& t, Eigen::VectorXd& grad) {
      try {
        const GpObjective o = fixed_kernel_objective(K, z, Eigen::Vector2d(t(0), t(1)));
        grad = -o.gradient;
        return -o.value;
      } catch (const NumericalError&) {
        grad.setZero();
        return std::numeric_limits<double>::infinity();
      }
    };
    Eigen::VectorXd theta = start.cwiseMax(kLower).cwiseMin(kUpper);
    double value = 0;
    try {
      LBFGSpp::LBFGSBSolver<double> solver(param);
      solver.minimize(negative, theta, value, lower, upper);
    } catch (const std::exception&) {
      // A line-search failure ends this start where it stands.
      Eigen::VectorXd grad(2);
      value = negative(theta, grad);
    }
    if (std::isfinite(value) && -value > best_value) {
      best_value = -value;
      best = Eigen::Vector2d(theta(0), theta(1));
    }
  }
  if (!std::isfinite(best_value)) throw NumericalError("libo: no (σ_f², σ_n²) gives a positive definite kernel matrix");
  return best;
}

}  // namespace

GpObjective fixed_kernel_objective(const Eigen::MatrixXd& K, const Eigen::VectorXd& y, const Eigen::Vector2d& theta) {
  const Eigen::Index n = y.size();
  const double signal = std::exp(theta(0)), noise = std::exp(theta(1));
  const Eigen::LLT<Eigen::MatrixXd> llt = robust_cholesky(noisy(K, theta));
  const Eigen::VectorXd alpha = llt.solve(y);
  GpObjective out;
  out.value = -0.5 * y.dot(alpha) - llt.matrixLLT().diagonal().array().log().sum() - 0.5 * static_cast<double>(n) * kLog2Pi;
  // ∂/∂θ_j = ½ tr(W ∂K/∂θ_j), W = ααᵀ − K⁻¹; ∂K/∂log σ_f² = σ_f² K̂, ∂K/∂log σ_n² = σ_n² I.
  const Eigen::MatrixXd W = alpha * alpha.transpose() - llt.solve(Eigen::MatrixXd::Identity(n, n));
  out.gradient.resize(2);
  out.gradient(0) = 0.5 * signal * W.cwiseProduct(K).sum();
  out.gradient(1) = 0.5 * noise * W.trace();
  // The GaussianProcess priors: log σ_f² ~ N(0, 1), log σ_n² ~ N(log 1e-2, 2²).
  out.value += -0.5 * theta(0) * theta(0);
  out.gradient(0) += -theta(0);
  const double u = (theta(1) - std::log(1e-2)) / 2.0;
  out.value += -0.5 * u * u;
  out.gradient(1) += -u / 2.0;
  return out;
}

std::shared_ptr<const TaskPosterior> make_fixed_kernel_posterior(std::shared_ptr<const CombinedKernel> kernel,
                                                                 const Eigen::MatrixXd& X,
                                                                 const Eigen::VectorXd& y_standardized,
                                                                 const Eigen::Vector2d& theta,
                                                                 Standardization standardization) {
  const Eigen::LLT<Eigen::MatrixXd> llt = robust_cholesky(noisy(kernel->gram(X, X), theta));
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
                             : std::make_shared<const KernelDictionary>(KernelDictionary::standard(dimension))) {
  set_kernel();
}

void Libo::set_kernel() { kernel_ = std::make_shared<const CombinedKernel>(dictionary_, state_.active); }

std::string Libo::describe_active() const {
  if (state_.active.empty()) return "k_full";
  std::string text;
  for (int j : state_.active) text += (text.empty() ? "" : " + ") + dictionary_->kernel(j).name();
  return text;
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
    if (kernel_changed) set_kernel();
  }
  const std::size_t tasks = data.tasks.size();
  state_.gp.theta.resize(tasks);
  state_.gp.fitted_sizes.resize(tasks, -1);
  state_.task_kernels.resize(std::max(state_.task_kernels.size(), tasks));
  posteriors_.resize(tasks);
  const std::string kernel_name = describe_active();
  for (std::size_t t = 0; t < tasks; ++t) {
    const Observations& o = data.tasks[t];
    if (o.y.size() == 0) {
      posteriors_[t].reset();
      continue;
    }
    if (!kernel_changed && posteriors_[t] && state_.gp.fitted_sizes[t] == o.y.size()) continue;
    const Standardization s = Standardization::of(o.y);
    const Eigen::VectorXd z = (o.y.array() - s.offset) / s.scale;
    const Eigen::MatrixXd K = kernel_->gram(o.X, o.X);
    const Eigen::Vector2d theta = fit_theta(K, z, state_.gp.theta[t], seed + 7919 * t, options_);
    posteriors_[t] = make_fixed_kernel_posterior(kernel_, o.X, z, theta, s);
    state_.gp.theta[t] = {theta(0), theta(1)};
    state_.gp.fitted_sizes[t] = o.y.size();
    state_.task_kernels[t] = kernel_name;
  }
}

std::shared_ptr<const TaskPosterior> Libo::posterior(int task) const {
  if (task < 0 || static_cast<std::size_t>(task) >= posteriors_.size()) return nullptr;
  return posteriors_[static_cast<std::size_t>(task)];
}

SurrogateState Libo::state() const {
  SurrogateState s;
  s.libo = state_;
  return s;
}

void Libo::restore(const SurrogateState& saved, const TaskData& data) {
  if (!saved.libo) throw NumericalError("libo: the saved state is not LiBO's");
  LiboState l = *saved.libo;
  for (int j : l.active) {
    if (j < 0 || j >= dictionary_->size()) {
      throw NumericalError("libo: the saved kernel " + std::to_string(j) + " is not in the dictionary of " +
                           std::to_string(dictionary_->size()));
    }
  }
  const auto kernel = std::make_shared<const CombinedKernel>(dictionary_, l.active);
  const std::size_t tasks = std::max(data.tasks.size(), l.gp.theta.size());
  l.gp.theta.resize(tasks);
  l.gp.fitted_sizes.resize(tasks, -1);
  l.task_kernels.resize(std::max(l.task_kernels.size(), tasks));
  std::vector<std::shared_ptr<const TaskPosterior>> posteriors(data.tasks.size());
  for (std::size_t t = 0; t < data.tasks.size(); ++t) {
    const Observations& o = data.tasks[t];
    const std::vector<double>& theta = l.gp.theta[t];
    if (o.y.size() == 0 || theta.size() != 2) continue;
    // The data as they are now with the saved θ, as GpSurrogate::restore: the next fit refits
    // a task whose size differs from its fitted one.
    const Standardization s = Standardization::of(o.y);
    const Eigen::VectorXd z = (o.y.array() - s.offset) / s.scale;
    posteriors[t] = make_fixed_kernel_posterior(kernel, o.X, z, Eigen::Vector2d(theta[0], theta[1]), s);
  }
  state_ = std::move(l);
  kernel_ = kernel;
  posteriors_ = std::move(posteriors);
}

}  // namespace lbo::surrogate
