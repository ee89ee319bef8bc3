#include "lbo/surrogate/gp.hpp"

#include <LBFGSB.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "lbo/surrogate/linalg.hpp"

namespace lbo::surrogate {

namespace {

constexpr double kSqrt5 = 2.2360679774997896964;
constexpr double kLog2Pi = 1.8378770664093454836;

// Scaled squared distances r² between rows of A and B, and the per-dimension terms when asked.
Eigen::MatrixXd scaled_sq_dist(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, const Eigen::VectorXd& inv_ls) {
  const Eigen::MatrixXd As = A * inv_ls.asDiagonal();
  const Eigen::MatrixXd Bs = B * inv_ls.asDiagonal();
  Eigen::MatrixXd r2 = -2.0 * As * Bs.transpose();
  r2.colwise() += As.rowwise().squaredNorm();
  r2.rowwise() += Bs.rowwise().squaredNorm().transpose();
  return r2.cwiseMax(0.0);
}

// The basis part of the kernel, 1 + (s²/k) G_A G_Bᵀ, added to `K` (nothing without a basis).
void add_basis_kernel(Eigen::MatrixXd& K, const Eigen::MatrixXd& GA, const Eigen::MatrixXd& GB, double basis_scale) {
  K.array() += 1.0;
  K.noalias() += basis_scale * GA * GB.transpose();
}

// s²/k from θ (0 without a basis).
double basis_scale_of(const Eigen::VectorXd& theta, int dimension, const MeanBasis* basis) {
  if (basis == nullptr) return 0.0;
  return std::exp(theta(dimension + 2)) / basis->size();
}

// Calls f(first, count) on consecutive blocks of `rows` rows, on this thread's OpenMP threads
// when there are several blocks: a batch predicts at thousands of running trials and tracks
// a thousand candidates at each rebuild, and the triangular solve there (O(n²) a row) took
// most of a rebuild at 2,000 workers; Eigen parallelizes no triangular solve. The blocks do
// not depend on the thread count, so the results do not either.
template <class F>
void in_row_blocks(Eigen::Index rows, const F& f) {
  constexpr Eigen::Index kBlock = 256;
  const Eigen::Index blocks = (rows + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) if (blocks > 1)
  for (Eigen::Index b = 0; b < blocks; ++b) f(b * kBlock, std::min(kBlock, rows - b * kBlock));
}

class GpTracked;

// The GP posterior: K + σ_n²I = LLᵀ over the training points; new observations extend L.
class GpPosterior final : public TaskPosterior {
 public:
  GpPosterior(Eigen::MatrixXd X, Eigen::VectorXd y, Eigen::VectorXd theta, Eigen::MatrixXd L, Standardization s,
              std::shared_ptr<const MeanBasis> basis, Eigen::MatrixXd G)
      : TaskPosterior(s),
        X_(std::move(X)),
        y_(std::move(y)),
        theta_(std::move(theta)),
        L_(std::move(L)),
        basis_(std::move(basis)),
        G_(std::move(G)) {
    const int d = static_cast<int>(X_.cols());
    inv_ls_ = (-theta_.head(d)).array().exp();
    signal_ = std::exp(theta_(d));
    noise_ = std::exp(theta_(d + 1));
    basis_scale_ = basis_scale_of(theta_, d, basis_.get());
    alpha_ = L_.triangularView<Eigen::Lower>().transpose().solve(L_.triangularView<Eigen::Lower>().solve(y_));
  }

  int dimension() const override { return static_cast<int>(X_.cols()); }

  Posterior predict(const Eigen::MatrixXd& Xs) const override {
    Posterior p;
    p.mean.resize(Xs.rows());
    p.var.resize(Xs.rows());
    in_row_blocks(Xs.rows(), [&](Eigen::Index first, Eigen::Index count) {
      const Eigen::MatrixXd X = Xs.middleRows(first, count);
      Eigen::MatrixXd Ks = matern52(X, X_, theta_);  // count × n
      Eigen::VectorXd prior = Eigen::VectorXd::Constant(count, signal_);
      if (basis_) {
        const Eigen::MatrixXd Gs = basis_->values(X);
        add_basis_kernel(Ks, Gs, G_, basis_scale_);
        prior.array() += 1.0 + basis_scale_ * Gs.rowwise().squaredNorm().array();
      }
      p.mean.segment(first, count) = Ks * alpha_;
      const Eigen::MatrixXd v = L_.triangularView<Eigen::Lower>().solve(Ks.transpose());
      p.var.segment(first, count) = (prior - v.colwise().squaredNorm().transpose()).cwiseMax(1e-12);
    });
    return p;
  }

