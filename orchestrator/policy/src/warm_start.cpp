#include "lbo/orchestrator/warm_start.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "lbo/jobs/csv.hpp"
#include "lbo/jobs/error.hpp"
#include "lbo/orchestrator/job_identity.hpp"
#include "lbo/orchestrator/recovery.hpp"
#include "lbo/orchestrator/run_directory.hpp"

namespace lbo::orchestrator {

namespace {

// The index of the first of `names` in the header, or -1.
int column_of(const jobs::CsvTable& csv, std::initializer_list<std::string> names) {
  for (const std::string& name : names) {
    if (const int c = csv.column(name); c >= 0) return c;
  }
  return -1;
}

// Whether a row is a successful evaluation: its status (lbo's results.csv) is "ok", or its state
// (Optuna's trials_dataframe) "COMPLETE"; without either column, one with an objective.
bool succeeded(const jobs::CsvTable& csv, const jobs::CsvRecord& r, int status, int state) {
  if (status >= 0) return csv.field(r, status) == "ok";
  if (state >= 0) return csv.field(r, state) == "COMPLETE";
  return true;
}

// The columns a warm task is read from, each -1 where the file has none.
struct CsvColumns {
  int task = -1, objective = -1, status = -1, state = -1, infeasible = -1;
  std::vector<int> params;  // per parameter of the space
  // With several objectives, per objective past the first: lbo's results.csv names it
  // objective:<name>, Optuna's trials_dataframe values_<i> (by position).
  std::vector<int> others;
};

// The file's columns for `job`; throws, naming every one missing, when a parameter or an
// objective has none.
CsvColumns columns_of(const jobs::CsvTable& csv, const jobs::JobSpec& job, const std::string& where) {
  CsvColumns c;
  c.task = csv.column("task");
  c.objective = column_of(csv, {"objective", "value", "values_0"});
  c.status = csv.column("status");
  c.state = csv.column("state");
  c.infeasible = csv.column("infeasible");
  std::string missing;
  const auto lacks = [&missing](const std::string& what) { missing += (missing.empty() ? "" : ", ") + what; };
  for (const jobs::ParamSpec& p : job.space.params()) {
    c.params.push_back(column_of(csv, {p.name, "params_" + p.name}));
    if (c.params.back() < 0) lacks(p.name);
  }
  if (c.objective < 0) lacks("objective (or value)");
  for (std::size_t i = 1; i < job.objective.several.size(); ++i) {
    const std::string name = "objective:" + job.objective.several[i].name(), optuna = "values_" + std::to_string(i);
    c.others.push_back(column_of(csv, {name, optuna}));
    if (c.others.back() < 0) lacks(name + " (or " + optuna + ")");
  }
  if (!missing.empty()) {
    throw InputError(where + ":1: no column for " + missing + "; a row holds a task column (task), a column per " +
                     "parameter (its name, or params_<name>) and the objective (objective or value)");
  }
  return c;
}

// With several objectives, an ok row's value of each, `first` the first's; empty with one.
// Nothing, with the problem added, when one is no finite number.
std::optional<std::vector<double>> row_values(const jobs::CsvTable& csv, const jobs::CsvRecord& r, const CsvColumns& c,
                                              double first, jobs::CsvProblems& problems) {
  std::vector<double> values;
  if (c.others.empty()) return values;
  values.push_back(first);
  for (const int column : c.others) {
    const std::optional<double> v = jobs::parse_number(csv.field(r, column));
    if (!v) {
      problems.add(r.line, "an ok row's " + csv.header[static_cast<std::size_t>(column)] + " \"" +
                               std::string(csv.field(r, column)) + "\" is not a finite number");
      return std::nullopt;
    }
    values.push_back(*v);
  }
  return values;
}

// Earlier evaluations in a CSV file, one warm task per value of its task column (in the order
// they first appear; the whole file is one task, named by the file, without the column).
std::vector<WarmTask> tasks_of_csv(const std::filesystem::path& file, const std::string& place, const jobs::JobSpec& job,
                                   std::vector<std::string>* notes) {
  jobs::CsvTable csv;
  try {
    csv = jobs::read_csv_file(file);
  } catch (const InputError& e) {
    throw InputError(place + ": " + e.what());
  }
  const std::string where = place + ": " + file.string();
  const std::string name = file.filename().string();
  const CsvColumns c = columns_of(csv, job, where);
  std::vector<WarmTask> tasks;
  jobs::CsvProblems problems(name);
  jobs::CsvProblems no_number(file.string());  // rows without a status whose objective is no finite number
  std::size_t failed = 0;
  for (const jobs::CsvRecord& r : csv.records) {
    if (!succeeded(csv, r, c.status, c.state)) {  // a failure teaches nothing here
      ++failed;
      continue;
    }
    const std::optional<double> value = jobs::parse_number(csv.field(r, c.objective));
    if (!value) {
      // No status: a row without a value is taken for a failed evaluation, and said.
      if (c.status < 0 && c.state < 0) {
        no_number.add(r.line, "objective \"" + std::string(csv.field(r, c.objective)) + "\"");
        continue;
      }
      problems.add(r.line, "an ok row's objective \"" + std::string(csv.field(r, c.objective)) + "\" is not a finite number");
      continue;
    }
    std::optional<std::vector<double>> values = row_values(csv, r, c, *value, problems);
    if (!values) continue;
    std::string why;
    const std::optional<jobs::Config> config =
        job.space.parse_config([&](int p) { return csv.field(r, c.params[static_cast<std::size_t>(p)]); }, why);
    if (!config) {
      problems.add(r.line, why + std::string(jobs::kRowFix));
      continue;
    }
    const std::string label = c.task >= 0 ? std::string(csv.field(r, c.task)) : file.stem().string();
    auto at = std::find_if(tasks.begin(), tasks.end(), [&](const WarmTask& w) { return w.source == file.string() + ":" + label; });
    if (at == tasks.end()) {
      tasks.push_back(WarmTask{file.string() + ":" + label, {}, {}, job.objective.direction});
      at = tasks.end() - 1;
    }
    at->configs.push_back(*config);
    at->objectives.push_back(*value);
    at->infeasible.push_back(c.infeasible >= 0 && csv.field(r, c.infeasible) == "1" ? 1 : 0);
    if (!values->empty()) at->values.push_back(std::move(*values));
  }
  if (problems.count() > 0) {
    throw InputError(where + ": " + std::to_string(problems.count()) + " problem(s) in its rows:" + problems.lines());
  }
  if (notes != nullptr && no_number.count() > 0) {
    notes->push_back(where + ": " + std::to_string(no_number.count()) + " row(s) left out: their objective is no finite " +
                     "number, and without a status column such a row is taken for a failed evaluation:" + no_number.lines());
  }
  if (notes != nullptr && failed > 0) {
    notes->push_back(where + ": " + std::to_string(failed) + " row(s) left out: their status is not a success");
  }
  return tasks;
}

// With several objectives, the index in an earlier run's objectives of each of this job's, found
// by name; empty with one objective. Throws when that run lacks one of them.
std::vector<std::size_t> objectives_by_name(const RunState& state, const jobs::JobSpec& job, const std::string& where) {
  std::vector<std::size_t> named;
  if (job.objective.several.empty()) return named;
  const jobs::Objectives theirs = state.job().all_objectives();
  std::string lacking;
  for (const jobs::Objective& o : job.objective.several) {
    const std::ptrdiff_t i = theirs.index_of(o.name());
    if (i < 0) lacking += (lacking.empty() ? "" : ", ") + o.name();
    named.push_back(static_cast<std::size_t>(i));
  }
  if (!lacking.empty()) {
    std::string have;
    for (std::size_t i = 0; i < theirs.size(); ++i) have += (i == 0 ? "" : ", ") + theirs[i].name();
    throw InputError(where + ": its results have no value for " + lacking + " (they have " + have +
                     "); a warm start of several objectives takes runs that measured each of them, by name");
  }
  return named;
}

}  // namespace

std::vector<WarmTask> load_warm_start(const jobs::JobSpec& job, std::vector<std::string>* notes) {
  std::vector<WarmTask> tasks;
  const JobIdentity ours = JobIdentity::of(job);
  for (std::size_t i = 0; i < job.policy.warm_start.size(); ++i) {
    const std::filesystem::path& dir = job.policy.warm_start[i];
    const std::string where = job.policy.warm_start_places[i] + ": " + dir.string();
    std::error_code ec;
    if (std::filesystem::is_regular_file(dir, ec)) {
      for (WarmTask& w : tasks_of_csv(dir, job.policy.warm_start_places[i], job, notes)) tasks.push_back(std::move(w));
      continue;
    }
    if (!RunPaths(dir).holds_run()) {
      throw InputError(where + ": not a run directory (no " + RunPaths(dir).journal().filename().string() + " in it)");
    }
    RecoveredRun run;
    try {
      run = recover_run(dir);
    } catch (const std::exception& e) {
      throw InputError(where + ": cannot read the run: " + e.what());
    }
    if (run.empty()) continue;  // a run stopped before its first record has no finished task
    const RunState& state = run.state;
    const std::vector<std::string> why = state.job().space_differences(ours);
    if (!why.empty()) {
      std::string message = where + ": its space differs from this job's, so its trials cannot teach this one:";
      for (const std::string& w : why) message += "\n  " + w;
      throw InputError(message);
    }
    const std::vector<std::size_t> named = objectives_by_name(state, job, where);
    // A task counts once it is done (its budget used), with its ok trials; failed ones stay out.
    for (std::size_t task = 0; task < state.tasks().size(); ++task) {
      const TaskIdentity& identity = state.job().tasks[task];
      if (!state.task_done(static_cast<int>(task)) || state.tasks()[task].ok == 0) {
        if (notes != nullptr) {
          notes->push_back(where + ": task " + identity.name + " left out: " +
                           (state.task_done(static_cast<int>(task)) ? "no trial of it succeeded" : "it is not finished"));
        }
        continue;
      }
      WarmTask w;
      for (const std::int64_t id : state.task_trials(static_cast<int>(task))) {
        const Trial& t = state.trial(id);
        if (!t.finished || t.outcome.status != workers::TrialStatus::ok) continue;
        w.configs.push_back(t.config);
        w.objectives.push_back(t.outcome.objective);
        w.infeasible.push_back(t.infeasible ? 1 : 0);  // by that run's own limits
        if (named.empty()) continue;
        const std::vector<double> measured = state.values_of(t);
        std::vector<double>& values = w.values.emplace_back();
        for (const std::size_t k : named) values.push_back(measured[k]);
        w.objectives.back() = values.front();  // this job's first objective, whichever that run's first was
      }
      w.source = dir.string() + ":" + identity.name;
      w.direction = named.empty() ? state.job().direction : job.objective.several.front().direction();
      tasks.push_back(std::move(w));
    }
  }
  if (notes != nullptr && !job.policy.max_fit_results) {
    for (const WarmTask& w : tasks) {
      if (w.configs.size() < kLargeWarmTask) continue;
      notes->push_back("warm-start task " + w.source + " has " + std::to_string(w.configs.size()) +
                       " rows: every fit of the model takes all of them (minutes and gigabytes at a million); " +
                       "[policy] max_fit_results = " + std::to_string(kLargeWarmTask) +
                       " fits on that many (the better half and a spread of the rest)");
    }
  }
  return tasks;
}

}  // namespace lbo::orchestrator
