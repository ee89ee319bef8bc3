#pragma once
// TaskBatch: one model task's proposals in flight. A surrogate::BatchProposer on a basis (the
// task's own fit, an earlier task's posterior, or an interim GP) kept up to date with the run:
// the trials started since are believed at the mean, a result replaces its trial's believed
// value, and the batch is rebuilt on a newer basis when that costs little.
//
// At thousands of slots, conditioning on every point does not pay: each point costs the batch
// O(m² + m n) for m points, and a wave of thousands of free slots and results waited seconds.
// So the batch conditions on few points and penalizes the others (surrogate::LocalPenalty, at
// O(n d) a point): a rebuilt batch believes the newest kBelieved running trials, joins the best
// kJoined results its basis has not seen (the others wait for the next fit), and grows to
// kExact points, after which trials started since are penalized and results of penalized
// trials wait, until the next rebuild (a new fit, or half its candidates used). A task with at
// most kBelieved trials running, at most kJoined results and fewer than kExact proposals
// between two fits is served as before (every point conditioned on). Private to orchestrator/.

#include <Eigen/Core>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fit_service.hpp"
#include "lbo/orchestrator/proposal.hpp"
#include "lbo/orchestrator/run_state.hpp"
#include "lbo/surrogate/batch.hpp"

namespace lbo::orchestrator {

/// A posterior to propose from for one task, and what it is.
struct Basis {
  enum class Kind : std::uint8_t {
    fit,      ///< the task's own posterior in the newest fit (results since join it exactly)
    prior,    ///< an earlier task's posterior (model-prior)
    interim,  ///< a GP on the task's own results, until the background fit covers the task
  };
  Kind kind = Kind::fit;
  std::shared_ptr<const surrogate::TaskPosterior> posterior;
  std::string key;       ///< which posterior: a batch built on another one is rebuilt
  double incumbent = 0;  ///< a prior's: the earlier task's best, standardized
  /// The task's trials the posterior was fitted on (fit, interim; ascending): the others join
  /// it exactly. Null for a prior.
  const std::vector<std::int64_t>* fitted = nullptr;
  std::shared_ptr<const Snapshot> owner;  ///< keeps `fitted` alive
  /// What proposed, when not the task's own fit (a proposal's note): "task year-1's posterior in
  /// lbo's newest fit: ...", "a GP on 7 of the task's 7 results: no lbo fit has finished yet".
  std::string note;
  ProposalSource source() const {
    switch (kind) {
      case Kind::prior: return ProposalSource::model_prior;
      case Kind::interim: return ProposalSource::interim_gp;
      default: return ProposalSource::model;
    }
  }
};

/// A model task's trials as its batch sees them (a run task, or one step of a stepwise one).
struct TaskTrials {
  const RunState& state;
  int task = 0;
  std::function<Eigen::VectorXd(const Trial&)> encode;  ///< the encoded configuration
  std::function<bool(const Trial&)> usable;             ///< a result the model can take
  std::function<double(const Trial&)> value;            ///< a usable result's value, larger is better
};

struct BatchSettings {
  const surrogate::EncodedSpace* space = nullptr;
  surrogate::MaximizerOptions maximizer;
  double xi = 0.01;
  bool sync = false;  ///< --sync: rebuilt at every update, always refined
  /// The only configurations to rank (n × d, a restricting table's untaken rows): the batch
  /// is rebuilt on them at every update and nothing is refined. Null: drawn candidates.
  const Eigen::MatrixXd* candidates = nullptr;
  /// [objective] failures = "learn": the task's failed trials join the batch as running ones
  /// do (the newest kBelieved; older ones penalized), at the task's worst result (TaskBatch::
  /// rebuild), so the acquisition is not drawn back to where the model, which never saw them,
  /// is most uncertain.
  bool believe_failed = false;
};

class TaskBatch {
 public:
  /// The most running trials a rebuilt batch believes (the newest ones).
  static constexpr int kBelieved = 64;
  /// The most results its basis has not seen that a rebuilt batch's posterior joins exactly.
  static constexpr int kJoined = 128;
  /// The most points a batch conditions on beyond its posterior's (believed and joined).
  static constexpr int kExact = 128;

