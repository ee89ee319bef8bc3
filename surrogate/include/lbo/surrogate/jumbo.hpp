#pragma once
// JUMBO (Hakhamaneshi et al., "JUMBO: Scalable Multi-task Bayesian Optimization using Offline
// Data", §3–4, Algorithm 1): each task has two GPs on its own trials. The cold GP is the plain
// Matérn-5/2 ARD GP on the unit-box inputs (GaussianProcess); the warm GP is the same kind of
// GP on features h(x) of a network trained on the earlier tasks' data: a multi-headed network
// fitted by mean squared error, one linear head per earlier task (the paper's eq. 1, its MSE
// term; the GPs' hyperparameters are fitted per task by marginal likelihood, as eq. 1's other
// terms would with the task's own data). Proposals maximize JUMBO's acquisition: the cold
// GP's acquisition among the points the warm GP's acquisition ranks within `threshold` of its
// best (TaskPosterior::guide(), BatchProposer), so the cold GP corrects features that mislead.
//
// The cold switch (not in the paper; `cold_switch`): the threshold set keeps the cold GP
// inside the region the warm GP ranks best, so features that miss a task's optimum hold it
// away from it however many results say so. Once the task's own results show it, the task
// proposes from its cold GP alone: at each fit, when the cold GP predicts the task's results
// better than the warm GP, leave-one-out (loo_log_predictive, each GP at its own fitted θ), the
// task's posterior has no guide. The two marginal likelihoods would not do: each carries its
// own prior, over 8 feature length-scales for the warm GP against d for the cold one. The
// choice is made anew at each fit, so the warm GP guides again when it predicts better.
//
// The earlier tasks are the finished ones (TaskData::finished): the network is retrained when
// that set or its data change (a task finishing), not on every result. With none, a task's
// posterior is its cold GP alone.

#include <Eigen/Core>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lbo/surrogate/gp.hpp"
#include "lbo/surrogate/mlp.hpp"
#include "lbo/surrogate/surrogate.hpp"

namespace lbo::surrogate {

struct JumboOptions {
  std::vector<int> hidden = {50, 50};  ///< the network's tanh layers before the features
  /// Width of the feature layer h(x): the warm GP fits a length-scale per feature on a task's
  /// own few trials, so a handful.
  int features = 8;
  double threshold = 0.1;          ///< l_α, in the warm acquisition's standardized units
  /// The cold switch above: a task whose cold GP predicts its results better (leave-one-out)
  /// proposes from the cold GP alone. false: JUMBO as in the paper.
  bool cold_switch = true;
  int pretrain_iterations = 400;   ///< L-BFGS iterations of the network's fit
  /// Rows of the earlier tasks the network is fitted on at most (evenly thinned per task past it).
  int max_rows = 4000;
  GaussianProcess::Options gp;
};

/// The network's fit (eq. 1's MSE term): minimizes
///   Σ_t (1/(T n_t)) Σ_i (w_tᵀ φ(x_i) + b_t − z_i)² + decay ‖params‖²
/// over the network and one linear head (w_t, b_t) per task, z the task's standardized y, by
/// L-BFGS (at most `iterations`; 0: none) from Glorot-uniform weights drawn from `seed`.
struct Pretrained {
  Eigen::VectorXd parameters;  ///< the network's (without the heads)
  double loss = 0;             ///< the mean squared error term at the end (standardized units)
};
Pretrained pretrain_features(const Mlp& network, const std::vector<Observations>& tasks, std::uint64_t seed,
                             int iterations);
/// The objective above and its gradient (exposed for the finite-difference test): `packed` is
/// [network parameters, w_1, b_1, …, w_T, b_T].
double pretrain_objective(const Mlp& network, const std::vector<Observations>& standardized,
                          const Eigen::VectorXd& packed, Eigen::VectorXd& gradient);

/// The posterior of `inner`, a GP on features (n × k inputs in [0,1]^k), seen on the unit box:
/// x ↦ h(x) = (φ(x) + 1)/2 with φ the network at `parameters` (tanh outputs).
std::shared_ptr<const TaskPosterior> make_feature_posterior(std::shared_ptr<const Mlp> network,
                                                            std::shared_ptr<const Eigen::VectorXd> parameters,
                                                            std::shared_ptr<const TaskPosterior> inner);

/// JUMBO's posterior of a task: predictions are the cold GP's; guide() is the warm GP with
/// `threshold`. Conditioning conditions both.
std::shared_ptr<const TaskPosterior> make_jumbo_posterior(std::shared_ptr<const TaskPosterior> cold,
                                                          std::shared_ptr<const TaskPosterior> warm, double threshold);

class Jumbo final : public Surrogate {
 public:
  explicit Jumbo(int dimension, JumboOptions options = {});

  /// Retrains the network when the finished tasks' data changed, then fits the cold and warm
  /// GPs of every task whose data (or network) changed.
  void fit(const TaskData& data, std::uint64_t seed) override;
  std::shared_ptr<const TaskPosterior> posterior(int task) const override;
  SurrogateState state() const override;
  void restore(const SurrogateState& state, const TaskData& data) override;

  /// The finished tasks the network was trained on (empty: no network; cold GPs alone).
  std::vector<int> trained_on() const;
  /// h(X) ∈ [0,1]^k for X (n × d); needs a network.
  Eigen::MatrixXd features(const Eigen::MatrixXd& X) const;

 private:
  void build(const TaskData& data, std::size_t task, bool refit, std::uint64_t seed);

  int dimension_;
  JumboOptions options_;
  std::shared_ptr<const Mlp> network_;
  JumboState state_;
  std::shared_ptr<const Eigen::VectorXd> parameters_;  // the network's, null before training
  std::vector<GaussianProcess> cold_, warm_;
  std::vector<std::shared_ptr<const TaskPosterior>> posteriors_;
};

/// Whether `task` proposes from its cold GP alone in `state`: no network yet, no warm GP for
/// it (it finished before the network existed), or the cold switch chose the cold GP.
bool jumbo_cold_alone(const JumboState& state, std::size_t task);
/// How `task` proposes, for logs and reports: "cold GP (no warm network yet)", "cold GP within
/// the warm GP's best", or "cold GP alone (leave-one-out log density: cold -3.2 > warm -7.3)".
std::string describe_jumbo_task(const JumboState& state, std::size_t task);

/// The key of the data the network learns from: per finished task, its index and row count.
std::vector<std::int64_t> jumbo_training_key(const TaskData& data);

}  // namespace lbo::surrogate
