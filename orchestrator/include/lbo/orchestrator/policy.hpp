#pragma once
// Policy: given the run so far, the configuration a new trial should evaluate.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "lbo/jobs/space.hpp"
#include "lbo/orchestrator/run_state.hpp"
#include "lbo/surrogate/state.hpp"

namespace lbo::orchestrator {

/// GP-Hedge's memory for one task: the arms' gains, and the nominees proposed since the last fit
/// (each one point per arm, encoded), which the next fit rewards.
struct HedgeState {
  std::vector<double> gains;
  std::vector<std::vector<std::vector<double>>> nominees;

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t /*version*/) {
    archive(gains, nominees);
  }
};

/// What a checkpoint keeps of a policy, so a resumed run continues where it stopped.
struct PolicyState {
  surrogate::SurrogateState surrogate;
  std::vector<HedgeState> hedge;           ///< per task; empty unless acquisition = "hedge"
  std::int64_t fitted_observations = -1;  ///< observations of the last fit; -1 before the first
  std::vector<std::string> warm_sources;  ///< the warm-start tasks the model put first

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t version) {
    archive(surrogate, hedge, fitted_observations);
    if (version >= 2) archive(warm_sources);
  }
};

class Policy {
 public:
  virtual ~Policy() = default;
  /// A valid configuration of the job's space for new trial `trial` of `task`. Never waits for
  /// a model fit.
  virtual jobs::Config propose(const RunState& state, int task, std::int64_t trial) = 0;
  /// Results were committed. A model-based policy refits: in the background, or before
  /// returning in --sync mode (where the master calls this at the end of each round).
  virtual void results_committed(const RunState& state) { (void)state; }
  /// What a checkpoint should keep (nothing for a stateless policy).
  virtual PolicyState state() { return {}; }
  /// Continues from a checkpointed state; `run` is the run as recovered. Call before proposing.
  virtual void restore(const PolicyState& saved, const RunState& run) {
    (void)saved;
    (void)run;
  }
  /// Whether results committed since the last fit still await one (a --sync run stopped after
  /// its round ended but before the refit; resuming, it refits before it proposes).
  virtual bool refit_due(const RunState& run) const {
    (void)run;
    return false;
  }
};

/// Uniform sampling that respects `when` conditions. Trial t draws from its own stream,
/// seeded from (job seed, t), so proposals do not depend on the order results arrive in.
class RandomPolicy final : public Policy {
 public:
  RandomPolicy(jobs::Space space, std::uint64_t seed) : space_(std::move(space)), seed_(seed) {}
  jobs::Config propose(const RunState& state, int task, std::int64_t trial) override;

 private:
  jobs::Space space_;
  std::uint64_t seed_;
};

/// A finished task of another run ([policy] warm_start): an earlier task for the model.
struct WarmTask {
  std::string source;  ///< "<run directory>:<task>"
  std::vector<jobs::Config> configs;
  std::vector<double> objectives;  ///< as that run measured them
  jobs::Direction direction = jobs::Direction::maximize;
};

struct PolicyOptions {
  /// Refit after every round of results before proposing (exactly reproducible runs).
  bool sync = false;
  /// Where a policy reports what people should know (a fit that failed, ...); master thread.
  std::function<void(const std::string&)> log;
  /// Earlier tasks from other runs, modelled before this run's tasks.
  std::vector<WarmTask> warm_start;
};

/// The policy the job's [policy] table asks for.
std::unique_ptr<Policy> make_policy(const jobs::JobSpec& job, PolicyOptions options = {});

}  // namespace lbo::orchestrator
