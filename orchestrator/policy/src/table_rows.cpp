#include "table_rows.hpp"

#include <cmath>
#include <limits>
#include <set>

namespace lbo::orchestrator {

std::shared_ptr<const TableRows> TableRows::of(const jobs::JobSpec& job) {
  if (!job.objective.table_data || !job.objective.table || !job.objective.table->restricted) return nullptr;
  return std::make_shared<const TableRows>(job.objective.table_data);
}

TableRows::TableRows(std::shared_ptr<const jobs::ObjectiveTable> table) : table_(std::move(table)) {}

const std::vector<jobs::ObjectiveTable::Row>& TableRows::rows_of(const RunState& state, int task) const {
  return table_->rows(state.job().tasks[static_cast<std::size_t>(task)].name);
}

std::vector<const jobs::ObjectiveTable::Row*> TableRows::untaken(const RunState& state, int task) const {
  const std::string& name = state.job().tasks[static_cast<std::size_t>(task)].name;
  std::set<const jobs::ObjectiveTable::Row*> taken;
  for (std::int64_t id : state.task_trials(task)) taken.insert(table_->nearest(name, state.trial(id).config).row);
  std::vector<const jobs::ObjectiveTable::Row*> left;
  for (const jobs::ObjectiveTable::Row& row : rows_of(state, task)) {
    if (!taken.contains(&row) && !row.repeat) left.push_back(&row);
  }
  return left;
}

std::optional<jobs::Config> TableRows::draw(const RunState& state, int task, std::mt19937_64& rng) const {
  const std::vector<const jobs::ObjectiveTable::Row*> left = untaken(state, task);
  if (left.empty()) return std::nullopt;
  return left[std::uniform_int_distribution<std::size_t>(0, left.size() - 1)(rng)]->config;
}

std::optional<jobs::Config> TableRows::nearest_untaken(const RunState& state, int task, const jobs::Config& config) const {
  const std::vector<const jobs::ObjectiveTable::Row*> left = untaken(state, task);
  if (left.empty()) return std::nullopt;
  // The table's distance (ObjectiveTable::nearest), over the untaken rows.
  const std::vector<double> x = table_->encode(config);
  const jobs::ObjectiveTable::Row* best = nullptr;
  double best_d = std::numeric_limits<double>::infinity();
  for (const jobs::ObjectiveTable::Row* row : left) {
    double d = 0;
    for (std::size_t i = 0; i < x.size(); ++i) d += (x[i] - row->encoded[i]) * (x[i] - row->encoded[i]);
    if (d < best_d) {
      best = row;
      best_d = d;
    }
  }
  return best->config;
}

std::optional<jobs::Config> TableRows::nearest_if_untaken(const RunState& state, int task, const jobs::Config& config) const {
  const std::string& name = state.job().tasks[static_cast<std::size_t>(task)].name;
  const jobs::ObjectiveTable::Row* row = table_->nearest(name, config).row;
  for (std::int64_t id : state.task_trials(task)) {
    if (table_->nearest(name, state.trial(id).config).row == row) return std::nullopt;
  }
  return row->config;
}

Eigen::MatrixXd TableRows::encoded_untaken(const RunState& state, int task) const {
  const std::vector<const jobs::ObjectiveTable::Row*> left = untaken(state, task);
  const auto d = left.empty() ? Eigen::Index{0} : static_cast<Eigen::Index>(left.front()->encoded.size());
  Eigen::MatrixXd X(static_cast<Eigen::Index>(left.size()), d);
  for (std::size_t i = 0; i < left.size(); ++i) {
    for (Eigen::Index j = 0; j < d; ++j) X(static_cast<Eigen::Index>(i), j) = left[i]->encoded[static_cast<std::size_t>(j)];
  }
  return X;
}

}  // namespace lbo::orchestrator
