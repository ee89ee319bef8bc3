#include "lbo/surrogate/kernel_dictionary.hpp"

#include <cmath>
#include <numeric>
#include <sstream>
#include <stdexcept>

namespace lbo::surrogate {

namespace {

const double kSqrt5 = std::sqrt(5.0);

// Squared distances over `dims`, scaled by the length-scale: n × m.
Eigen::MatrixXd scaled_squared_distances(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B,
                                         const std::vector<int>& dims, double lengthscale) {
  Eigen::MatrixXd r2 = Eigen::MatrixXd::Zero(A.rows(), B.rows());
  for (int i : dims) {
    const Eigen::VectorXd a = A.col(i) / lengthscale;
    const Eigen::VectorXd b = B.col(i) / lengthscale;
    r2 += (a.replicate(1, B.rows()) - b.transpose().replicate(A.rows(), 1)).array().square().matrix();
  }
  return r2;
}

// φ(x) = Π_i cos(f_i π x_{dims_i}) at the rows of A: n.
Eigen::VectorXd cosine_feature(const Eigen::MatrixXd& A, const BaseKernel& k) {
  Eigen::VectorXd phi = Eigen::VectorXd::Ones(A.rows());
  for (std::size_t i = 0; i < k.dims.size(); ++i) {
    phi.array() *= (M_PI * k.frequencies[i] * A.col(k.dims[i]).array()).cos();
  }
  return phi;
}

}  // namespace

const char* to_string(KernelFamily family) {
  switch (family) {
    case KernelFamily::matern52: return "matern52";
    case KernelFamily::rbf: return "rbf";
    case KernelFamily::cosine: return "cos";
  }
  return "?";
}

Eigen::MatrixXd BaseKernel::gram(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) const {
  switch (family) {
    case KernelFamily::cosine: return cosine_feature(A, *this) * cosine_feature(B, *this).transpose();
    case KernelFamily::rbf: return (-0.5 * scaled_squared_distances(A, B, dims, lengthscale).array()).exp().matrix();
    case KernelFamily::matern52: {
      const Eigen::ArrayXXd r = scaled_squared_distances(A, B, dims, lengthscale).array().sqrt();
      return ((1.0 + kSqrt5 * r + (5.0 / 3.0) * r.square()) * (-kSqrt5 * r).exp()).matrix();
    }
  }
  throw std::logic_error("BaseKernel: unknown family");
}

Eigen::MatrixXd BaseKernel::gradient(const Eigen::VectorXd& x, const Eigen::MatrixXd& B) const {
  const Eigen::Index d = x.size(), m = B.rows();
  Eigen::MatrixXd g = Eigen::MatrixXd::Zero(d, m);
  if (family == KernelFamily::cosine) {
    const Eigen::VectorXd phi_b = cosine_feature(B, *this);
    for (std::size_t i = 0; i < dims.size(); ++i) {
      // ∂φ/∂x_i = −f_i π sin(f_i π x_i) Π_{l≠i} cos(f_l π x_l)
      double derivative = -M_PI * frequencies[i] * std::sin(M_PI * frequencies[i] * x(dims[i]));
      for (std::size_t l = 0; l < dims.size(); ++l) {
        if (l != i) derivative *= std::cos(M_PI * frequencies[l] * x(dims[l]));
      }
      g.row(dims[i]) += derivative * phi_b.transpose();
    }
    return g;
  }
  const Eigen::RowVectorXd r2 = scaled_squared_distances(x.transpose(), B, dims, lengthscale).row(0);
  // ∂k/∂x_i = s(r) (x_i − b_i)/ℓ² with s = −k for the RBF and
  // s = −(5/3)(1 + √5 r) e^{−√5 r} for Matérn-5/2 (R&W eq. 4.17, differentiated in r).
  Eigen::RowVectorXd s(m);
  for (Eigen::Index k = 0; k < m; ++k) {
    const double r = std::sqrt(r2(k));
    s(k) = family == KernelFamily::rbf ? -std::exp(-0.5 * r2(k))
                                       : -(5.0 / 3.0) * (1.0 + kSqrt5 * r) * std::exp(-kSqrt5 * r);
  }
  const double l2 = lengthscale * lengthscale;
  for (int i : dims) {
    g.row(i) = s.cwiseProduct((x(i) - B.col(i).transpose().array()).matrix()) / l2;
  }
  return g;
}

Eigen::VectorXd BaseKernel::diagonal(const Eigen::MatrixXd& A) const {
  if (family == KernelFamily::cosine) return cosine_feature(A, *this).array().square().matrix();
  return Eigen::VectorXd::Ones(A.rows());
}

Eigen::VectorXd BaseKernel::diagonal_gradient(const Eigen::VectorXd& x) const {
  if (family != KernelFamily::cosine) return Eigen::VectorXd::Zero(x.size());
  // k(x, x) = φ(x)²: its gradient is 2 φ(x) ∇φ(x) = 2 ∂k(x, b)/∂x at b = x.
  return 2.0 * gradient(x, x.transpose()).col(0);
}

std::string BaseKernel::name() const {
  std::ostringstream out;
  if (family == KernelFamily::cosine) {
    for (std::size_t i = 0; i < dims.size(); ++i) {
      out << (i ? "·" : "") << "cos(" << frequencies[i] << "πx" << dims[i] << ")";
    }
    return out.str();
  }
  out << to_string(family) << "(";
  for (std::size_t i = 0; i < dims.size(); ++i) out << (i ? "," : "") << "x" << dims[i];
  out << "; l=" << lengthscale << ")";
  return out.str();
}

KernelDictionary::KernelDictionary(std::vector<BaseKernel> kernels) : kernels_(std::move(kernels)) {}

KernelDictionary KernelDictionary::standard(int dimension) {
  if (dimension < 1) throw std::invalid_argument("KernelDictionary: dimension must be >= 1");
  std::vector<std::vector<int>> groups;
  for (int i = 0; i < dimension; ++i) groups.push_back({i});
  if (dimension > 1) {
    groups.emplace_back(static_cast<std::size_t>(dimension));
    std::iota(groups.back().begin(), groups.back().end(), 0);
  }
  std::vector<BaseKernel> kernels;
  for (const auto& group : groups) {
    for (KernelFamily family : {KernelFamily::matern52, KernelFamily::rbf}) {
      // Distances over g unit-box dimensions grow like √g: so do the length-scales.
      for (double l = 0.03125; l <= 4.0; l *= 2) {
        kernels.push_back({family, group, l * std::sqrt(static_cast<double>(group.size())), {}});
      }
    }
  }
  if (dimension == 1) {
    for (int j = 1; j <= 50; ++j) kernels.push_back({KernelFamily::cosine, {0}, 1, {j}});
  } else if (dimension == 2) {
    for (int i = 1; i <= 10; ++i) {
      for (int j = 1; j <= 10; ++j) kernels.push_back({KernelFamily::cosine, {0, 1}, 1, {i, j}});
    }
  }
  return KernelDictionary(std::move(kernels));
}

std::vector<int> KernelDictionary::all_or(const std::vector<int>& active) const {
  if (!active.empty()) return active;
  std::vector<int> all(kernels_.size());
  std::iota(all.begin(), all.end(), 0);
  return all;
}

Eigen::MatrixXd KernelDictionary::combined(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B,
                                           const std::vector<int>& active) const {
  const std::vector<int> set = all_or(active);
  Eigen::MatrixXd k = Eigen::MatrixXd::Zero(A.rows(), B.rows());
  for (int j : set) k += kernel(j).gram(A, B);
  return k / static_cast<double>(set.size());
}

Eigen::MatrixXd KernelDictionary::combined_gradient(const Eigen::VectorXd& x, const Eigen::MatrixXd& B,
                                                    const std::vector<int>& active) const {
  const std::vector<int> set = all_or(active);
  Eigen::MatrixXd g = Eigen::MatrixXd::Zero(x.size(), B.rows());
  for (int j : set) g += kernel(j).gradient(x, B);
  return g / static_cast<double>(set.size());
}

Eigen::VectorXd KernelDictionary::combined_diagonal(const Eigen::MatrixXd& A, const std::vector<int>& active) const {
  const std::vector<int> set = all_or(active);
  Eigen::VectorXd k = Eigen::VectorXd::Zero(A.rows());
  for (int j : set) k += kernel(j).diagonal(A);
  return k / static_cast<double>(set.size());
}

Eigen::VectorXd KernelDictionary::combined_diagonal_gradient(const Eigen::VectorXd& x,
                                                             const std::vector<int>& active) const {
  const std::vector<int> set = all_or(active);
  Eigen::VectorXd g = Eigen::VectorXd::Zero(x.size());
  for (int j : set) g += kernel(j).diagonal_gradient(x);
  return g / static_cast<double>(set.size());
}

}  // namespace lbo::surrogate
