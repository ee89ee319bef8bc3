#include <map>

#include "lbo/jobs/protocol.hpp"
#include "sections.hpp"

namespace fs = std::filesystem;

namespace lbo::jobs::job_file {

namespace {

// The largest resource budget: far from overflow when steps are summed.
constexpr std::int64_t kMaxBudgetSteps = 1'000'000'000'000;

// name, dataset and budgets of one [[tasks]] table; `first_line` keeps the line of each name.
TaskSpec read_task(Reader& r, const toml::table& t, const std::string& prefix, bool uses_dataset, const JobSpec& job,
                   std::map<std::string, std::size_t>& first_line) {
  r.check_keys(t, prefix, {"name", "dataset", "budget", "budget_steps"});
  TaskSpec task;
  if (const auto name = r.get_string(t, "name", prefix, true)) {
    task.name = *name;
    if (!is_valid_name(*name)) {
      r.error(*t.get("name"), prefix + ".name", in_quotes(*name) + " is not a usable task name; use letters, digits, '.', '_' and '-'");
    } else if (const auto [it, inserted] = first_line.emplace(*name, t.source().begin.line); !inserted) {
      r.error(*t.get("name"), prefix + ".name",
              "duplicate task name " + in_quotes(*name) + " (first used on line " + std::to_string(it->second) +
                  "); task names must be unique");
    }
  }
  if (const auto dataset = r.get_string(t, "dataset", prefix, false)) {
    const fs::path resolved = r.resolve(*dataset);
    std::error_code ec;
    if (!fs::exists(resolved, ec)) {
      r.error(*t.get("dataset"), prefix + ".dataset", in_quotes(*dataset) + " does not exist (looked for " + resolved.string() + ")");
    }
    task.dataset = resolved;
  } else if (uses_dataset && t.get("dataset") == nullptr) {
    r.error(t, prefix + ".dataset", "missing; objective.command uses {dataset}, so every task needs a dataset");
  }
  if (const auto budget = r.get_int_in(t, "budget", prefix, true, 1, kMaxBudget, kBudgetRule)) task.budget = *budget;
  if (const toml::node* node = t.get("budget_steps")) {
    if (!job.early_stopping) {
      r.error(*node, prefix + ".budget_steps", "counts [early_stopping] steps; add an [early_stopping] table or remove it");
    } else if (const auto steps = r.get_int(t, "budget_steps", prefix, false)) {
      if (*steps < 1 || *steps > kMaxBudgetSteps) {
        r.error(*node, prefix + ".budget_steps", "must be an integer between 1 and 10^12 (steps summed over the task's "
                                                 "trials; got " + std::to_string(*steps) + ")");
      } else {
        task.budget_steps = *steps;
      }
    }
  }
  return task;
}

}  // namespace

void read_tasks(Reader& r, const toml::table& root, JobSpec& job) {
  const toml::node* node = root.get("tasks");
  if (node == nullptr) {
    // Tasks may all come from the watched folder.
    if (!job.schedule.watch) {
      r.error(root.source(), "tasks", "missing; add at least one [[tasks]] table with name and budget (or [schedule] watch)");
    }
    return;
  }
  const toml::array* array = node->as_array();
  if (array == nullptr || !array->is_array_of_tables() || array->empty()) {
    r.error(*node, "tasks", "must be an array of tables: write each task as a [[tasks]] table");
    return;
  }
  bool uses_dataset = false;
  for (const std::string& arg : job.objective.command) uses_dataset = uses_dataset || uses_placeholder(arg, "dataset");
  std::map<std::string, std::size_t> first_line;
  for (std::size_t i = 0; i < array->size(); ++i) {
    job.tasks.push_back(read_task(r, *array->get(i)->as_table(), "tasks[" + std::to_string(i) + "]", uses_dataset, job, first_line));
  }
}

}  // namespace lbo::jobs::job_file
