#pragma once
// The pieces of LBO's variational inference over which latent networks a task uses (LBO §2.2):
// the Indian Buffet Process's stick-breaking prior and the Binary Concrete relaxation.

#include <random>
#include <vector>

namespace lbo::surrogate::ibp {

/// π_m = Π_{k≤m} v_k (LBO eq. 5), for sticks v (each in (0, 1)).
std::vector<double> stick_breaking(const std::vector<double>& v);
/// v_k ~ Beta(α, 1) for k = 1..M, by inversion: v = u^{1/α}.
std::vector<double> sample_sticks(int networks, double alpha, std::mt19937_64& rng);
/// E[π_m] = (α / (α + 1))^m, m counted from 1.
double expected_stick(int m, double alpha);

/// Binary Concrete(a, τ) (Maddison et al. 2017; LBO eq. 6–7) on z ∈ (0, 1):
/// z = σ((log a + L)/τ) with L = log u − log(1 − u), u ~ U(0, 1).
double concrete_sample(double log_a, double tau, double u);
/// log density of z under Binary Concrete(a, τ): LBO eq. (6).
double concrete_log_density(double z, double log_a, double tau);
/// log density of y = logit z: a logistic distribution, location log a / τ, scale 1 / τ.
/// KL divergences are the same in either space, and this one stays finite when τ is small.
double logistic_log_density(double y, double log_a, double tau);

/// One-sample estimate of KL(q ‖ p) between Binary Concretes q = BC(γ, τ) and p = BC(a, τ)
/// at the reparameterized sample y = (log γ + L)/τ of q (in logit space), with its derivative
/// w.r.t. log γ (through y).
struct KlEstimate {
  double value = 0;
  double d_log_gamma = 0;
};
KlEstimate concrete_kl(double y, double log_gamma, double log_a_prior, double tau);

}  // namespace lbo::surrogate::ibp
