#include "lbo/workers/tabulated.hpp"

#include <charconv>
#include <stdexcept>
#include <string>

namespace lbo::workers {

namespace {

std::string number(double value) {
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, end);
}

Outcome failed(std::string reason) {
  Outcome outcome;
  outcome.status = TrialStatus::failed;
  outcome.reason = std::move(reason);
  return outcome;
}

}  // namespace

Outcome evaluate_tabulated(const jobs::ObjectiveTable& table, const jobs::Space& space, const WorkOrder& order) {
  return look_up_tabulated(table, space, order).outcome;
}

TabulatedEvaluation look_up_tabulated(const jobs::ObjectiveTable& table, const jobs::Space& space, const WorkOrder& order) {
  const std::string file = table.spec().path.filename().string();
  std::string task;
  for (const EnvVar& var : order.env) {
    if (var.name == "LBO_TASK") task = var.value;
  }
  jobs::Config config;
  try {
    config = space.from_json(order.params_json);
  } catch (const std::invalid_argument& e) {
    return {failed(std::string("the table cannot look up this configuration: ") + e.what()), std::nullopt};
  }
  const jobs::ObjectiveTable::Match match = table.nearest(task, config);
  if (match.row == nullptr) return {failed("no row of " + file + " is of task \"" + task + "\""), std::nullopt};
  const jobs::ObjectiveTable::Row& row = *match.row;
  Outcome outcome;
  outcome.metrics_json = "{\"table_line\":" + std::to_string(row.line) + ",\"table_distance\":" + number(match.distance) +
                         (row.time_s ? ",\"table_time_s\":" + number(*row.time_s) : std::string()) + "}";
  if (!row.objective) {
    outcome.status = TrialStatus::failed;
    outcome.reason = "the nearest tabulated evaluation (" + file + ":" + std::to_string(row.line) + ") failed";
    return {std::move(outcome), row.time_s};
  }
  outcome.status = TrialStatus::ok;
  outcome.objective = *row.objective;
  return {std::move(outcome), row.time_s};
}

}  // namespace lbo::workers
