#pragma once
// Nominations: each open task's candidate for the next trial. A task's model task (each step
// of a stepwise objective; with rung tasks, the first of its proposing steps with something to
// learn from) nominates the maximizer of its acquisition on its TaskBatch, scored by GP-Hedge's
// portfolio or the job's acquisition, among the configurations the task has not taken. Private
// to policy/.

#include <cstdint>
#include <optional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "bases.hpp"
#include "encoded_space.hpp"
#include "failure_model.hpp"
#include "hedge_portfolios.hpp"
#include "model_data.hpp"
#include "task_batch.hpp"
#include "lbo/jobs/objective_table.hpp"
#include "lbo/orchestrator/policy.hpp"
#include "lbo/surrogate/maximizer.hpp"

namespace lbo::orchestrator {

/// One open task's (or step's) candidate for the next trial.
struct Nomination {
  int task = 0, step = 0;
  jobs::Config config;
  double value = 0;  ///< its acquisition value, in the task's standardized units
  ProposalSource source = ProposalSource::model;
  std::string note;
  std::optional<HedgeDraw> arm_draw;  ///< GP-Hedge's choice of its acquisition function
};

class Nominations {
 public:
  /// `hedges`, `bases` and `failures` are the policy's (GP-Hedge's gains, the fits and the
  /// failure model outlive a nomination).
  Nominations(const jobs::JobSpec& job, const PolicyOptions& options, const ModelData& data, HedgePortfolios& hedges,
              Bases& bases, FailureModel& failures);

  /// Proposers for `slots` run model tasks (they only grow).
  void track(std::size_t slots) {
    batches_.resize(std::max(batches_.size(), slots));
    warpings_.resize(batches_.size());
  }
  /// `task`'s nominees: one per step of a stepwise objective (none if a step has nothing to
  /// learn from); with rung tasks, the first of its proposing steps that has something to learn
  /// from, logged when that step changes; else its one or none.
  std::vector<Nomination> of_task(const RunState& state, int task, std::int64_t trial);

 private:
  std::vector<surrogate::AcquisitionKind> arms_for(const Basis& basis) const;
  /// Each arm's best kRanked distinct candidates (all with `all`, unrefined), best first.
  std::vector<std::vector<surrogate::Maximum>> rank(TaskBatch& batch, const Basis& basis,
                                                    const std::vector<surrogate::AcquisitionKind>& arms,
                                                    bool all = false) const;
  /// How many ranked candidates a nomination looks through before it ranks them all: the first
  /// untaken one is nearly always among them, and ranking all 1,024 cost a quarter of a
  /// proposal at 2,048 slots.
  static constexpr int kRanked = 64;
  void note_proposing_step(const RunState& state, int task, int step, int preferred);
  void note_unbelieved(const RunState& state, int task, int step, const TaskBatch& batch);
  std::optional<Nomination> nominate(const RunState& state, int task, int step, std::int64_t trial, bool retry = true);
  bool take_untaken(const RunState& state, const std::vector<surrogate::Maximum>& ranked, Nomination& n) const;
  /// Whether `task` has taken `config` already (nominations.cpp says when a nearest row counts).
  bool taken(const RunState& state, int task, const jobs::Config& config) const;

  const jobs::JobSpec& job_;
  const PolicyOptions& options_;
  const ModelData& data_;
  HedgePortfolios& hedges_;
  Bases& bases_;
  FailureModel& failures_;
  JobEncodedSpace search_space_;
  std::shared_ptr<const TableRows> rows_;  ///< a table that restricts proposals; else null
  /// A tabulated objective that does not restrict proposals: a trial evaluates its nearest row,
  /// and a configuration whose nearest row the task took counts as taken; else null.
  std::shared_ptr<const jobs::ObjectiveTable> lookup_;
  /// Each trial's nearest row of `lookup_`, found once (a trial's configuration never changes).
  mutable std::unordered_map<std::int64_t, const jobs::ObjectiveTable::Row*> rows_of_trials_;
  RandomPolicy random_;
  std::vector<TaskBatch> batches_;   // per run model task
  std::vector<ModelData::WarpingMemo> warpings_;  // per run model task, for ModelData::trials_of
  std::vector<int> proposing_step_;  // per task, the model task its last nomination came from (rung tasks)
  std::vector<bool> unbelieved_noted_;  // per run model task: note_unbelieved() logged it
};

}  // namespace lbo::orchestrator
