#pragma once
// Lbo (Zhang et al., "Lifelong Bayesian Optimization"): M latent feature maps (MLPs); task t
// uses network m when z_{t,m} = 1, and f_t(x) = Σ_m z_{t,m} h_{t,m}ᵀ φ_{t,m}(x) with the output
// weights h integrated out — a BLR over the concatenated features of the networks in use
// (LBO eqs. 2–4). Which networks a task uses is inferred: an Indian Buffet Process prior
// (stick-breaking, eq. 5) and a mean-field Binary Concrete posterior q(z_{t,m}) (eqs. 6–7),
// fitted with the task's network weights by maximizing the ELBO (eq. 8) with Adam; λ_t, β_t by
// empirical Bayes. A graph regularizer (eq. 9) ties each network's weights for the task to the
// weights it had on earlier tasks that used it, with a strength picked by cross-validation on
// the task's data (§2.4). Only the task's own data train it (§2.3).
//
// The paper's model shares latent functions g_m = h_mᵀφ_m between tasks, each task weighing
// them by a scale s_{t,m}: f_t = Σ_m z_{t,m} s_{t,m} g_m. Its BLR then folds s into a head h_t
// drawn afresh for every task, which throws the earlier heads away: with the 5–10 points a new
// task starts from, a fresh 50-dimensional head cannot find the earlier function's shape even
// on the earlier features. Here each network in use also brings the latent function earlier
// tasks learned with it, g_m(x) = h̄_mᵀφ_{t,m}(x) (h̄_m: their posterior heads, averaged with
// weights q(z_{u,m})), as one more BLR column whose weight is s_{t,m}. This is the prior
// h_{t,m} ~ N(0, λ⁻¹(I + e^{2ρ} h̄_m h̄_mᵀ)), with ρ by empirical Bayes like λ and β: a task
// like the earlier ones fits s ≈ 1 from a few points, one unlike them leaves s near 0 and uses
// h as the paper does. A constant column takes the offset between tasks' levels.

#include <Eigen/Core>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "lbo/surrogate/mlp.hpp"
#include "lbo/surrogate/surrogate.hpp"

namespace lbo::surrogate {

struct LboOptions {
  int networks = 10;                       ///< M, the truncation of the IBP
  std::vector<int> hidden = {50, 50, 50};  ///< each network's layers; the last is D*
  double ibp_alpha = 2.0;                  ///< α: about how many networks a task uses
  double temperature = 0.1;                ///< τ of the Binary Concretes
  int iterations = 600;                    ///< Adam steps of a task's first fit
  int warm_iterations = 200;               ///< Adam steps of a refit, from the previous fit
  double learning_rate = 1e-2;             ///< of the network weights and λ, β
  double gate_learning_rate = 0.1;         ///< of log γ, whose gradient samples are sparse
  double final_rate = 0.1;                 ///< the step sizes decay linearly to this fraction
  double weight_decay = 1e-3;              ///< ½λ‖w‖² on every network's weights
  /// Eq. (9) strengths tried, per observation: the regularizer weighs strength·N·Ω against
  /// −ELBO (as against a mean loss in [34]), so its pull keeps pace with the data's.
  std::vector<double> regularizer_grid = {1, 1e-1, 1e-2, 1e-3, 1e-4};
  int cv_folds = 3;
  int cv_iterations = 100;                 ///< Adam steps of each cross-validation fit
  /// L-BFGS iterations that finish a fit at the mode of q (z = 1 on the networks the task
  /// uses, 0 elsewhere): the weights and λ, β the posterior (eq. 4) is built from.
  int polish_iterations = 200;
  int warm_polish_iterations = 50;
  int cv_polish_iterations = 30;
  /// Each network in use brings its earlier latent function as a column (see above).
  bool latent_columns = true;
  /// A constant column: the offset between a task's level and what its features span.
  bool bias_column = true;
};

class Lbo final : public Surrogate {
 public:
  explicit Lbo(int input_dim, LboOptions options = {});

  /// Fits every task whose observations changed since its last fit, in task order (earlier
  /// tasks' final weights and heads are what the later ones learn from).
  void fit(const TaskData& data, std::uint64_t seed) override;
  std::shared_ptr<const TaskPosterior> posterior(int task) const override;
  SurrogateState state() const override;
  void restore(const SurrogateState& state, const TaskData& data) override;

  /// q(z_{t,m} = 1) = σ(log γ_{t,m}) for m = 1..M: which networks the task uses (reports).
  std::vector<double> usage(int task) const;
  /// The graph regularizer's strength chosen for `task` (0 while it has no earlier tasks).
  double regularizer_strength(int task) const;
  const Mlp& network() const { return *mlp_; }
  const LboOptions& options() const { return options_; }

  /// Earlier tasks' weights for one network, with the usage q(z_{u,m} = 1) that weighs them
  /// in the graph regularizer.
  struct Anchor {
    int network = 0;
    double usage = 0;
    Eigen::VectorXd weights;
  };
  /// Eq. (9) summed per network so each evaluation costs O(M·P) whatever the number of tasks:
  /// Σ_u p_u ‖W − W_u‖² = s0‖W‖² − 2Wᵀs1 + s2.
  struct AnchorSums {
    std::vector<double> s0, s2;
    std::vector<Eigen::VectorXd> s1;
    bool empty() const;
  };
  AnchorSums sum_anchors(const std::vector<Anchor>& anchors) const;

