#pragma once
// LiBO's dictionary of base kernels on the unit box (Kassraie et al., "Lifelong Bandit
// Optimization", §3: a large set {k_1 … k_p} with k_j(x, x') ≤ 1, of which the task family's
// kernel k* is a sparse combination), and the combination k̂ = (1/|Ĵ|) Σ_{j∈Ĵ} k_j of an active
// set (paper eq. for k̂_s).

#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <vector>

namespace lbo::surrogate {

enum class KernelFamily : std::uint8_t { matern52, rbf, cosine };

const char* to_string(KernelFamily family);

/// One base kernel. Stationary ones (matern52, rbf) have unit variance, so k(x, x) = 1, and read
/// the inputs `dims` with one length-scale; a cosine kernel is the rank-one k(x, x') = φ(x) φ(x')
/// with φ(x) = Π_i cos(f_i π x_{dims_i}) (the paper's App. G.1 bases), so |k| ≤ 1.
struct BaseKernel {
  KernelFamily family = KernelFamily::matern52;
  std::vector<int> dims;         ///< the input dimensions it reads
  double lengthscale = 1;        ///< matern52, rbf
  std::vector<int> frequencies;  ///< cosine: one per entry of dims

  /// A: n × d, B: m × d → n × m.
  Eigen::MatrixXd gram(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) const;
  /// ∂k(x, b_i)/∂x for the rows b_i of B (m × d): d × m.
  Eigen::MatrixXd gradient(const Eigen::VectorXd& x, const Eigen::MatrixXd& B) const;
  /// k(a, a) for each row a of A: n (1 for matern52 and rbf, φ(a)² for a cosine).
  Eigen::VectorXd diagonal(const Eigen::MatrixXd& A) const;
  /// d k(x, x)/dx: length d (0 for matern52 and rbf).
  Eigen::VectorXd diagonal_gradient(const Eigen::VectorXd& x) const;
  /// "matern52(x0,x1; l=0.25)", "rbf(x2; l=0.1)", "cos(3πx0)·cos(1πx1)".
  std::string name() const;
};

/// The base kernels for inputs of `dimension` d, and combinations of them.
class KernelDictionary {
 public:
  KernelDictionary() = default;
  explicit KernelDictionary(std::vector<BaseKernel> kernels);

  /// The dictionary lbo uses (p ≥ 50 for every d):
  ///  - Matérn-5/2 and RBF over 8 length-scales (0.03 … 4, doubling, times √|group|) on each
  ///    dimension alone and on all dimensions together: 16 (d + 1) kernels (16 for d = 1);
  ///  - for d = 1 the first 50 cosine bases cos(jπx), for d = 2 the 100 products
  ///    cos(iπx₁) cos(jπx₂), i, j = 1 … 10 (the paper's synthetic and AutoML settings).
  static KernelDictionary standard(int dimension);

  int size() const { return static_cast<int>(kernels_.size()); }
  const BaseKernel& kernel(int j) const { return kernels_[static_cast<std::size_t>(j)]; }
  const std::vector<BaseKernel>& kernels() const { return kernels_; }

  /// k̂(A, B) = (1/|active|) Σ_{j∈active} k_j(A, B): n × m. Every entry of `active` must be a
  /// valid index; an empty set is the uniform combination k_full of all kernels.
  Eigen::MatrixXd combined(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B, const std::vector<int>& active) const;
  /// ∂k̂(x, b_i)/∂x: d × m.
  Eigen::MatrixXd combined_gradient(const Eigen::VectorXd& x, const Eigen::MatrixXd& B,
                                    const std::vector<int>& active) const;
  /// k̂(a, a) for each row a of A: n.
  Eigen::VectorXd combined_diagonal(const Eigen::MatrixXd& A, const std::vector<int>& active) const;
  /// d k̂(x, x)/dx: length d.
  Eigen::VectorXd combined_diagonal_gradient(const Eigen::VectorXd& x, const std::vector<int>& active) const;

 private:
  std::vector<int> all_or(const std::vector<int>& active) const;

  std::vector<BaseKernel> kernels_;
};

}  // namespace lbo::surrogate