  PointPosterior predict_with_gradient(const Eigen::VectorXd& x) const override {
    // k_j = σ²(1 + √5r + 5r²/3)e^{−√5r};  ∂k_j/∂x = −(5/3)σ²(1 + √5r)e^{−√5r} (x − X_j)/ℓ².
    const Eigen::MatrixXd diff = (-X_).rowwise() + x.transpose();  // n × d: x − X_j
    const Eigen::VectorXd r = (diff * inv_ls_.asDiagonal()).rowwise().norm();
    const Eigen::ArrayXd e = (-kSqrt5 * r.array()).exp();
    Eigen::VectorXd k = (signal_ * (1.0 + kSqrt5 * r.array() + 5.0 / 3.0 * r.array().square()) * e).matrix();
    const Eigen::VectorXd g = (-5.0 / 3.0 * signal_ * (1.0 + kSqrt5 * r.array()) * e).matrix();
    Eigen::MatrixXd dk = g.asDiagonal() * diff * inv_ls_.array().square().matrix().asDiagonal();  // n × d
    double prior = signal_;
    Eigen::VectorXd d_prior = Eigen::VectorXd::Zero(x.size());
    if (basis_) {
      // Basis part: k_j += 1 + (s²/k) g(x)ᵀ G_j, prior += 1 + (s²/k) ‖g(x)‖².
      Eigen::MatrixXd J;
      const Eigen::VectorXd gx = basis_->value(x, J);
      k.array() += 1.0;
      k.noalias() += basis_scale_ * G_ * gx;
      dk.noalias() += basis_scale_ * G_ * J;
      prior += 1.0 + basis_scale_ * gx.squaredNorm();
      d_prior = 2.0 * basis_scale_ * J.transpose() * gx;
    }
    PointPosterior p;
    p.mean = k.dot(alpha_);
    p.d_mean = dk.transpose() * alpha_;
    const Eigen::VectorXd kinv_k =
        L_.triangularView<Eigen::Lower>().transpose().solve(L_.triangularView<Eigen::Lower>().solve(k));
    p.var = std::max(prior - k.dot(kinv_k), 1e-12);
    p.d_var = d_prior - 2.0 * dk.transpose() * kinv_k;
    return p;
  }

  std::unique_ptr<TrackedPosterior> track(const Eigen::MatrixXd& C) const override;

  std::shared_ptr<const TaskPosterior> condition(const Eigen::MatrixXd& Xn, const Eigen::VectorXd* y) const override {
    const Eigen::Index n = X_.rows(), m = Xn.rows();
    // The kernel over the old and new points is [[K, B], [Bᵀ, C]]; its factor extends L_.
    const Eigen::MatrixXd Gn = basis_ ? basis_->values(Xn) : Eigen::MatrixXd(m, 0);
    Eigen::MatrixXd B = matern52(X_, Xn, theta_);
    Eigen::MatrixXd C = matern52(Xn, Xn, theta_);
    if (basis_) {
      add_basis_kernel(B, G_, Gn, basis_scale_);
      add_basis_kernel(C, Gn, Gn, basis_scale_);
    }
    C.diagonal().array() += noise_;
    Eigen::MatrixXd L = extend_cholesky(L_, B, C);
    Eigen::MatrixXd X(n + m, X_.cols());
    X << X_, Xn;
    Eigen::MatrixXd G(n + m, G_.cols());
    G << G_, Gn;
    Eigen::VectorXd yy(n + m);
    yy << y_, (y != nullptr ? *y : predict(Xn).mean);
    return std::make_shared<GpPosterior>(std::move(X), std::move(yy), theta_, std::move(L), standardization(), basis_,
                                         std::move(G));
  }

 private:
  Eigen::MatrixXd X_;
  Eigen::VectorXd y_;
  Eigen::VectorXd theta_;
  Eigen::MatrixXd L_;
  std::shared_ptr<const MeanBasis> basis_;  // null: the plain GP
  Eigen::MatrixXd G_;                       // the basis at X_ (n × k; n × 0 without one)
  Eigen::VectorXd alpha_;
  Eigen::VectorXd inv_ls_;
  double signal_ = 1, noise_ = 1e-2, basis_scale_ = 0;