  /// Brings the batch up to date with `trials` on `basis`. It goes on while its basis is this
  /// one (or one of the same kind that it is not yet time to take up), fewer than half its
  /// candidates were proposed and every result since is one of its trials'; otherwise it is
  /// rebuilt on candidates drawn from `seed` (in --sync runs, always).
  void update(const TaskTrials& trials, const Basis& basis, const BatchSettings& settings, std::uint64_t seed);
  /// The next update() rebuilds.
  void invalidate() { batch_.reset(); }

  surrogate::BatchProposer& proposer() { return *batch_; }
  ProposalSource source() const { return source_; }
  /// Its basis's note (Basis::note).
  const std::string& note() const { return note_; }
  /// The incumbent and ξ; ucb_beta is the caller's.
  const surrogate::AcquisitionParams& params() const { return params_; }
  /// The task's usable results and running trials (t − 1 of GP-UCB's β_t).
  int count() const { return observed_ + static_cast<int>(pending_.size()); }
  /// The task's running trials.
  int running() const { return static_cast<int>(pending_.size()); }
  /// Running trials of the task the batch penalizes rather than believes.
  int unbelieved() const { return unbelieved_; }

  /// At least every kRefineEvery-th ranking is refined, however busy the master is.
  static constexpr int kRefineEvery = 20;
  /// Adaptive effort, asked once per ranking of the candidates: how it is refined by L-BFGS-B.
  /// - full: always in --sync runs; otherwise while full refinements take at most a tenth of the
  ///   master's time, so a burst of free slots is not kept waiting;
  /// - brief (stopped on progress): every kRefineEvery-th ranking of a master too busy for the
  ///   above. In a wave of thousands of proposals the time alone left 1 in 80 refined, and the
  ///   wave's best results were far worse
  ///   (bench/log/2026-11-28-simulated-scale-sixth-run-what-wave-is-proposed.md); refined in full, a
  ///   wave on a warped task's results kept its last slots waiting twice as long
  ///   (bench/log/2026-11-28-simulated-scale-ninth-run-busy-master-refines-briefly.md);
  /// - none: otherwise.
  surrogate::Refinement take_refinement(bool sync);
  /// A refinement of that effort that began at `started` has ended.
  void refined(surrogate::Refinement effort, std::chrono::steady_clock::time_point started);

 private:
  using Clock = std::chrono::steady_clock;
  void rebuild(const TaskTrials& trials, const Basis& basis, const BatchSettings& settings, std::uint64_t seed,
               std::vector<std::int64_t> pending);

  std::optional<surrogate::BatchProposer> batch_;
  ProposalSource source_ = ProposalSource::model;
  std::string note_;
  Basis::Kind kind_ = Basis::Kind::fit;
  std::string key_;                          // the basis it was built on
  surrogate::Standardization standardization_;  // the basis's
  int finished_ = -1;                         // the task's ended trials (finished or paused) it knows
  std::vector<std::int64_t> pending_;         // the task's unfinished trials in the batch, ascending
  std::map<std::int64_t, int> index_;         // trial → its point in the batch (believed or observed)
  int unbelieved_ = 0;                        // pending_ not in index_: penalized
  surrogate::AcquisitionParams params_;
  int observed_ = 0;
  int feasible_ = 0;  // of the observed, those within the limits of [[constraints]]
  double worst_ = 0;  // the task's worst usable result, standardized (failed trials' believed value)
  // A newer basis of the same kind (a new fit) is taken up while rebuilding takes at most a
  // tenth of the master's time: the batch has every result already, exactly; a new fit brings
  // new hyperparameters, and a rebuild costs O(m² n).
  Clock::time_point built_at_{}, refined_at_{};
  Clock::duration build_cost_{}, refine_cost_{};
  int unrefined_ = 0;  // rankings since the last refinement
};

}  // namespace lbo::orchestrator
