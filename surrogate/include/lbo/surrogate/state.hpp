#pragma once
// What a surrogate's fit leaves behind for the next one to start from, in plain vectors so that
// a checkpoint can hold it (a resumed run then refits warm, and a --sync run resumes exactly).

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lbo::surrogate {

struct GpState {
  std::vector<std::vector<double>> theta;  ///< per task; empty before its first fit
  std::vector<std::int64_t> fitted_sizes;  ///< observations of each task at its last fit

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t /*version*/) {
    archive(theta, fitted_sizes);
  }
};

struct AblrState {
  std::vector<double> parameters;  ///< packed [network weights, log α_t, log β_t, ...]
  int tasks = 0;
  std::int64_t cold_fit_size = 0;

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t /*version*/) {
    archive(parameters, tasks, cold_fit_size);
  }
};

struct LboTaskState {
  std::vector<std::vector<double>> weights;  ///< per network; empty when the task does not keep it
  std::vector<std::vector<double>> heads;        ///< per network: the latent function's head, or empty
  std::vector<std::vector<double>> prior_heads;  ///< per network: the earlier head it was fitted with
  std::vector<double> log_gamma;             ///< per network: q(z = 1) = σ(log γ)
  double log_lambda = 0, log_beta = 0;
  double log_rho = 0;   ///< scale of the latent columns
  std::int64_t fitted_size = -1;
  double strength = 0;  ///< graph regularizer
  std::int64_t strength_size = 0;

  /// q(z_m = 1) for each network.
  std::vector<double> usage() const {
    std::vector<double> q;
    for (double g : log_gamma) q.push_back(1.0 / (1.0 + std::exp(-g)));
    return q;
  }

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t /*version*/) {
    archive(weights, heads, prior_heads, log_gamma, log_lambda, log_beta, log_rho, fitted_size, strength, strength_size);
  }
};

struct LboState {
  std::vector<LboTaskState> tasks;

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t /*version*/) {
    archive(tasks);
  }
};

/// TransferGp's per-task GPs: θ (with log s² when the task had a basis), the tasks whose inner
/// posterior means (`basis`) and plain-GP means (`gp_basis`) formed that basis, and the plain GP
/// of every task (`plain`, the other model each task averages over).
struct TransferState {
  GpState gp;
  std::vector<std::vector<int>> basis;
  std::vector<std::vector<int>> gp_basis;
  std::optional<GpState> plain;  ///< absent in version 1 states (before model averaging)

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t version) {
    archive(gp, basis);
    if (version >= 2) archive(gp_basis, plain);
  }
};

/// LiBO's kernel and its tasks' GPs: Ĵ, what it was learned from, and per task
/// θ = [log σ_f², log σ_n²] with the observations it was fitted on.
struct LiboState {
  std::vector<int> active;                ///< Ĵ, ascending (empty: k_full)
  std::vector<int> learned_from;          ///< the finished tasks whose exploration data gave Ĵ
  std::vector<std::int64_t> learned_key;  ///< libo_learning_key() of that data
  double lambda = 0, lambda_max = 0;      ///< META-KGL's chosen λ and λ_max
  std::vector<double> group_norms;        ///< ‖β̂^(j)‖₂ per base kernel at λ
  GpState gp;                             ///< per task θ and fitted size
  /// Per task: the k̂ its GP was last fitted with, as Libo::describe_active() ("" before a fit),
  /// and which GP it proposes from when the GP switch chose the plain one.
  std::vector<std::string> task_kernels;
  /// The GP switch (Libo): per task the plain GP's θ and fitted size, and the leave-one-out log
  /// predictive densities of the task's results under its k̂ GP and its plain GP (NaN where not
  /// compared). Empty in version 1 states.
  GpState plain;
  std::vector<double> loo_learned, loo_plain;

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t version) {
    archive(active, learned_from, learned_key, lambda, lambda_max, group_norms, gp, task_kernels);
    if (version >= 2) archive(plain, loo_learned, loo_plain);
  }
};

/// JUMBO's network and its tasks' two GPs: the network's parameters (empty: none yet), the
/// finished tasks' data it was trained on (jumbo_training_key()), and per task the cold GP's θ
/// on the unit box and the warm GP's on the network's features.
struct JumboState {
  std::vector<double> network;
  std::vector<std::int64_t> trained_key;
  GpState cold, warm;
  /// Per task, the leave-one-out log predictive density of its own results under the cold and
  /// the warm GP at their last fit (Jumbo's cold switch; NaN where not compared). Recomputed
  /// from θ on restore; kept for reports. Empty in version 1 states.
  std::vector<double> loo_cold, loo_warm;

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t version) {
    archive(network, trained_key, cold, warm);
    if (version >= 2) archive(loo_cold, loo_warm);
  }
};

/// The state of whichever surrogate the run uses (none before its first fit).
struct SurrogateState {
  std::optional<GpState> gp;
  std::optional<AblrState> ablr;
  std::optional<LboState> lbo;
  std::optional<TransferState> transfer;
  std::optional<LiboState> libo;
  std::optional<JumboState> jumbo;

  /// No surrogate has fitted (a new state goes here, in serialize and in a version bump).
  bool empty() const { return !gp && !ablr && !lbo && !transfer && !libo && !jumbo; }

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t version) {
    archive(gp, ablr);
    if (version >= 2) archive(lbo);       // version 1 checkpoints predate LBO
    if (version >= 3) archive(transfer);  // version 2 ones predate TransferGp
    if (version >= 4) archive(libo);      // version 3 ones predate LiBO
    if (version >= 5) archive(jumbo);     // version 4 ones predate JUMBO
  }
};

}  // namespace lbo::surrogate
