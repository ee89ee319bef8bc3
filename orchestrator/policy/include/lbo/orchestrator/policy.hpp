#pragma once
// Policy: given the run so far, the configuration a new trial should evaluate.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lbo/jobs/space.hpp"
#include "lbo/orchestrator/policy_state.hpp"
#include "lbo/orchestrator/proposal.hpp"
#include "lbo/orchestrator/run_state.hpp"

namespace lbo::orchestrator {

/// What the model says of one modelled task (a run task, or one step of a stepwise task), for
/// reports. Model tasks are ordered task by task, steps within a task.
struct TaskModelReport {
  std::vector<double> usage;  ///< q(z_m = 1) for each latent network (lbo); empty otherwise
  /// Correlation of its posterior mean with every model task's, over points spread across the
  /// space (LBO Fig. 2c); empty before the first fit.
  std::vector<double> similarity;
  /// LiBO: the kernel k̂ its GP was last fitted with ("k_full", or the active kernels' names
  /// joined by " + "); empty for other models.
  std::string kernels;
};

class Policy {
 public:
  virtual ~Policy() = default;
  /// A valid configuration of the job's space for new trial `trial` of `task`. Never waits for
  /// a model fit.
  virtual jobs::Config propose(const RunState& state, int task, std::int64_t trial) = 0;
  /// A new trial for one of the `open` tasks (non-empty, job order). The base policy serves
  /// the first; a model-based one lets each open task nominate and picks by Hedge.
  virtual Proposal propose_among(const RunState& state, const std::vector<int>& open, std::int64_t trial) {
    return {open.front(), propose(state, open.front(), trial), ProposalSource::model, {}};
  }
  /// Per model task (see TaskModelReport), from the newest fit; empty for a model-free policy.
  virtual std::vector<TaskModelReport> model_report(const RunState& state) {
    (void)state;
    return {};
  }
  /// Results were committed. A model-based policy refits on a thread of its own and returns at
  /// once. A --sync run (whose master calls this at the end of each round) proposes only once
  /// fitting() is false again: PolicyOptions::fitted says when.
  virtual void results_committed(const RunState& state) { (void)state; }
  /// What a checkpoint should keep (nothing for a stateless policy).
  virtual PolicyState state(const RunState& run) {
    (void)run;
    return {};
  }
  /// Continues from a checkpointed state; `run` is the run as recovered. Call before proposing.
  virtual void restore(const PolicyState& saved, const RunState& run) {
    (void)saved;
    (void)run;
  }
  /// Whether a fit runs in the background now (a simulated run's clock then waits for it in
  /// real time instead of jumping ahead of it; a --sync run waits for it before it proposes).
  virtual bool fitting() const { return false; }
  /// Blocks until no fit is under way (a --sync resume replaying the killed master's fits).
  virtual void await_fit() const {}
  /// Whether results committed since the last fit still await one (a --sync run stopped after
  /// its round ended but before the refit; resuming, it refits before it proposes).
  virtual bool refit_due(const RunState& run) const {
    (void)run;
    return false;
  }
};

class TableRows;  // policy/src/table_rows.hpp

/// Uniform sampling that respects `when` conditions. Trial t draws from its own stream,
/// seeded from (job seed, t), so proposals do not depend on the order results arrive in. With a
/// table that restricts proposals (`rows`), a row the task has not taken, drawn uniformly.
class RandomPolicy final : public Policy {
 public:
  RandomPolicy(jobs::Space space, std::uint64_t seed, std::shared_ptr<const TableRows> rows = nullptr);
  jobs::Config propose(const RunState& state, int task, std::int64_t trial) override;
  /// Several open tasks: one at random (seeded by the trial), as nothing tells them apart.
  Proposal propose_among(const RunState& state, const std::vector<int>& open, std::int64_t trial) override;

 private:
  jobs::Space space_;
  std::uint64_t seed_;
  std::shared_ptr<const TableRows> rows_;
};

/// A finished task of another run ([policy] warm_start): an earlier task for the model.
struct WarmTask {
  std::string source;  ///< "<run directory>:<task>"
  std::vector<jobs::Config> configs;
  std::vector<double> objectives;  ///< as that run measured them
  jobs::Direction direction = jobs::Direction::maximize;
  /// Per result, 1 where it broke a limit of that run's [[constraints]] (results.csv's
  /// `infeasible`): a result the models learn, never an earlier best. Empty: none did.
  std::vector<char> infeasible;
  /// With several objectives ([objective] objectives), per result each of this job's objectives'
  /// values in this job's order, found by name in that run (`objectives` holds the first's).
  /// Empty with one.
  std::vector<std::vector<double>> values;
};

/// One draw of a Hedge for a new trial (hedge.csv): GP-Hedge over acquisition functions
/// ("acquisition", for `task`), or Hedge over the open tasks or a task's steps ("tasks", "steps").
struct HedgeDraw {
  std::int64_t trial = 0;
  std::string over;
  std::string task;  ///< whose acquisition functions; empty for "tasks" and "steps"
  std::vector<std::string> options;
  std::vector<double> probabilities;  ///< of each option, summing to 1
  std::size_t chosen = 0;

  friend bool operator==(const HedgeDraw&, const HedgeDraw&) = default;
};

struct PolicyOptions {
  /// Refit after every round of results before proposing (exactly reproducible runs).
  bool sync = false;
  /// Where a policy reports what people should know (a fit that failed, ...); master thread.
  std::function<void(const std::string&)> log;
  /// Every Hedge draw of a proposal that is handed out; master thread.
  std::function<void(const HedgeDraw&)> hedge;
  /// Earlier tasks from other runs, modelled before this run's tasks.
  std::vector<WarmTask> warm_start;
  /// OpenMP threads of each fit and proposal (fit_threads()).
  int threads = 1;
  /// --sync: called on the fit's thread when the fit results_committed asked for is published
  /// (so the master can propose again). It must only post the news to the master's loop.
  std::function<void()> fitted;
};

/// How many threads the model's fits and proposals use, and why (for the log): [policy]
/// fit_threads; else OMP_NUM_THREADS; else, under MPI, the cores of this process's affinity mask
/// (the master rank's node or share of it), or all of them for a tabulated objective (it starts
/// no process); else those cores less the local slots, at least 1, so local objectives are not
/// starved.
struct FitThreads {
  int count = 1;
  std::string why;
};
FitThreads fit_threads(const jobs::JobSpec& job, bool under_mpi);

/// The policy the job's [policy] table asks for.
std::unique_ptr<Policy> make_policy(const jobs::JobSpec& job, PolicyOptions options = {});

}  // namespace lbo::orchestrator
