// lbo compare: the job run once per method and seed, each run an ordinary lbo run in its own
// run directory (so each is resumable, and one that finished is not run again), then one
// comparison of them all (report/include/lbo/report/comparison.hpp).

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <span>
#include <sstream>

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include "commands.hpp"
#include "lbo/jobs/error.hpp"
#include "lbo/jobs/job_spec.hpp"
#include "lbo/orchestrator/master.hpp"
#include "lbo/orchestrator/recovery.hpp"
#include "lbo/orchestrator/run_directory.hpp"
#include "lbo/orchestrator/stop_signals.hpp"
#include "lbo/report/comparison.hpp"

namespace lbo::orchestrator {

namespace {

namespace fs = std::filesystem;

void check_methods(const std::vector<std::string>& methods) {
  const std::span<const jobs::SurrogateTraits> catalog = jobs::surrogate_catalog();
  std::string names;
  for (std::size_t i = 0; i < catalog.size(); ++i) names += std::string(i == 0 ? "" : ", ") + std::string(catalog[i].name);
  if (methods.empty()) throw InputError("lbo compare: --surrogates: name at least one, from " + names);
  for (std::size_t i = 0; i < methods.size(); ++i) {
    const bool known = std::any_of(catalog.begin(), catalog.end(), [&](const jobs::SurrogateTraits& t) { return t.name == methods[i]; });
    if (!known) throw InputError("lbo compare: --surrogates: \"" + methods[i] + "\" is not a surrogate; use " + names);
    if (std::find(methods.begin(), methods.begin() + static_cast<std::ptrdiff_t>(i), methods[i]) != methods.begin() + static_cast<std::ptrdiff_t>(i)) {
      throw InputError("lbo compare: --surrogates: \"" + methods[i] + "\" is named twice");
    }
  }
}

// The job file with another surrogate, seed and name, read as the job file (its relative paths
// against the job file's folder). The text is what the run directory freezes as its job.toml.
jobs::JobSpec variant(const toml::table& file, const std::string& job_file, const std::string& method, std::int64_t seed,
                      const std::string& name) {
  toml::table t = file;
  t.insert_or_assign("name", name);
  t.insert_or_assign("seed", seed);
  if (!t.contains("policy")) t.insert_or_assign("policy", toml::table{});
  t["policy"].as_table()->insert_or_assign("surrogate", method);
  std::ostringstream text;
  text << "# lbo compare: " << job_file << " with surrogate = \"" << method << "\", seed = " << seed << "\n" << t << "\n";
  try {
    return jobs::parse_job(text.str(), job_file);
  } catch (const InputError& e) {
    throw InputError("lbo compare: " + job_file + " with surrogate = \"" + method + "\": " + e.what());
  }
}

bool finished(const fs::path& dir) {
  if (!RunPaths(dir).holds_run()) return false;
  const RecoveredRun run = recover_run(dir);
  return !run.empty() && run.state.all_budgets_done() && run.state.interrupted().empty();
}

}  // namespace

int compare_command(const CompareOptions& options, cluster::MpiSession* mpi) {
  check_run_options(options.run);
  check_methods(options.methods);
  const jobs::JobSpec job = jobs::load_job_file(options.run.job_file);  // bad input: exit 2, nothing written
  const toml::table file = toml::parse_file(options.run.job_file);
  RunOptions run = options.run;
  run.run_root = (fs::path(options.run.run_root) / (job.name + "-compare")).string();
  std::vector<report::ComparedRun> runs;
  // Every variant is read before the first runs: one that does not parse stops nothing midway.
  std::vector<jobs::JobSpec> jobs;
  for (int seed = 1; seed <= options.seeds; ++seed) {
    for (const std::string& method : options.methods) {
      const std::string name = method + "-seed" + std::to_string(seed);
      jobs.push_back(variant(file, options.run.job_file, method, job.seed + seed - 1, name));
      runs.push_back({method, seed, fs::path(run.run_root) / name});
    }
  }
  // Seed by seed, so that a stopped comparison has every method's runs of its first seeds.
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const std::string what = runs[i].method + ", seed " + std::to_string(runs[i].seed) + " (" + std::to_string(i + 1) + "/" +
                             std::to_string(runs.size()) + ")";
    if (finished(runs[i].dir)) {
      std::cerr << "lbo compare: " << what << ": finished in " << runs[i].dir.string() << "\n";
      continue;
    }
    std::cerr << "lbo compare: " << what << " in " << runs[i].dir.string() << "\n";
    const int exit_code = run_job(jobs[i], run, mpi);
    // The run's signal handling ended with it (back to the default action): until the next
    // run starts, a stop signal is held as from main, and that run stops at once.
    hold_stop_signals();
    if (exit_code != kExitDone) {
      std::cerr << "lbo compare: stopped at " << what << " (exit " << exit_code << ")"
                << (exit_code == kExitResumable ? "; the same command continues it" : "") << "\n";
      return exit_code;
    }
  }
  const nlohmann::json data = report::comparison_data(runs, job.objective.reference);
  const fs::path csv = fs::path(run.run_root) / "compare.csv", html = fs::path(run.run_root) / "compare.html";
  report::write_comparison_csv(data, csv);
  report::write_comparison_html(data, html);
  std::cout << report::comparison_summary(data) << "compare: " << csv.string() << ", " << html.string() << "\n";
  return kExitDone;
}

}  // namespace lbo::orchestrator
