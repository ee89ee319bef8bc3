#pragma once
// Ablr (Perrone et al. 2018): a feature map shared by every task (an Mlp) with one Bayesian
// linear regression per task on top. The network weights and each task's log α_t, log β_t are
// fitted jointly on the sum of the tasks' negative log marginal likelihoods (ABLR eq. 3) with
// L-BFGS. Earlier tasks thereby shape the features a new task starts from (transfer); with a
// single task it is DNGO without the two-step training.

#include <Eigen/Core>
#include <cstdint>
#include <memory>
#include <vector>

#include "lbo/surrogate/mlp.hpp"
#include "lbo/surrogate/surrogate.hpp"

namespace lbo::surrogate {

struct AblrOptions {
  std::vector<int> hidden = {50, 50, 50};  ///< feature map layers; the last is D
  int max_iterations = 300;                ///< L-BFGS iterations of a cold fit
  int warm_iterations = 60;                ///< of a fit warm-started from the previous one
  double weight_decay = 1e-3;              ///< ½λ‖w‖² on the network weights (a Gaussian prior)
  int restarts = 3;                        ///< fresh initializations after every start failed
};

class Ablr final : public Surrogate {
 public:
  explicit Ablr(int input_dim, AblrOptions options = {});

  void fit(const TaskData& data, std::uint64_t seed) override;
  std::shared_ptr<const TaskPosterior> posterior(int task) const override;
  SurrogateState state() const override;
  void restore(const SurrogateState& state, const TaskData& data) override;

  /// Packed parameters [network weights, log α₁, log β₁, log α₂, log β₂, …].
  const Eigen::VectorXd& parameters() const { return parameters_; }
  const Mlp& network() const { return *mlp_; }
  int tasks() const { return tasks_; }

  /// The fitted objective: Σ_t −log p(z_t | Φ_t, α_t, β_t) + ½λ‖w‖² over standardized
  /// targets z_t, and its gradient w.r.t. the packed parameters. Throws NumericalError.
  double objective(const Eigen::VectorXd& packed, const TaskData& standardized, Eigen::VectorXd& gradient) const;

 private:
  /// Where a fit starts its descent, for at most `iterations` L-BFGS iterations.
  struct Start {
    Eigen::VectorXd x;
    int iterations;
  };
  Eigen::VectorXd cold_start(int tasks, std::mt19937_64& rng) const;
  /// The previous fit (warm) and, when due, a fresh initialization (which resets cold_fit_size_).
  std::vector<Start> starts(int tasks, Eigen::Index observations, std::mt19937_64& rng);
  /// The packed parameters of the best finite descent from `starts`, fresh restarts after a
  /// round with none; empty when every restart failed.
  Eigen::VectorXd best_descent(std::vector<Start> starts, const TaskData& standardized, Eigen::Index observations,
                               int tasks, std::mt19937_64& rng) const;
  /// Posteriors of every task of `data` under `packed` (standardizing each task's outputs).
  std::vector<std::shared_ptr<const TaskPosterior>> build_posteriors(const TaskData& data, const Eigen::VectorXd& packed) const;
  std::shared_ptr<const TaskPosterior> build_posterior(const Observations& data, Standardization s,
                                                       std::shared_ptr<const Eigen::VectorXd> weights,
                                                       const Eigen::VectorXd& packed, int task) const;

  AblrOptions options_;
  std::shared_ptr<const Mlp> mlp_;
  Eigen::VectorXd parameters_;
  int tasks_ = 0;
  Eigen::Index cold_fit_size_ = 0;  // observations at the last fit from a fresh initialization
  std::vector<std::shared_ptr<const TaskPosterior>> posteriors_;
};

}  // namespace lbo::surrogate
