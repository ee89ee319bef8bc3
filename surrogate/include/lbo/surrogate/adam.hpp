#pragma once
// Adam (Kingma & Ba 2015), the optimizer LBO's ELBO is maximized with. Hand-written: the C++
// optimizer libraries in Debian are tied to Armadillo (ensmallen, not packaged here) or offer
// only deterministic methods (LBFGSpp); the update is a few lines on Eigen vectors.

#include <Eigen/Core>
#include <cmath>

namespace lbo::surrogate {

class Adam {
 public:
  /// `learning_rates` holds one step size per coordinate (groups of parameters that move at
  /// different speeds, as LBO's network weights and its gates).
  explicit Adam(Eigen::VectorXd learning_rates, double beta1 = 0.9, double beta2 = 0.999, double epsilon = 1e-8)
      : m_(Eigen::VectorXd::Zero(learning_rates.size())),
        v_(Eigen::VectorXd::Zero(learning_rates.size())),
        rates_(std::move(learning_rates)),
        beta1_(beta1),
        beta2_(beta2),
        epsilon_(epsilon) {}
  Adam(Eigen::Index size, double learning_rate) : Adam(Eigen::VectorXd::Constant(size, learning_rate)) {}

  /// One step of descent on `x` along `gradient` (of the loss being minimized), with every step
  /// size multiplied by `scale` (a schedule).
  void step(Eigen::VectorXd& x, const Eigen::VectorXd& gradient, double scale = 1.0) {
    ++t_;
    m_ = beta1_ * m_ + (1 - beta1_) * gradient;
    v_ = beta2_ * v_ + (1 - beta2_) * gradient.cwiseAbs2();
    const double correction1 = 1 - std::pow(beta1_, t_), correction2 = 1 - std::pow(beta2_, t_);
    // (m / c1) / (√(v / c2) + ε) = (√c2 / c1) m / (√v + ε √c2): the bias corrections folded into
    // scalars (Kingma & Ba's "more efficient order", exact): one division per coordinate, not three.
    const double root2 = std::sqrt(correction2);
    x.array() -= (scale * root2 / correction1) * rates_.array() * m_.array() / (v_.array().sqrt() + epsilon_ * root2);
  }

 private:
  Eigen::VectorXd m_, v_, rates_;
  double beta1_, beta2_, epsilon_;
  int t_ = 0;
};

}  // namespace lbo::surrogate
