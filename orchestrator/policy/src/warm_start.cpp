#include "lbo/orchestrator/warm_start.hpp"

#include <algorithm>

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
  const int task = csv.column("task");
  const int objective = column_of(csv, {"objective", "value", "values_0"});
  // With several objectives, a column per objective past the first: lbo's results.csv names it
  // objective:<name>, Optuna's trials_dataframe values_<i> (by position).
  std::vector<int> others;
  for (std::size_t i = 1; i < job.objective.several.size(); ++i) {
    others.push_back(column_of(csv, {"objective:" + job.objective.several[i].name(), "values_" + std::to_string(i)}));
  }
  const int status = csv.column("status");
  const int state = csv.column("state");
  const int infeasible = csv.column("infeasible");
  std::vector<int> params;
  std::string missing;
  for (const jobs::ParamSpec& p : job.space.params()) {
    params.push_back(column_of(csv, {p.name, "params_" + p.name}));
    if (params.back() < 0) missing += (missing.empty() ? "" : ", ") + p.name;
  }
  if (objective < 0) missing += std::string(missing.empty() ? "" : ", ") + "objective (or value)";
  for (std::size_t i = 0; i < others.size(); ++i) {
    if (others[i] >= 0) continue;
    missing += std::string(missing.empty() ? "" : ", ") + "objective:" + job.objective.several[i + 1].name() +
               " (or values_" + std::to_string(i + 1) + ")";
  }
  if (!missing.empty()) {
    throw InputError(where + ":1: no column for " + missing + "; a row holds a task column (task), a column per " +
                     "parameter (its name, or params_<name>) and the objective (objective or value)");
  }
  std::vector<WarmTask> tasks;
  jobs::CsvProblems problems(name);
  jobs::CsvProblems no_number(file.string());  // rows without a status whose objective is no finite number
  std::size_t failed = 0;
  for (const jobs::CsvRecord& r : csv.records) {
    if (!succeeded(csv, r, status, state)) {  // a failure teaches nothing here
      ++failed;
      continue;
    }
    const std::optional<double> value = jobs::parse_number(csv.field(r, objective));
    if (!value) {
      // No status: a row without a value is taken for a failed evaluation, and said.
      if (status < 0 && state < 0) {
        no_number.add(r.line, "objective \"" + std::string(csv.field(r, objective)) + "\"");
        continue;
      }
      problems.add(r.line, "an ok row's objective \"" + std::string(csv.field(r, objective)) + "\" is not a finite number");
      continue;
    }
    std::vector<double> values;  // with several objectives, each one's
    if (!others.empty()) {
      values.push_back(*value);
      for (const int c : others) {
        const std::optional<double> v = jobs::parse_number(csv.field(r, c));
        if (!v) break;
        values.push_back(*v);
      }
      if (values.size() < others.size() + 1) {
        const int c = others[values.size() - 1];
        problems.add(r.line, "an ok row's " + csv.header[static_cast<std::size_t>(c)] + " \"" + std::string(csv.field(r, c)) +
                                 "\" is not a finite number");
        continue;
      }
    }
    std::string why;
    const std::optional<jobs::Config> config =
        job.space.parse_config([&](int p) { return csv.field(r, params[static_cast<std::size_t>(p)]); }, why);
    if (!config) {
      problems.add(r.line, why + std::string(jobs::kRowFix));
      continue;
    }
    const std::string label = task >= 0 ? std::string(csv.field(r, task)) : file.stem().string();
    auto at = std::find_if(tasks.begin(), tasks.end(), [&](const WarmTask& w) { return w.source == file.string() + ":" + label; });
    if (at == tasks.end()) {
      tasks.push_back(WarmTask{file.string() + ":" + label, {}, {}, job.objective.direction});
      at = tasks.end() - 1;
    }
    at->configs.push_back(*config);
    at->objectives.push_back(*value);
    at->infeasible.push_back(infeasible >= 0 && csv.field(r, infeasible) == "1" ? 1 : 0);
    if (!values.empty()) at->values.push_back(std::move(values));
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