  friend class GpTracked;  // starts from these members
};

// A GP posterior at fixed points C as observations join one at a time: the Cholesky factor L of
// K + σ_n²I over the m observations grows by a row per point, and with it V = L⁻¹ K(X, C) and
// β = L⁻¹ y, so that mean(C) = Vᵀβ and var(C) = prior − ‖V_c‖². A new point costs one forward
// solve (O(m²)) and one row of V (O(m n)); a changed value, one solve below it and O(m n).
// Storage grows by doubling (no m² copy per point). The same algebra as GpPosterior::condition.
class GpTracked final : public TrackedPosterior {
 public:
  GpTracked(const GpPosterior& p, const Eigen::MatrixXd& C)
      : theta_(p.theta_),
        basis_(p.basis_),
        C_(C),
        m_(p.X_.rows()),
        signal_(p.signal_),
        noise_(p.noise_),
        basis_scale_(p.basis_scale_) {
    const Eigen::MatrixXd &X = p.X_, &G = p.G_, &L = p.L_;
    const Eigen::VectorXd& y = p.y_;
    GC_ = basis_ ? basis_->values(C_) : Eigen::MatrixXd(C_.rows(), 0);
    reserve(m_ + 16);
    X_.topRows(m_) = X;
    G_.topRows(m_) = G;
    L_.topLeftCorner(m_, m_) = L;
    y_.head(m_) = y;
    in_row_blocks(C_.rows(), [&](Eigen::Index first, Eigen::Index count) {
      const Eigen::MatrixXd Kc = kernel(C_.middleRows(first, count), GC_.middleRows(first, count), X, G);  // count × m
      Vt_.block(first, 0, count, m_) = L.triangularView<Eigen::Lower>().solve(Kc.transpose()).transpose();
    });
    beta_.head(m_) = L.triangularView<Eigen::Lower>().solve(y);
    prior_ = Eigen::VectorXd::Constant(C_.rows(), signal_);
    if (basis_) prior_.array() += 1.0 + basis_scale_ * GC_.rowwise().squaredNorm().array();
    current_.mean = Vt_.leftCols(m_) * beta_.head(m_);
    var_ = prior_ - Vt_.leftCols(m_).rowwise().squaredNorm();
    current_.var = var_.cwiseMax(1e-12);
  }

  double mean_at(const Eigen::VectorXd& x) const override {
    const Eigen::VectorXd l = solve_for(x, nullptr);
    return l.dot(beta_.head(m_));
  }

  int add(const Eigen::VectorXd& x, const double* y) override {
    Eigen::MatrixXd gx;
    const Eigen::VectorXd l = solve_for(x, &gx);
    const double prior = signal_ + (basis_ ? 1.0 + basis_scale_ * gx.squaredNorm() : 0.0);
    // As robust_cholesky would: a point on top of another keeps a positive pivot.
    const double pivot = std::sqrt(std::max(prior + noise_ - l.squaredNorm(), 1e-10));
    const double mean = l.dot(beta_.head(m_));
    const double value = y != nullptr ? *y : mean;
    const Eigen::MatrixXd xrow = x.transpose();
    const Eigen::VectorXd kc = kernel(C_, GC_, xrow, gx).col(0);
    const Eigen::VectorXd v = (kc - Vt_.leftCols(m_) * l) / pivot;
    if (m_ == X_.rows()) reserve(2 * m_);
    X_.row(m_) = xrow;
    if (basis_) G_.row(m_) = gx;
    L_.row(m_).head(m_) = l.transpose();
    L_(m_, m_) = pivot;
    Vt_.col(m_) = v;
    y_(m_) = value;
    beta_(m_) = (value - mean) / pivot;
    current_.mean += beta_(m_) * v;
    var_ -= v.cwiseAbs2();
    current_.var = var_.cwiseMax(1e-12);
    return static_cast<int>(m_++) - static_cast<int>(first_added_);
  }

  void set_value(int index, double y) override {
    const Eigen::Index r = first_added_ + index;
    const double delta = y - y_(r);
    y_(r) = y;
    // β changes by L⁻¹(δ e_r), which is zero above r.
    Eigen::VectorXd z = Eigen::VectorXd::Zero(m_ - r);
    z(0) = delta;
    L_.block(r, r, m_ - r, m_ - r).triangularView<Eigen::Lower>().solveInPlace(z);
    beta_.segment(r, m_ - r) += z;
    current_.mean += Vt_.middleCols(r, m_ - r) * z;
  }

