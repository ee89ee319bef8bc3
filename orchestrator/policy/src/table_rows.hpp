#pragma once
// TableRows: a tabulated objective whose proposals are restricted to its rows
// ([objective] table_restrict, the protocol of the papers that publish such tables): each task
// proposes only its own tabulated configurations, each at most once. A row is taken by a task
// once one of the task's trials has it as its nearest row. Private to policy/.

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include <Eigen/Core>

#include "lbo/jobs/job_spec.hpp"
#include "lbo/orchestrator/run_state.hpp"

namespace lbo::orchestrator {

class TableRows {
 public:
  /// The job's restricting table; null without one (or when it does not restrict).
  static std::shared_ptr<const TableRows> of(const jobs::JobSpec& job);
  /// A row whose configuration another row before it repeats (Row::repeat) is left out: it
  /// could never be taken.
  explicit TableRows(std::shared_ptr<const jobs::ObjectiveTable> table);

  /// The rows of `task` none of its trials took, in file order.
  std::vector<const jobs::ObjectiveTable::Row*> untaken(const RunState& state, int task) const;
  /// An untaken row's configuration drawn uniformly with `rng`; none when every row is taken.
  std::optional<jobs::Config> draw(const RunState& state, int task, std::mt19937_64& rng) const;
  /// The untaken row nearest to `config` (the table's distance; ties to the first); none when
  /// every row is taken.
  std::optional<jobs::Config> nearest_untaken(const RunState& state, int task, const jobs::Config& config) const;
  /// The row nearest to `config` among all of `task`'s rows, when the task has not taken it;
  /// none when it has. An earlier task's best stands on this task as its nearest row: once that
  /// row is taken, the best is evaluated.
  std::optional<jobs::Config> nearest_if_untaken(const RunState& state, int task, const jobs::Config& config) const;
  /// The encoded untaken rows of `task` (n × d, rows in [0,1]^d): candidates for the acquisition.
  Eigen::MatrixXd encoded_untaken(const RunState& state, int task) const;

 private:
  const std::vector<jobs::ObjectiveTable::Row>& rows_of(const RunState& state, int task) const;

  std::shared_ptr<const jobs::ObjectiveTable> table_;
};

}  // namespace lbo::orchestrator
