#pragma once
// A tabulated objective ([objective] table): earlier evaluations that stand in for a command.
// A trial's value is that of its task's nearest tabulated configuration in the encoded unit box
// (encoding.hpp): Euclidean distance, where a categorical that differs counts √2 (its one-hot
// coordinates), so a row with the trial's choices is preferred over one a little closer in
// the numbers; of rows at the same distance, the first in the file. No process is started.
// Each task's rows are held in a k-d tree (nanoflann), so a lookup costs O(log n), not O(n):
// a simulated run looks up every trial, and a restricting table every trial at each proposal.

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "lbo/jobs/encoding.hpp"
#include "lbo/jobs/space.hpp"

namespace lbo::jobs {

struct ObjectiveTableSpec {
  std::filesystem::path path;      ///< absolute
  std::string objective_column;    ///< table_objective
  std::string task_column = "task";  ///< table_task
  std::string time_column;         ///< table_time: an evaluation's duration in seconds; empty: none
  /// table_restrict: proposals are the task's tabulated configurations only, each at most once
  bool restricted = false;
};

class ObjectiveTable {
 public:
  struct Row {
    std::size_t line = 0;  ///< in the file
    Config config;
    std::vector<double> encoded;
    std::optional<double> objective;  ///< none: a failed evaluation (an empty, non-number or NaN cell)
    std::optional<double> time_s;
    /// An earlier row of its task has the same encoded point, so this one is never the nearest
    /// (ties go to the first): it repeats a configuration (another seed's run, say).
    bool repeat = false;
  };
  struct Match {
    const Row* row = nullptr;  ///< null: the table has no row for the task
    double distance = 0;
  };

  /// Reads the file of `spec` against `space`. Every row must name its task and hold a value of
  /// each parameter active in it, within the space; a time, if the column is named, must be a
  /// number >= 0. Throws InputError with up to 5 problems, each "FILE:LINE: what; fix".
  static ObjectiveTable load(const ObjectiveTableSpec& spec, const Space& space);

  const ObjectiveTableSpec& spec() const { return spec_; }
  /// The tasks of the table, in the order of their first row.
  const std::vector<std::string>& tasks() const { return task_names_; }
  /// The rows of `task` (none for a task the table lacks), in file order.
  const std::vector<Row>& rows(std::string_view task) const;
  /// The configurations of `task`'s rows: its rows less those that repeat an earlier one.
  std::size_t distinct_rows(std::string_view task) const;
  /// Why a task `task` with `budget` trials cannot run on this table, empty when it can: the
  /// table has no row of it, or (table_restrict) the budget is more than its distinct
  /// configurations, each proposed at most once. For the job file, add-task and watched files.
  std::string task_problem(std::string_view task, int budget) const;
  /// `config`'s nearest row of `task`.
  Match nearest(std::string_view task, const Config& config) const;
  /// `config` in the encoded unit box the distances are measured in (Row::encoded's).
  std::vector<double> encode(const Config& config) const { return encoder_->encode(config); }
  std::size_t row_count() const { return row_count_; }
  std::size_t failed_count() const { return failed_count_; }

 private:
  class TaskIndex;  // objective_table.cpp: the k-d tree over a task's encoded rows

  ObjectiveTableSpec spec_;
  std::optional<Encoder> encoder_;  ///< set by load
  std::vector<std::string> task_names_;
  std::unordered_map<std::string, std::vector<Row>> rows_;
  std::unordered_map<std::string, std::shared_ptr<const TaskIndex>> indexes_;  ///< one per task of rows_
  std::unordered_map<std::string, std::size_t> distinct_;  ///< per task of rows_
  std::size_t row_count_ = 0, failed_count_ = 0;
};

}  // namespace lbo::jobs
