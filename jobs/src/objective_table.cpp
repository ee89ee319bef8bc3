#include "lbo/jobs/objective_table.hpp"

#include <cmath>
#include <limits>

#include "lbo/jobs/csv.hpp"
#include "lbo/jobs/error.hpp"

namespace lbo::jobs {

ObjectiveTable ObjectiveTable::load(const ObjectiveTableSpec& spec, const Space& space) {
  const CsvTable csv = read_csv_file(spec.path);
  const std::string file = spec.path.filename().string();
  std::vector<std::string> missing;
  const auto column = [&](const std::string& name) {
    const int c = csv.column(name);
    if (c < 0) missing.push_back("\"" + name + "\"");
    return c;
  };
  const int task_column = column(spec.task_column);
  const int objective_column = column(spec.objective_column);
  const int time_column = spec.time_column.empty() ? -1 : column(spec.time_column);
  std::vector<int> param_columns;
  for (const ParamSpec& p : space.params()) param_columns.push_back(column(p.name));
  if (!missing.empty()) {
    std::string list;
    for (const std::string& m : missing) list += (list.empty() ? "" : ", ") + m;
    throw InputError(file + ":1: no column " + list + " in its header; name the columns in [objective] (table_task, "
                     "table_objective, table_time) and give the space's parameters the table's column names");
  }

  ObjectiveTable table;
  table.spec_ = spec;
  table.encoder_.emplace(space);
  const Encoder& encoder = *table.encoder_;
  CsvProblems problems(file);
  for (const CsvRecord& record : csv.records) {
    const std::string task(csv.field(record, task_column));
    if (task.empty()) {
      problems.add(record.line, "no task in column \"" + spec.task_column + "\"");
      continue;
    }
    std::string why;
    const std::optional<Config> config =
        space.parse_config([&](int p) { return csv.field(record, param_columns[static_cast<std::size_t>(p)]); }, why);
    if (!config) {
      problems.add(record.line, why + std::string(kRowFix));
      continue;
    }
    Row row{record.line, *config, encoder.encode(*config), parse_number(csv.field(record, objective_column)), std::nullopt};
    if (time_column >= 0) {
      row.time_s = parse_number(csv.field(record, time_column));
      if (!row.time_s || *row.time_s < 0) {
        problems.add(record.line, spec.time_column + ": \"" + std::string(csv.field(record, time_column)) +
                                      "\" is no duration; it must be a number of seconds >= 0");
        continue;
      }
    }
    auto [at, added] = table.rows_.try_emplace(task);
    if (added) table.task_names_.push_back(task);
    if (!row.objective) ++table.failed_count_;
    at->second.push_back(std::move(row));
    ++table.row_count_;
  }
  if (problems.count() > 0) throw InputError(std::to_string(problems.count()) + " problem(s) in the table:" + problems.lines());
  if (table.row_count_ == 0) throw InputError(file + ": no rows below its header; the table needs evaluations");
  return table;
}

const std::vector<ObjectiveTable::Row>& ObjectiveTable::rows(std::string_view task) const {
  static const std::vector<Row> none;
  const auto at = rows_.find(std::string(task));
  return at == rows_.end() ? none : at->second;
}

ObjectiveTable::Match ObjectiveTable::nearest(std::string_view task, const Config& config) const {
  const std::vector<double> x = encoder_->encode(config);
  Match best{nullptr, std::numeric_limits<double>::infinity()};
  for (const Row& row : rows(task)) {
    double squared = 0;
    for (std::size_t i = 0; i < x.size(); ++i) squared += (x[i] - row.encoded[i]) * (x[i] - row.encoded[i]);
    const double distance = std::sqrt(squared);
    if (distance < best.distance) best = {&row, distance};  // strict: the first of equals stays
  }
  if (best.row == nullptr) best.distance = 0;
  return best;
}

}  // namespace lbo::jobs