 private:
  // K(A, B) with the basis part; GA, GB the basis at A and B (n × 0 without one).
  Eigen::MatrixXd kernel(const Eigen::MatrixXd& A, const Eigen::MatrixXd& GA, const Eigen::MatrixXd& B,
                         const Eigen::MatrixXd& GB) const {
    Eigen::MatrixXd K = matern52(A, B, theta_);
    if (basis_) add_basis_kernel(K, GA, GB, basis_scale_);
    return K;
  }

  // l = L⁻¹ k(X, x); the basis at x in *gx when asked. A batch asks for the mean at a point and
  // then adds it: the last answer is kept for that (O(m²), and the basis's other posteriors).
  Eigen::VectorXd solve_for(const Eigen::VectorXd& x, Eigen::MatrixXd* gx) const {
    if (last_m_ != m_ || last_x_.size() != x.size() || last_x_ != x) {
      const Eigen::MatrixXd xrow = x.transpose();
      last_g_ = basis_ ? basis_->values(xrow) : Eigen::MatrixXd(1, 0);
      last_l_ = kernel(X_.topRows(m_), G_.topRows(m_), xrow, last_g_).col(0);
      L_.topLeftCorner(m_, m_).triangularView<Eigen::Lower>().solveInPlace(last_l_);
      last_x_ = x;
      last_m_ = m_;
    }
    if (gx != nullptr) *gx = last_g_;
    return last_l_;
  }

  void reserve(Eigen::Index capacity) {
    const auto grow = [&](Eigen::MatrixXd& M, Eigen::Index rows, Eigen::Index cols) {
      Eigen::MatrixXd bigger = Eigen::MatrixXd::Zero(rows, cols);
      bigger.topLeftCorner(M.rows(), M.cols()) = M;
      M.swap(bigger);
    };
    grow(X_, capacity, C_.cols());
    grow(G_, capacity, GC_.cols());
    grow(L_, capacity, capacity);
    grow(Vt_, C_.rows(), capacity);
    Eigen::VectorXd y = Eigen::VectorXd::Zero(capacity), beta = Eigen::VectorXd::Zero(capacity);
    y.head(y_.size()) = y_;
    beta.head(beta_.size()) = beta_;
    y_.swap(y);
    beta_.swap(beta);
  }

