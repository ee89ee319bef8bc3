#pragma once
// LiBO (Kassraie et al., "Lifelong Bandit Optimization", Algorithm 1): each task is a GP with the
// kernel k̂_{s−1} that META-KGL learned from the forced-exploration data of the tasks finished
// before it, σ_f² k̂ + σ_n² I with σ_f² and σ_n² fitted per task (MAP, as GaussianProcess); the
// acquisition is the job's. With no finished task, k̂ is the uniform combination k_full of the
// whole dictionary. Beyond the paper (LiboOptions::full_share): each task mixes a share of
// k_full, fitted on its own data, into k̂.
//
// The GP switch (not in the paper; LiboOptions::gp_switch): a k̂ learned from the earlier tasks
// fixes the task's length-scales to those of its base kernels (a grid), so on a smooth family
// whose scales fall between them it is far behind a GP that fits its own. At each fit each task
// also fits the plain GP (GaussianProcess, ARD Matérn-5/2) and proposes from whichever of the
// two predicts its own results better, leave-one-out (loo_log_predictive).
//
// k̂ changes only when the set of finished tasks does, so a task's kernel is fixed while it runs
// (the paper's k̂_{s−1}), unless an earlier task running beside it finishes: then every open task
// refits with the better k̂ (finished tasks keep theirs).

#include <Eigen/Core>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lbo/surrogate/gp.hpp"
#include "lbo/surrogate/kernel_dictionary.hpp"
#include "lbo/surrogate/meta_kgl.hpp"
#include "lbo/surrogate/surrogate.hpp"

namespace lbo::surrogate {

/// The kernel of a LiBO task: k̂ = (1/|Ĵ|) Σ_{j∈Ĵ} k_j of a dictionary's active set Ĵ (empty:
/// all kernels, k_full), mixed with k_full by `full_share` s: (1 − s) k̂ + s k_full.
class CombinedKernel {
 public:
  CombinedKernel(std::shared_ptr<const KernelDictionary> dictionary, std::vector<int> active, double full_share = 0)
      : dictionary_(std::move(dictionary)), active_(std::move(active)), full_share_(active_.empty() ? 0 : full_share) {}

  /// n × m.
  Eigen::MatrixXd gram(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) const;
  /// k(a, a) for each row a of A: n (1 for stationary kernels, φ(a)² for a cosine).
  Eigen::VectorXd diagonal(const Eigen::MatrixXd& A) const;
  /// ∂k(x, b)/∂x for the rows b of B: d × m.
  Eigen::MatrixXd gradient(const Eigen::VectorXd& x, const Eigen::MatrixXd& B) const;
  /// d k(x, x)/dx: length d.
  Eigen::VectorXd diagonal_gradient(const Eigen::VectorXd& x) const;

  const std::vector<int>& active() const { return active_; }
  double full_share() const { return full_share_; }
  const KernelDictionary& dictionary() const { return *dictionary_; }

 private:
  std::shared_ptr<const KernelDictionary> dictionary_;
  std::vector<int> active_;
  double full_share_;
};

/// A LiBO task's GP marginal likelihood of standardized y plus log priors, with its gradient:
/// the kernel σ_f² K + σ_n² I for θ = [log σ_f², log σ_n²], or, with K_full,
/// σ_f² ((1 − s) K + s K_full) + σ_n² I for θ = [log σ_f², log σ_n², logit s]. Priors: those of
/// GaussianProcess (log σ_f² ~ N(0, 1), log σ_n² ~ N(log 1e-2, 2²)) and logit s ~
/// N(logit 0.05, 2²): the learned kernel unless the task's data say otherwise. Throws
/// NumericalError when the matrix cannot be factorized.
GpObjective fixed_kernel_objective(const Eigen::MatrixXd& K, const Eigen::MatrixXd* K_full, const Eigen::VectorXd& y,
                                   const Eigen::VectorXd& theta);

/// The exact posterior of the GP σ_f² k + σ_n² with θ = [log σ_f², log σ_n²] (exposed for tests).
std::shared_ptr<const TaskPosterior> make_fixed_kernel_posterior(std::shared_ptr<const CombinedKernel> kernel,
                                                                 const Eigen::MatrixXd& X,
                                                                 const Eigen::VectorXd& y_standardized,
                                                                 const Eigen::Vector2d& theta,
                                                                 Standardization standardization);

struct LiboOptions {
  MetaKglOptions meta;
  int restarts = 2;         ///< starts of the hyperparameter fit besides the warm start
  int max_iterations = 60;  ///< L-BFGS-B iterations per start
  /// Each task fits a share s of k_full into its kernel, (1 − s) k̂ + s k_full (marginal
  /// likelihood, prior near 0), so a k̂ learned from too little data, or a task unlike the
  /// earlier ones, cannot shut out what the task's own data show. false: k̂ alone (the paper).
  bool full_share = true;
  /// The GP switch above. false: the k̂ GP always (the paper).
  bool gp_switch = true;
  GaussianProcess::Options gp;  ///< the plain GP's fit
};

class Libo final : public Surrogate {
 public:
  /// `dictionary`: the base kernels (KernelDictionary::standard(dimension) when null).
  explicit Libo(int dimension, LiboOptions options = {}, std::shared_ptr<const KernelDictionary> dictionary = nullptr);

  /// Re-estimates k̂ when the finished tasks changed (META-KGL on their exploration rows,
  /// TaskData::finished and ::exploration), then fits each task whose data or kernel changed.
  void fit(const TaskData& data, std::uint64_t seed) override;
  std::shared_ptr<const TaskPosterior> posterior(int task) const override;
  SurrogateState state() const override;
  void restore(const SurrogateState& state, const TaskData& data) override;

  /// Ĵ, ascending (empty: k_full, no finished task yet).
  const std::vector<int>& active() const { return state_.active; }
  /// The tasks Ĵ was learned from.
  const std::vector<int>& learned_from() const { return state_.learned_from; }
  const KernelDictionary& dictionary() const { return *dictionary_; }
  /// Ĵ as the kernels' names, ' + '-separated ("k_full" for the uniform combination).
  std::string describe_active() const;
  /// The kernel of `task`'s GP at the last fit (null before one).
  std::shared_ptr<const CombinedKernel> kernel(int task) const;

 private:
  // The task's kernel for saved θ: its share of k_full is θ's third entry.
  std::shared_ptr<const CombinedKernel> kernel_for(const std::vector<double>& theta) const;
  // The GP switch for task t, whose k̂ GP (posteriors_[t], kernels_[t], on z, the task's y
  // standardized) is built: fits its plain GP (refit) or sets it from the saved θ, compares the
  // two and keeps the better.
  void switch_gp(const Observations& o, const Eigen::VectorXd& z, std::size_t t, bool refit, std::uint64_t seed);

  int dimension_;
  LiboOptions options_;
  std::shared_ptr<const KernelDictionary> dictionary_;
  LiboState state_;
  std::vector<std::shared_ptr<const TaskPosterior>> posteriors_;
  std::vector<std::shared_ptr<const CombinedKernel>> kernels_;  // per task
  std::vector<GaussianProcess> plain_;                         // per task, the GP switch's
};

/// Whether `task` proposes from its plain GP in `state` (the GP switch chose it).
bool libo_plain_chosen(const LiboState& state, std::size_t task);

/// The key of the exploration data META-KGL learns from: per finished task, its index and its
/// count of exploration rows (a change of either re-estimates k̂).
std::vector<std::int64_t> libo_learning_key(const TaskData& data);

}  // namespace lbo::surrogate