  /// What a task learns from the tasks before it: the regularizer's anchors, and per network
  /// the head h̄_m of its latent function (size 0: no earlier task used it).
  struct Earlier {
    AnchorSums anchors;
    std::vector<Eigen::VectorXd> heads;
  };

  /// One sample of the objective (tests use it for gradient checks): the negative ELBO of
  /// standardized `data` plus `strength` × eq. (9), and its gradient w.r.t. the packed
  /// parameters [W_1 … W_M, log γ_1 … log γ_M, log λ, log β, ρ] (e^ρ scales the latent
  /// columns). `noise` holds the logistic noise
  /// L_m of the z samples, `log_prior_odds` log(π_m/(1−π_m)) of the sampled sticks.
  double negative_elbo(const Eigen::VectorXd& packed, const Observations& data, const Earlier& earlier,
                       double strength, const Eigen::VectorXd& noise, const Eigen::VectorXd& log_prior_odds,
                       Eigen::VectorXd& gradient) const;
  /// The objective of the polish: −log p(Y | X, z, Θ) at z = 1 on `used` (0 elsewhere) plus
  /// `strength` × eq. (9) and the weight decay, with its gradient w.r.t. the packed parameters
  /// (zero outside the used networks' weights and log λ, log β).
  double mode_objective(const Eigen::VectorXd& packed, const Observations& data, const std::vector<int>& used,
                        const Earlier& earlier, double strength, Eigen::VectorXd& gradient) const;
  /// Packed parameters a new task starts from: each network from its latest earlier user, and
  /// q(z) from the earlier tasks' mean usage or the IBP prior's E[π_m], whichever is larger.
  Eigen::VectorXd initial_parameters(int task) const;

 private:
  struct TaskModel {
    std::vector<Eigen::VectorXd> weights;  // per network; empty when not kept (unused)
    std::vector<Eigen::VectorXd> heads;    // per network: its latent function's head; empty when unused
    std::vector<Eigen::VectorXd> prior_heads;  // the earlier heads its posterior was built with
    Eigen::VectorXd log_gamma;             // M
    double log_lambda = 0, log_beta = 0;
    double log_rho = 0;              // scale of the latent columns
    Eigen::Index fitted_size = -1;   // observations at the last fit
    double strength = 0;             // graph regularizer
    Eigen::Index strength_size = 0;  // observations when it was chosen
    std::shared_ptr<const TaskPosterior> posterior;
  };

  Earlier earlier_than(int task) const;
  /// −log p(Y | X, z, Θ) with the networks `active` at scales z: adds its gradient w.r.t. their
  /// weights and log λ, log β into `gradient`, and w.r.t. z into `dz` when given.
  double data_term(const Eigen::VectorXd& packed, const Observations& data, const std::vector<int>& active,
                   const Eigen::VectorXd& z, const Earlier& earlier, Eigen::VectorXd& gradient,
                   Eigen::VectorXd* dz) const;
  /// Adam on the sampled negative ELBO from `packed`; returns the final parameters.
  Eigen::VectorXd optimize(Eigen::VectorXd packed, const Observations& data, const Earlier& earlier,
                           double strength, int iterations, std::mt19937_64& rng) const;
  /// L-BFGS on mode_objective from `packed`, over the used networks' weights and λ, β.
  Eigen::VectorXd polish(Eigen::VectorXd packed, const Observations& data, const Earlier& earlier,
                         double strength, int iterations) const;
  /// optimize, then polish: a whole fit of one task's standardized data.
  Eigen::VectorXd fit_task(const Eigen::VectorXd& start, const Observations& data, const Earlier& earlier,
                           double strength, int iterations, int polish_iterations, std::mt19937_64& rng) const;
  /// Eq. (9)'s strength with the best held-out log likelihood over `cv_folds` folds of `data`.
  double choose_strength(const Eigen::VectorXd& start, const Observations& data, const Earlier& earlier,
                         std::uint64_t seed) const;
  /// The posterior of `data` (standardized) under packed parameters: the networks q says the
  /// task uses, z = 1.
  std::shared_ptr<const TaskPosterior> build_posterior(const Eigen::VectorXd& packed, const Observations& data,
                                                       Standardization s, const Earlier& earlier) const;
  /// Stores a fit of `task`, its posterior of `raw` data and the heads it carries.
  void store(int task, const Eigen::VectorXd& packed, const Observations& raw, const Earlier& earlier);
  Eigen::VectorXd pack(int task) const;
  int parameter_count() const { return options_.networks * (mlp_->parameter_count() + 1) + 3; }

  LboOptions options_;
  std::shared_ptr<const Mlp> mlp_;
  std::vector<Eigen::VectorXd> fresh_;  // a fixed random initialization per network
  std::vector<TaskModel> tasks_;
};

}  // namespace lbo::surrogate