  Eigen::VectorXd theta_;
  std::shared_ptr<const MeanBasis> basis_;
  Eigen::MatrixXd C_, GC_;          // the tracked points and the basis there
  Eigen::MatrixXd X_, G_, L_, Vt_;  // capacity-sized; the first m_ rows (columns of Vt_) hold data
  Eigen::VectorXd y_, beta_, prior_, var_;
  Eigen::Index m_ = 0;
  Eigen::Index first_added_ = m_;  // the posterior's own observations come first
  mutable Eigen::VectorXd last_x_, last_l_;  // solve_for's last answer, at m = last_m_
  mutable Eigen::MatrixXd last_g_;
  mutable Eigen::Index last_m_ = -1;
  double signal_ = 1, noise_ = 1e-2, basis_scale_ = 0;
};

std::unique_ptr<TrackedPosterior> GpPosterior::track(const Eigen::MatrixXd& C) const {
  return std::make_unique<GpTracked>(*this, C);
}

// K + σ_n²I at X, with the basis part when G is given.
Eigen::MatrixXd noisy_kernel(const Eigen::MatrixXd& X, const Eigen::VectorXd& theta, const Eigen::MatrixXd* G,
                             double basis_scale) {
  const int d = static_cast<int>(X.cols());
  Eigen::MatrixXd K = matern52(X, X, theta);
  if (G != nullptr) add_basis_kernel(K, *G, *G, basis_scale);
  K.diagonal().array() += std::exp(theta(d + 1));
  return K;
}

}  // namespace

MeanBasis::MeanBasis(std::vector<std::shared_ptr<const TaskPosterior>> functions) : functions_(std::move(functions)) {}

Eigen::MatrixXd MeanBasis::values(const Eigen::MatrixXd& X) const {
  Eigen::MatrixXd G(X.rows(), size());
  for (int j = 0; j < size(); ++j) G.col(j) = functions_[static_cast<std::size_t>(j)]->predict(X).mean;
  return G;
}

Eigen::VectorXd MeanBasis::value(const Eigen::VectorXd& x, Eigen::MatrixXd& jacobian) const {
  Eigen::VectorXd g(size());
  jacobian.resize(size(), x.size());
  for (int j = 0; j < size(); ++j) {
    const PointPosterior p = functions_[static_cast<std::size_t>(j)]->predict_with_gradient(x);
    g(j) = p.mean;
    jacobian.row(j) = p.d_mean.transpose();
  }
  return g;
}

Eigen::VectorXd GpHyperparameters::defaults(int dimension, bool basis) {
  Eigen::VectorXd theta(size(dimension, basis));
  theta.head(dimension).setConstant(std::log(0.5));
  theta(dimension) = 0.0;
  theta(dimension + 1) = std::log(1e-2);
  if (basis) theta(dimension + 2) = 0.0;
  return theta;
}

Eigen::VectorXd GpHyperparameters::lower(int dimension, bool basis) {
  Eigen::VectorXd b(size(dimension, basis));
  b.head(dimension).setConstant(std::log(0.01));
  b(dimension) = std::log(0.01);
  b(dimension + 1) = std::log(1e-6);
  if (basis) b(dimension + 2) = std::log(1e-3);
  return b;
}

Eigen::VectorXd GpHyperparameters::upper(int dimension, bool basis) {
  Eigen::VectorXd b(size(dimension, basis));
  b.head(dimension).setConstant(std::log(100.0));
  b(dimension) = std::log(100.0);
  b(dimension + 1) = std::log(2.0);
  if (basis) b(dimension + 2) = std::log(100.0);
  return b;
}

Eigen::MatrixXd matern52(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, const Eigen::VectorXd& theta) {
  const int d = static_cast<int>(A.cols());
  const Eigen::VectorXd inv_ls = (-theta.head(d)).array().exp();
  const double signal = std::exp(theta(d));
  const Eigen::ArrayXXd r = scaled_sq_dist(A, B, inv_ls).array().sqrt();
  return (signal * (1.0 + kSqrt5 * r + 5.0 / 3.0 * r.square()) * (-kSqrt5 * r).exp()).matrix();
}

GpObjective gp_objective(const Eigen::MatrixXd& X, const Eigen::VectorXd& y, const Eigen::VectorXd& theta,
                         bool with_prior, const Eigen::MatrixXd* G) {
  const int d = static_cast<int>(X.cols());
  const Eigen::Index n = X.rows();
  const Eigen::VectorXd inv_ls = (-theta.head(d)).array().exp();
  const double signal = std::exp(theta(d)), noise = std::exp(theta(d + 1));
  const Eigen::ArrayXXd r = scaled_sq_dist(X, X, inv_ls).array().sqrt();
  const Eigen::ArrayXXd e = (-kSqrt5 * r).exp();
  Eigen::MatrixXd K = (signal * (1.0 + kSqrt5 * r + 5.0 / 3.0 * r.square()) * e).matrix();
  const Eigen::MatrixXd Kf = K;
  Eigen::MatrixXd Kb;  // (s²/k) G Gᵀ, the part that scales with s²
  if (G != nullptr && G->cols() > 0) {
    Kb = std::exp(theta(d + 2)) / static_cast<double>(G->cols()) * (*G) * G->transpose();
    K += Kb;
    K.array() += 1.0;
  }
  K.diagonal().array() += noise;
  const Eigen::LLT<Eigen::MatrixXd> llt = robust_cholesky(K);
  const Eigen::VectorXd alpha = llt.solve(y);

  GpObjective out;
  out.value = -0.5 * y.dot(alpha) - llt.matrixLLT().diagonal().array().log().sum() - 0.5 * static_cast<double>(n) * kLog2Pi;
  // ∂/∂θ_j = ½ tr(W ∂K/∂θ_j), W = ααᵀ − K⁻¹.
  const Eigen::MatrixXd W = alpha * alpha.transpose() - llt.solve(Eigen::MatrixXd::Identity(n, n));
  out.gradient.resize(theta.size());
  // ∂K/∂log ℓᵢ = (5/3)σ²(1 + √5r)e^{−√5r} (Δᵢ/ℓᵢ)², elementwise.
  const Eigen::ArrayXXd common = W.array() * (5.0 / 3.0 * signal * (1.0 + kSqrt5 * r) * e);
  for (int i = 0; i < d; ++i) {
    const Eigen::VectorXd xi = X.col(i) * inv_ls(i);
    Eigen::MatrixXd delta2 = -2.0 * xi * xi.transpose();
    delta2.colwise() += xi.cwiseAbs2();
    delta2.rowwise() += xi.cwiseAbs2().transpose();
    out.gradient(i) = 0.5 * (common * delta2.array().cwiseMax(0.0)).sum();
  }
  out.gradient(d) = 0.5 * W.cwiseProduct(Kf).sum();
  out.gradient(d + 1) = 0.5 * noise * W.trace();
  if (Kb.size() > 0) out.gradient(d + 2) = 0.5 * W.cwiseProduct(Kb).sum();
  if (with_prior) {
    // Gamma(a=3, b=6) on ℓ in log space: log p(log ℓ) = a log ℓ − bℓ (+ const).
    for (int i = 0; i < d; ++i) {
      const double ls = std::exp(theta(i));
      out.value += 3.0 * theta(i) - 6.0 * ls;
      out.gradient(i) += 3.0 - 6.0 * ls;
    }
    out.value += -0.5 * theta(d) * theta(d);
    out.gradient(d) += -theta(d);
    const double u = (theta(d + 1) - std::log(1e-2)) / 2.0;
    out.value += -0.5 * u * u;
    out.gradient(d + 1) += -u / 2.0;
    if (Kb.size() > 0) {
      out.value += -0.5 * theta(d + 2) * theta(d + 2);
      out.gradient(d + 2) += -theta(d + 2);
    }
  }
  return out;
}

double loo_log_predictive(const Eigen::MatrixXd& X, const Eigen::VectorXd& y, const Eigen::VectorXd& theta) {
  return loo_log_predictive(noisy_kernel(X, theta, nullptr, 0.0), y);
}

double loo_log_predictive(const Eigen::MatrixXd& covariance, const Eigen::VectorXd& y) {
  const Eigen::Index n = covariance.rows();
  const Eigen::LLT<Eigen::MatrixXd> llt = robust_cholesky(covariance);
  const Eigen::MatrixXd inverse = llt.solve(Eigen::MatrixXd::Identity(n, n));
  const Eigen::VectorXd alpha = inverse * y;
  double total = 0;
  for (Eigen::Index i = 0; i < n; ++i) {
    const double var = 1.0 / inverse(i, i);
    const double residual = alpha(i) * var;
    total += -0.5 * (std::log(var) + kLog2Pi + residual * residual / var);
  }
  return total;
}

namespace {

// The posterior with the basis already evaluated at X (G: n × k, n × 0 without a basis), so a
// fit that evaluated it for the objective does not evaluate it again.
std::shared_ptr<const TaskPosterior> posterior_with(const Eigen::MatrixXd& X, const Eigen::VectorXd& y_standardized,
                                                    const Eigen::VectorXd& theta, Standardization standardization,
                                                    std::shared_ptr<const MeanBasis> basis, Eigen::MatrixXd G) {
  const int d = static_cast<int>(X.cols());
  if (theta.size() != GpHyperparameters::size(d, basis != nullptr)) {
    throw NumericalError("gp: " + std::to_string(theta.size()) + " hyperparameters for " + std::to_string(d) +
                         " dimensions" + (basis ? " and a basis" : ""));
  }
  const Eigen::LLT<Eigen::MatrixXd> llt =
      robust_cholesky(noisy_kernel(X, theta, basis ? &G : nullptr, basis_scale_of(theta, d, basis.get())));
  return std::make_shared<GpPosterior>(X, y_standardized, theta, llt.matrixL().toDenseMatrix(), standardization,
                                       std::move(basis), std::move(G));
}

}  // namespace

std::shared_ptr<const TaskPosterior> make_gp_posterior(const Eigen::MatrixXd& X, const Eigen::VectorXd& y_standardized,
                                                       const Eigen::VectorXd& theta, Standardization standardization,
                                                       std::shared_ptr<const MeanBasis> basis) {
  if (basis && basis->size() == 0) basis.reset();
  Eigen::MatrixXd G = basis ? basis->values(X) : Eigen::MatrixXd(X.rows(), 0);
  return posterior_with(X, y_standardized, theta, standardization, std::move(basis), std::move(G));
}

BestStart maximize_from_starts(const std::function<GpObjective(const Eigen::VectorXd&)>& objective,
                               const std::vector<Eigen::VectorXd>& starts, const Eigen::VectorXd& lower,
                               const Eigen::VectorXd& upper, int max_iterations) {
  LBFGSpp::LBFGSBParam<double> param;
  param.max_iterations = max_iterations;
  param.epsilon = 1e-5;
  param.max_linesearch = 30;
  const auto negative = [&](const Eigen::VectorXd& t, Eigen::VectorXd& grad) {
    try {
      const GpObjective o = objective(t);
      grad = -o.gradient;
      return -o.value;
    } catch (const NumericalError&) {
      grad.setZero();
      return std::numeric_limits<double>::infinity();
    }
  };
  BestStart best;
  for (const Eigen::VectorXd& start : starts) {
    Eigen::VectorXd theta = start.cwiseMax(lower).cwiseMin(upper);
    double value = 0;
    try {
      LBFGSpp::LBFGSBSolver<double> solver(param);
      solver.minimize(negative, theta, value, lower, upper);
    } catch (const std::exception&) {
      // Line-search failures end this start where it stands; its value is still usable.
      Eigen::VectorXd grad(theta.size());
      value = negative(theta, grad);
    }
    if (std::isfinite(value) && -value > best.value) best = {theta, -value};
  }
  return best;
}

std::vector<Eigen::VectorXd> inner_half_points(const Eigen::VectorXd& lower, const Eigen::VectorXd& upper, int count,
                                               std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Eigen::VectorXd> points;
  for (int i = 0; i < count; ++i) {
    Eigen::VectorXd t(lower.size());
    for (Eigen::Index j = 0; j < t.size(); ++j) {
      const double mid = 0.5 * (lower(j) + upper(j)), half = 0.25 * (upper(j) - lower(j));
      t(j) = std::uniform_real_distribution<double>(mid - half, mid + half)(rng);
    }
    points.push_back(std::move(t));
  }
  return points;
}

void GaussianProcess::set(const Observations& data, const Eigen::VectorXd& theta, std::shared_ptr<const MeanBasis> basis) {
  const Standardization s = options_.standardize ? Standardization::of(data.y) : Standardization{};
  const Eigen::VectorXd z = s.apply(data.y);
  if (basis && basis->size() == 0) basis.reset();
  const Eigen::MatrixXd G = basis ? basis->values(data.X) : Eigen::MatrixXd(data.X.rows(), 0);
  posterior_ = posterior_with(data.X, z, theta, s, basis, G);  // checks θ's length first
  theta_ = theta;
  log_evidence_ = gp_objective(data.X, z, theta_, true, basis ? &G : nullptr).value;
}

void GaussianProcess::fit(const Observations& data, std::uint64_t seed, std::shared_ptr<const MeanBasis> basis) {
  if (basis && basis->size() == 0) basis.reset();
  const bool with_basis = basis != nullptr;
  const int d = static_cast<int>(data.X.cols());
  const Standardization s = options_.standardize ? Standardization::of(data.y) : Standardization{};
  const Eigen::VectorXd z = s.apply(data.y);
  const Eigen::MatrixXd G = with_basis ? basis->values(data.X) : Eigen::MatrixXd(data.X.rows(), 0);
  const Eigen::VectorXd lower = GpHyperparameters::lower(d, with_basis), upper = GpHyperparameters::upper(d, with_basis);

  std::vector<Eigen::VectorXd> starts;
  if (theta_.size() == GpHyperparameters::size(d, with_basis)) starts.push_back(theta_);
  starts.push_back(GpHyperparameters::defaults(d, with_basis));
  for (Eigen::VectorXd& t : inner_half_points(lower, upper, options_.restarts - 1, seed)) starts.push_back(std::move(t));
  const BestStart best = maximize_from_starts(
      [&](const Eigen::VectorXd& t) { return gp_objective(data.X, z, t, true, with_basis ? &G : nullptr); }, starts, lower,
      upper, options_.max_iterations);
  theta_ = std::isfinite(best.value) ? best.theta : starts.front();
  log_evidence_ = best.value;
  posterior_ = posterior_with(data.X, z, theta_, s, std::move(basis), G);
}

}  // namespace lbo::surrogate
