#pragma once
// A work order evaluated from a tabulated objective ([objective] table) instead of a command:
// its task (LBO_TASK) and configuration (params.json) looked up in the table, no process.

#include <optional>

#include "lbo/jobs/objective_table.hpp"
#include "lbo/jobs/space.hpp"
#include "lbo/workers/work_order.hpp"

namespace lbo::workers {

/// `ok` with the nearest row's objective (jobs::ObjectiveTable::nearest) and, in its metrics,
/// the row's line, its distance from the configuration and its time (table_line,
/// table_distance, table_time_s); `failed` with the reason when that row's evaluation failed,
/// the table has no row for the task, or the order is none of lbo's. Takes no time.
Outcome evaluate_tabulated(const jobs::ObjectiveTable& table, const jobs::Space& space, const WorkOrder& order);

/// evaluate_tabulated's outcome and the time of the row it came from (none without a time
/// column or a row).
struct TabulatedEvaluation {
  Outcome outcome;
  std::optional<double> time_s;
};
TabulatedEvaluation look_up_tabulated(const jobs::ObjectiveTable& table, const jobs::Space& space, const WorkOrder& order);

}  // namespace lbo::workers
