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
/// {"direction", "measure", "methods": [...], "seeds", "tasks": [{"name", "trials",
///   "series": {method: {"mean": [...], "se": [...], "runs": [...]}},     // index k − 1
///   "paired": {method: {"mean", "se", "better", "worse"}}}]}             // not the first's
/// A run's best so far after k trials is the best feasible ok result among its task's first k
/// trials (in trial order); a run without one yet leaves k's figures to the others (`runs`).
/// With several objectives ([objective] objectives; "measure": "hypervolume", "direction":
/// "maximize", "objectives": [{"name", "direction"}]) it is instead the hypervolume those
/// results dominate, from one reference point per task for every run (each task's "reference"
/// and "reference_from": `reference`'s value where it is finite, the job's, else derived from
/// the feasible results of all the runs). The paired advantage at k is the mean over the seeds
/// both have of the first method's figure less the other's (the other's less the first's when
/// minimizing): > 0, the first is better. Throws std::invalid_argument when the runs name other
/// objectives.
nlohmann::json comparison_data(const std::vector<ComparedRun>& runs, const std::vector<double>& reference = {});

/// compare.csv: task,trials,method,runs,mean_best,stderr,paired_advantage,paired_stderr,
/// first_better,first_worse,measure (a row per task, number of trials and method; the paired
/// columns empty for the first method, a standard error empty under two seeds; `measure` says
/// what mean_best is: "best", or "hypervolume" with several objectives).
void write_comparison_csv(const nlohmann::json& data, const std::filesystem::path& file);
/// compare.html: a self-contained page (the chart library inline).
void write_comparison_html(const nlohmann::json& data, const std::filesystem::path& file);
/// The figures at a few numbers of trials, as a text table for the console.
std::string comparison_summary(const nlohmann::json& data);

}  // namespace lbo::report
