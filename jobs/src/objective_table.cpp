#include "lbo/jobs/objective_table.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include <nanoflann.hpp>

#include "lbo/jobs/csv.hpp"
#include "lbo/jobs/error.hpp"

namespace lbo::jobs {

namespace {

double squared_distance(const std::vector<double>& a, const std::vector<double>& b) {
  double squared = 0;
  for (std::size_t i = 0; i < a.size(); ++i) squared += (a[i] - b[i]) * (a[i] - b[i]);
  return squared;
}

// Marks each row whose encoded point an earlier row of `rows` has (Row::repeat); returns the
// rows left. One sort, O(n log n): a nearest-row query per row was O(n·k) with k copies of each
// point (a table of 1,000 configurations run 1,000 times each took a minute before the run).
std::size_t mark_repeats(std::vector<ObjectiveTable::Row>& rows) {
  std::vector<std::size_t> order(rows.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return rows[a].encoded != rows[b].encoded ? rows[a].encoded < rows[b].encoded : a < b;
  });
  std::size_t distinct = 0;
  for (std::size_t k = 0; k < order.size(); ++k) {
    rows[order[k]].repeat = k > 0 && rows[order[k]].encoded == rows[order[k - 1]].encoded;
    if (!rows[order[k]].repeat) ++distinct;
  }
  return distinct;
}

}  // namespace

// The k-d tree over one task's encoded rows. nanoflann reads the points through `Points`
// and keeps a reference to it, so both live here, on the heap, and never move.
class ObjectiveTable::TaskIndex {
 public:
  explicit TaskIndex(const std::vector<Row>& rows)
      : points_(rows), tree_(static_cast<int>(points_.d), points_, nanoflann::KDTreeSingleIndexAdaptorParams(kLeafSize)) {}

  /// The nearest of `rows` (those the index was built on) to `x`.
  Match nearest(const std::vector<Row>& rows, const std::vector<double>& x) const {
    std::size_t found[2] = {0, 0};
    double found_squared[2] = {0, 0};
    const std::size_t count = tree_.knnSearch(x.data(), 2, found, found_squared);
    // The tree keeps any one of equally near rows: every row within a hair of the distance
    // found is a candidate, and the choice among them is the scan's (the least distance; of
    // equals, the first in the file). Usually the second nearest is farther: none to choose.
    const double hair = found_squared[0] * (1 + 1e-9) + 1e-300;
    if (count < 2 || found_squared[1] > hair) return {&rows[found[0]], std::sqrt(squared_distance(x, rows[found[0]].encoded))};
    std::vector<std::pair<std::size_t, double>> near;
    tree_.radiusSearch(x.data(), hair, near, nanoflann::SearchParams(32, 0, false));
    Match best{nullptr, std::numeric_limits<double>::infinity()};
    std::size_t best_index = rows.size();
    for (const auto& [index, squared] : near) {
      const double distance = std::sqrt(squared_distance(x, rows[index].encoded));
      if (distance < best.distance || (distance == best.distance && index < best_index)) {
        best = {&rows[index], distance};
        best_index = index;
      }
    }
    return best;
  }

 private:
  static constexpr std::size_t kLeafSize = 16;

  // nanoflann's dataset adaptor: the rows' encoded points side by side (a search touches one
  // cache line per point, not a Row and then its vector).
  struct Points {
    explicit Points(const std::vector<Row>& rows) : d(rows.front().encoded.size()) {
      coordinates.reserve(rows.size() * d);
      for (const Row& row : rows) coordinates.insert(coordinates.end(), row.encoded.begin(), row.encoded.end());
    }
    std::size_t kdtree_get_point_count() const { return coordinates.size() / d; }
    double kdtree_get_pt(std::size_t i, std::size_t dim) const { return coordinates[i * d + dim]; }
    template <class Box>
    bool kdtree_get_bbox(Box&) const { return false; }

    std::size_t d;
    std::vector<double> coordinates;  // row-major, d per row
  };
  using Tree = nanoflann::KDTreeSingleIndexAdaptor<nanoflann::L2_Simple_Adaptor<double, Points>, Points, -1, std::size_t>;

  Points points_;
  Tree tree_;
};

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
  // rows_ is complete: its vectors no longer move (a map's nodes stay put when the table moves).
  for (auto& [task, rows] : table.rows_) {
    table.distinct_[task] = mark_repeats(rows);
    table.indexes_.emplace(task, std::make_shared<const TaskIndex>(rows));
  }
  return table;
}

std::size_t ObjectiveTable::distinct_rows(std::string_view task) const {
  const auto at = distinct_.find(std::string(task));
  return at == distinct_.end() ? 0 : at->second;
}

std::string ObjectiveTable::task_problem(std::string_view task, int budget) const {
  const std::string file = spec_.path.filename().string();
  const std::vector<Row>& mine = rows(task);
  if (mine.empty()) {
    std::string known;
    for (std::size_t i = 0; i < task_names_.size() && i < 10; ++i) known += (i > 0 ? ", \"" : "\"") + task_names_[i] + "\"";
    if (task_names_.size() > 10) known += ", ... (" + std::to_string(task_names_.size()) + " in all)";
    return "no row of " + file + " is of task \"" + std::string(task) + "\" (column \"" + spec_.task_column +
           "\"); its tasks are " + known;
  }
  const std::size_t distinct = distinct_rows(task);
  if (spec_.restricted && static_cast<std::size_t>(budget) > distinct) {
    const std::size_t repeats = mine.size() - distinct;
    return std::to_string(budget) + " trials are more than the " + std::to_string(distinct) + " configuration(s) of task \"" +
           std::string(task) + "\" in " + file +
           (repeats > 0 ? " (" + std::to_string(mine.size()) + " rows, " + std::to_string(repeats) +
                              " of them repeating an earlier row's configuration)"
                        : "") +
           ", and objective.table_restrict proposes each at most once; lower the budget";
  }
  return {};
}

const std::vector<ObjectiveTable::Row>& ObjectiveTable::rows(std::string_view task) const {
  static const std::vector<Row> none;
  const auto at = rows_.find(std::string(task));
  return at == rows_.end() ? none : at->second;
}

ObjectiveTable::Match ObjectiveTable::nearest(std::string_view task, const Config& config) const {
  const auto at = indexes_.find(std::string(task));
  if (at == indexes_.end()) return {nullptr, 0};
  return at->second->nearest(rows(task), encoder_->encode(config));
}

}  // namespace lbo::jobs
