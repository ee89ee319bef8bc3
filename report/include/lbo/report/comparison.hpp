#pragma once
// The comparison of one job's runs with several methods and seeds (lbo compare): per task and
// number of trials, each method's mean best so far with its standard error over seeds, and
// the first method's paired advantage over each other one, seed by seed. Written as
// compare.csv and as compare.html, whose charts put every method of a task on the same axes.

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace lbo::report {

struct ComparedRun {
  std::string method;
  int seed = 1;
  std::filesystem::path dir;  ///< its run directory, finished
};

/// The figures, from the runs' journals:
/// {"direction", "methods": [...], "seeds", "tasks": [{"name", "trials",
///   "series": {method: {"mean": [...], "se": [...], "runs": [...]}},     // index k − 1
///   "paired": {method: {"mean", "se", "better", "worse"}}}]}             // not the first's
/// A run's best so far after k trials is the best ok result among its task's first k trials
/// (in trial order); a run without one yet leaves k's figures to the others (`runs`). The
/// paired advantage at k is the mean over the seeds both have of the first method's best less
/// the other's (the other's less the first's when minimizing): > 0, the first is better.
nlohmann::json comparison_data(const std::vector<ComparedRun>& runs);

/// compare.csv: task,trials,method,runs,mean_best,stderr,paired_advantage,paired_stderr,
/// first_better,first_worse (a row per task, number of trials and method; the paired columns
/// empty for the first method, a standard error empty under two seeds).
void write_comparison_csv(const nlohmann::json& data, const std::filesystem::path& file);
/// compare.html: a self-contained page (the chart library inline).
void write_comparison_html(const nlohmann::json& data, const std::filesystem::path& file);
/// The figures at a few numbers of trials, as a text table for the console.
std::string comparison_summary(const nlohmann::json& data);

}  // namespace lbo::report
