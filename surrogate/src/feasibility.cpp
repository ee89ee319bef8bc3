#include "lbo/surrogate/feasibility.hpp"

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <stdexcept>

namespace lbo::surrogate {

namespace {

constexpr double kSqrt5 = 2.23606797749979;

// log σ(z) without overflow.
double log_sigmoid(double z) { return z >= 0 ? -std::log1p(std::exp(-z)) : z - std::log1p(std::exp(z)); }
double sigmoid(double z) { return z >= 0 ? 1 / (1 + std::exp(-z)) : std::exp(z) / (1 + std::exp(z)); }

// Matérn-5/2 of distance r at lengthscale l, unit variance.
double matern(double r, double l) {
  const double s = kSqrt5 * r / l;
  return (1 + s + s * s / 3) * std::exp(-s);
}

// d m52(‖x − c‖/l)/dx = −(5/(3l²)) (1 + √5 r/l) exp(−√5 r/l) (x − c): smooth at r = 0.
double matern_slope(double r, double l) {
  const double s = kSqrt5 * r / l;
  return -(5.0 / (3 * l * l)) * (1 + s) * std::exp(-s);
}

// The grid the evidence chooses on. Lengthscales grow with √d (the box's diagonal).
constexpr double kLengthscales[] = {0.07, 0.15, 0.3, 0.6};
constexpr double kAmplitudes[] = {2.0, 8.0, 32.0};
constexpr double kCorrelations[] = {0.0, 0.5, 0.9};

// At most kMaxPoints of `data`: every failure up to half (the newest), the successes spread
// evenly over the rest (each the middle of its stretch), in their order.
FeasibilityData subsample(const FeasibilityData& data) {
  const auto n = static_cast<std::size_t>(data.x.rows());
  constexpr auto cap = static_cast<std::size_t>(Feasibility::kMaxPoints);
  if (n <= cap) return data;
  std::vector<std::size_t> failed, succeeded;
  for (std::size_t i = 0; i < n; ++i) (data.ok[i] ? succeeded : failed).push_back(i);
  if (failed.size() > cap / 2) failed.erase(failed.begin(), failed.end() - static_cast<std::ptrdiff_t>(cap / 2));
  const std::size_t spread = std::min(succeeded.size(), cap - failed.size());
  std::vector<std::size_t> kept = failed;
  for (std::size_t i = 0; i < spread; ++i) kept.push_back(succeeded[(2 * i + 1) * succeeded.size() / (2 * spread)]);
  std::sort(kept.begin(), kept.end());
  FeasibilityData out;
  out.x.resize(static_cast<Eigen::Index>(kept.size()), data.x.cols());
  for (std::size_t i = 0; i < kept.size(); ++i) {
    out.x.row(static_cast<Eigen::Index>(i)) = data.x.row(static_cast<Eigen::Index>(kept[i]));
    out.task.push_back(data.task[kept[i]]);
    out.ok.push_back(data.ok[kept[i]]);
  }
  return out;
}

}  // namespace

Feasibility::Feasibility(FeasibilityData data, const FeasibilityHyper& hyper) : data_(std::move(data)), hyper_(hyper) {
  const Eigen::Index n = data_.x.rows();
  if (n == 0 || static_cast<Eigen::Index>(data_.task.size()) != n || static_cast<Eigen::Index>(data_.ok.size()) != n) {
    throw std::invalid_argument("Feasibility: the data need at least one trial, each with a task and a label");
  }
  const auto successes = static_cast<double>(std::count(data_.ok.begin(), data_.ok.end(), 1));
  mean_ = std::log((successes + 1) / (static_cast<double>(n) - successes + 1));
  const Eigen::MatrixXd K = kernel(data_.x, data_.task);
  Eigen::VectorXd t(n);
  for (Eigen::Index i = 0; i < n; ++i) t(i) = data_.ok[static_cast<std::size_t>(i)] ? 1.0 : 0.0;
  // Newton's method on the latent (R&W Algorithm 3.1), f the latent less its mean.
  f_ = Eigen::VectorXd::Zero(n);
  Eigen::VectorXd a = Eigen::VectorXd::Zero(n);
  double objective = -std::numeric_limits<double>::infinity();
  Eigen::LLT<Eigen::MatrixXd> llt;
  const auto likelihood = [&](const Eigen::VectorXd& f) {
    double sum = 0;
    for (Eigen::Index i = 0; i < n; ++i) sum += log_sigmoid((2 * t(i) - 1) * (f(i) + mean_));
    return sum;
  };
  for (int iteration = 0; iteration < 50; ++iteration) {
    Eigen::VectorXd pi(n);
    for (Eigen::Index i = 0; i < n; ++i) pi(i) = sigmoid(f_(i) + mean_);
    const Eigen::VectorXd w = pi.array() * (1 - pi.array());
    const Eigen::VectorXd grad = t - pi;
    const Eigen::VectorXd sw = w.cwiseSqrt();
    Eigen::MatrixXd B = sw.asDiagonal() * K * sw.asDiagonal();
    B.diagonal().array() += 1;
    llt.compute(B);
    const Eigen::VectorXd a_old = a;
    const Eigen::VectorXd b = w.cwiseProduct(f_) + grad;
    Eigen::VectorXd c = llt.matrixL().solve(sw.cwiseProduct(K * b));
    a = b - sw.cwiseProduct(llt.matrixU().solve(c));
    Eigen::VectorXd f = K * a;
    double next = -0.5 * a.dot(f) + likelihood(f);
    // A Newton step that does not climb (rare: the objective is concave) is halved; f = K a
    // stays exact, both being halved alike.
    for (int halving = 0; halving < 30 && next < objective; ++halving) {
      a = 0.5 * (a + a_old);
      f = K * a;
      next = -0.5 * a.dot(f) + likelihood(f);
    }
    f_ = f;
    const bool converged = std::abs(next - objective) <= 1e-10 * (1 + std::abs(next));
    objective = next;
    if (converged) break;
  }
  // At the mode: W, L and ∇ log p for predictions, and the evidence (eq. 3.32).
  Eigen::VectorXd pi(n);
  for (Eigen::Index i = 0; i < n; ++i) pi(i) = sigmoid(f_(i) + mean_);
  sqrt_w_ = (pi.array() * (1 - pi.array())).sqrt();
  gradient_ = t - pi;
  Eigen::MatrixXd B = sqrt_w_.asDiagonal() * K * sqrt_w_.asDiagonal();
  B.diagonal().array() += 1;
  llt.compute(B);
  chol_ = llt.matrixL();
  log_evidence_ = -0.5 * a.dot(f_) + likelihood(f_) - chol_.diagonal().array().log().sum();
}

std::shared_ptr<const Feasibility> Feasibility::fit(const FeasibilityData& data) {
  if (std::find(data.ok.begin(), data.ok.end(), 0) == data.ok.end()) return nullptr;
  FeasibilityData kept = subsample(data);
  const bool several_tasks = std::adjacent_find(kept.task.begin(), kept.task.end(), std::not_equal_to<>()) != kept.task.end();
  const double scale = std::sqrt(static_cast<double>(std::max<Eigen::Index>(1, kept.x.cols())));
  std::shared_ptr<const Feasibility> best;
  for (double l : kLengthscales) {
    for (double amplitude : kAmplitudes) {
      for (double rho : kCorrelations) {
        if (!several_tasks && rho != kCorrelations[0]) continue;
        auto candidate = std::make_shared<const Feasibility>(kept, FeasibilityHyper{l * scale, amplitude, several_tasks ? rho : 1.0});
        if (!best || candidate->log_evidence() > best->log_evidence()) best = std::move(candidate);
      }
    }
  }
  return best;
}

Eigen::MatrixXd Feasibility::kernel(const Eigen::MatrixXd& A, const std::vector<int>& tasks_a) const {
  Eigen::MatrixXd K(A.rows(), data_.x.rows());
  for (Eigen::Index i = 0; i < A.rows(); ++i) {
    for (Eigen::Index j = 0; j < data_.x.rows(); ++j) {
      const double r = (A.row(i) - data_.x.row(j)).norm();
      const bool same = tasks_a[static_cast<std::size_t>(i)] == data_.task[static_cast<std::size_t>(j)];
      K(i, j) = hyper_.amplitude * matern(r, hyper_.lengthscale) * (same ? 1.0 : hyper_.task_correlation);
    }
  }
  return K;
}

std::pair<double, double> Feasibility::latent(const Eigen::VectorXd& x, int task) const {
  const Eigen::VectorXd k = kernel(x.transpose(), {task}).row(0).transpose();
  const Eigen::VectorXd v = chol_.triangularView<Eigen::Lower>().solve(sqrt_w_.cwiseProduct(k));
  return {mean_ + k.dot(gradient_), std::max(0.0, hyper_.amplitude - v.squaredNorm())};
}

// log σ(κ μ), κ = (1 + π V/8)^−½; with the gradient through μ(x) = m + k(x)ᵀ∇log p and
// V(x) = σ_f² − ‖L⁻¹ W^½ k(x)‖²: ∂V/∂x = −2 (W^½ L⁻ᵀ L⁻¹ W^½ k)ᵀ ∂k/∂x.
double Feasibility::log_probability(const Eigen::VectorXd& x, int task, Eigen::VectorXd* gradient) const {
  const Eigen::Index n = data_.x.rows();
  const Eigen::VectorXd k = kernel(x.transpose(), {task}).row(0).transpose();
  const Eigen::VectorXd v = chol_.triangularView<Eigen::Lower>().solve(sqrt_w_.cwiseProduct(k));
  const double mu = mean_ + k.dot(gradient_);
  const double var = std::max(0.0, hyper_.amplitude - v.squaredNorm());
  const double kappa = 1 / std::sqrt(1 + std::numbers::pi * var / 8);
  const double s = kappa * mu;
  if (gradient != nullptr) {
    // ∂k_j/∂x = σ_f² c_j m52'(r_j) (x − x_j), c_j the task factor.
    Eigen::MatrixXd dk(n, x.size());
    for (Eigen::Index j = 0; j < n; ++j) {
      const Eigen::VectorXd diff = x - data_.x.row(j).transpose();
      const bool same = data_.task[static_cast<std::size_t>(j)] == task;
      dk.row(j) = (hyper_.amplitude * (same ? 1.0 : hyper_.task_correlation) *
                   matern_slope(diff.norm(), hyper_.lengthscale) * diff).transpose();
    }
    const Eigen::VectorXd c = sqrt_w_.cwiseProduct(chol_.transpose().triangularView<Eigen::Upper>().solve(v));
    const Eigen::VectorXd d_mu = dk.transpose() * gradient_;
    // V is clamped at 0 only where rounding takes it below: its slope there is V's own.
    const Eigen::VectorXd d_var = -2 * (dk.transpose() * c);
    const double d_kappa = -(std::numbers::pi / 16) * kappa * kappa * kappa;
    *gradient = (1 - sigmoid(s)) * (kappa * d_mu + mu * d_kappa * d_var);
  }
  return log_sigmoid(s);
}

Eigen::VectorXd Feasibility::log_probabilities(const Eigen::MatrixXd& X, int task) const {
  const Eigen::MatrixXd K = kernel(X, std::vector<int>(static_cast<std::size_t>(X.rows()), task));  // m × n
  const Eigen::VectorXd mu = (K * gradient_).array() + mean_;
  const Eigen::MatrixXd V = chol_.triangularView<Eigen::Lower>().solve(sqrt_w_.asDiagonal() * K.transpose());  // n × m
  Eigen::VectorXd out(X.rows());
  for (Eigen::Index i = 0; i < X.rows(); ++i) {
    const double var = std::max(0.0, hyper_.amplitude - V.col(i).squaredNorm());
    out(i) = log_sigmoid(mu(i) / std::sqrt(1 + std::numbers::pi * var / 8));
  }
  return out;
}

int Feasibility::failures() const { return static_cast<int>(std::count(data_.ok.begin(), data_.ok.end(), 0)); }

std::string Feasibility::describe() const {
  char text[200];
  std::snprintf(text, sizeof text, "GP classifier on %d trials (%d failed), lengthscale %.3g, variance %.3g, task correlation %.3g",
                points(), failures(), hyper_.lengthscale, hyper_.amplitude, hyper_.task_correlation);
  return text;
}

Eigen::VectorXd FeasibilityModel::log_probabilities(const Eigen::MatrixXd& X, int task) const {
  Eigen::VectorXd out(X.rows());
  for (Eigen::Index i = 0; i < X.rows(); ++i) out(i) = log_probability(X.row(i).transpose(), task);
  return out;
}

JointFeasibility::JointFeasibility(std::vector<std::shared_ptr<const FeasibilityModel>> parts, std::vector<double> weights)
    : parts_(std::move(parts)), weights_(std::move(weights)) {
  if (std::any_of(parts_.begin(), parts_.end(), [](const auto& p) { return p == nullptr; })) {
    throw std::invalid_argument("JointFeasibility: a part is null");
  }
  if (weights_.empty()) weights_.assign(parts_.size(), 1.0);
  if (weights_.size() != parts_.size() || std::any_of(weights_.begin(), weights_.end(), [](double w) { return !(w > 0); })) {
    throw std::invalid_argument("JointFeasibility: one weight > 0 per part");
  }
}

double JointFeasibility::weighted(const Eigen::VectorXd& x, int task, Eigen::VectorXd* gradient, bool with_weights) const {
  double log = 0;
  if (gradient != nullptr) gradient->setZero(x.size());
  Eigen::VectorXd g;
  for (std::size_t i = 0; i < parts_.size(); ++i) {
    const double w = with_weights ? weights_[i] : 1.0;
    log += w * parts_[i]->log_probability(x, task, gradient != nullptr ? &g : nullptr);
    if (gradient != nullptr) *gradient += w * g;
  }
  return log;
}

double JointFeasibility::log_probability(const Eigen::VectorXd& x, int task, Eigen::VectorXd* gradient) const {
  return weighted(x, task, gradient, false);
}

double JointFeasibility::log_weight(const Eigen::VectorXd& x, int task, Eigen::VectorXd* gradient) const {
  return weighted(x, task, gradient, true);
}

Eigen::VectorXd JointFeasibility::log_probabilities(const Eigen::MatrixXd& X, int task) const {
  Eigen::VectorXd log = Eigen::VectorXd::Zero(X.rows());
  for (const auto& part : parts_) log += part->log_probabilities(X, task);
  return log;
}

Eigen::VectorXd JointFeasibility::log_weights(const Eigen::MatrixXd& X, int task) const {
  Eigen::VectorXd log = Eigen::VectorXd::Zero(X.rows());
  for (std::size_t i = 0; i < parts_.size(); ++i) log += weights_[i] * parts_[i]->log_probabilities(X, task);
  return log;
}

std::string JointFeasibility::describe() const {
  std::string text;
  for (const auto& part : parts_) text += (text.empty() ? "" : "; ") + part->describe();
  return text;
}

}  // namespace lbo::surrogate
