#include "lbo/report/run_data.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include "csv_table.hpp"
#include "curves.hpp"
#include "history.hpp"
#include "lbo/cluster/transport.hpp"
#include "lbo/jobs/error.hpp"
#include "lbo/orchestrator/files.hpp"
#include "lbo/orchestrator/recovery.hpp"
#include "lbo/orchestrator/run_directory.hpp"
#include "lbo/orchestrator/step_savings.hpp"
#include "lbo/orchestrator/task_report.hpp"
#include "utilization.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace lbo::report {

namespace {

using orchestrator::RunState;
using orchestrator::Trial;

json time_or_null(double t) { return t > 0 && std::isfinite(t) ? json(t) : json(); }

void add_place(json& out, const std::string& worker) {
  out["worker"] = worker;
  if (const auto where = cluster::parse_worker_slot(worker)) {
    out["rank"] = where->rank;
    if (where->slot >= 0) out["slot"] = where->slot;
  }
}

// "model = xgboost", "model in [xgboost, random_forest]", joined by " and ".
std::string condition_text(const std::vector<jobs::ParamSpec>& space, const jobs::ParamSpec& p) {
  std::string text;
  for (const jobs::Condition& c : p.when) {
    if (c.parent < 0 || c.parent >= static_cast<int>(space.size())) continue;
    const jobs::ParamSpec& parent = space[static_cast<std::size_t>(c.parent)];
    std::string choices;
    for (int k : c.choices) {
      if (k >= 0 && k < static_cast<int>(parent.choices.size())) {
        choices += (choices.empty() ? "" : ", ") + parent.choices[static_cast<std::size_t>(k)];
      }
    }
    text += (text.empty() ? "" : " and ") + parent.name + (c.choices.size() == 1 ? " = " + choices : " in [" + choices + "]");
  }
  return text;
}

json space_json(const std::vector<jobs::ParamSpec>& space) {
  json out = json::array();
  for (const jobs::ParamSpec& p : space) {
    json param{{"name", p.name}, {"type", p.type == jobs::ParamType::real ? "float" : std::string(jobs::to_string(p.type))}};
    if (p.type == jobs::ParamType::categorical) {
      param["choices"] = p.choices;
    } else {
      param["low"] = p.low;
      param["high"] = p.high;
      param["log"] = p.log;
    }
    if (const std::string when = condition_text(space, p); !when.empty()) param["when"] = when;
    out.push_back(std::move(param));
  }
  return out;
}

json config_json(const std::vector<jobs::ParamSpec>& space, const jobs::Config& config) {
  json out = json::object();
  for (std::size_t i = 0; i < space.size() && i < config.values.size(); ++i) {
    if (!config.values[i]) continue;
    const jobs::ParamSpec& p = space[i];
    const double v = *config.values[i];
    if (p.type == jobs::ParamType::categorical) {
      const auto k = static_cast<std::size_t>(v);
      if (v >= 0 && k < p.choices.size()) out[p.name] = p.choices[k];
    } else {
      out[p.name] = v;
    }
  }
  return out;
}

// What job.toml says that the journal's job identity does not: the policy and the seed. Read
// as plain TOML (a copy of a run directory need not have the objective or datasets the job
// names); what it does not set is lbo's default.
void add_job_settings(json& job, const fs::path& job_file, std::vector<std::string>& notes) {
  const jobs::PolicySpec defaults;
  job["surrogate"] = std::string(jobs::to_string(defaults.surrogate));
  job["acquisition"] = std::string(jobs::to_string(defaults.acquisition));
  job["initial_random"] = defaults.initial_random;
  job["stepwise"] = 0;
  try {
    if (const std::string what = orchestrator::not_a_regular_file(job_file); !what.empty()) {
      throw std::runtime_error("it is " + what);
    }
    const toml::table table = toml::parse_file(job_file.string());
    if (const auto v = table["policy"]["surrogate"].value<std::string>()) job["surrogate"] = *v;
    if (const auto v = table["policy"]["acquisition"].value<std::string>()) job["acquisition"] = *v;
    if (const auto v = table["policy"]["initial_random"].value<std::int64_t>()) job["initial_random"] = *v;
    if (const auto v = table["policy"]["initial_random"].value<std::string>()) job["initial_random"] = *v;
    if (const auto v = table["objective"]["stepwise"].value<std::int64_t>()) job["stepwise"] = *v;
    if (const auto v = table["seed"].value<std::int64_t>()) job["seed"] = *v;
    // Early stopping as "hyperband (promotion), epoch 1 to 27, eta 3": unset keys at lbo's defaults.
    if (const toml::table* es = table["early_stopping"].as_table()) {
      const jobs::EarlyStoppingSpec d;
      const auto text = [&](const char* key, std::string_view fallback) {
        return std::string((*es)[key].value<std::string>().value_or(std::string(fallback)));
      };
      const auto integer = [&](const char* key, std::int64_t fallback) {
        return std::to_string((*es)[key].value<std::int64_t>().value_or(fallback));
      };
      job["early_stopping"] = text("rule", jobs::to_string(d.rule)) + " (" + text("mode", jobs::to_string(d.mode)) + "), " +
                              text("step_name", d.step_name) + " " + integer("min_step", d.min_step) + " to " +
                              integer("max_step", d.max_step) + ", eta " + integer("eta", d.eta);
      // Several objectives: the one the reports (and a stopped trial's value) give.
      if (const auto of = (*es)["objective"].value<std::string>()) {
        job["early_stopping"] = job["early_stopping"].get<std::string>() + ", reports of " + *of;
        job["reports_objective"] = *of;
      }
    }
  } catch (const std::exception& e) {
    notes.push_back(job_file.filename().string() + " cannot be read (" + e.what() +
                    "): the job's surrogate, acquisition and seed are shown as lbo's defaults");
  }
}

json savings_json(const orchestrator::StepSavings& s) {
  json out{{"trials", s.trials}, {"spent", s.spent}, {"full", s.full}};
  if (std::isfinite(s.seconds_per_step)) out["seconds_per_step"] = s.seconds_per_step;
  return out;
}

// With [early_stopping]: what it saved (orchestrator::step_savings), the run's and each task's.
void add_savings(json& out, json& tasks, const RunState& state, const fs::path& job_file) {
  std::ifstream in(job_file, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::optional<jobs::StepsOfJob> steps = jobs::early_stopping_steps_in(text);
  if (!steps) return;
  out["savings"] = savings_json(orchestrator::step_savings(state, steps->max_step));
  out["savings"]["step_name"] = steps->step_name;
  out["savings"]["max_step"] = steps->max_step;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    tasks[i]["savings"] = savings_json(orchestrator::step_savings(state, steps->max_step, static_cast<int>(i)));
  }
}

double number_or_nan(const CsvRow& row, const std::string& key) {
  const auto it = row.find(key);
  if (it == row.end() || it->second.empty()) return std::nan("");
  try {
    return std::stod(it->second);
  } catch (const std::exception&) {
    return std::nan("");
  }
}

// Similarity and latent-network usage per task, from tasks.csv (the model's report at the
// last checkpoint). For a stepwise objective, the last step's row stands for the task.
void add_model_report(json& tasks, const RunState& state, int stepwise, const fs::path& tasks_csv, bool lbo_surrogate,
                      std::vector<std::string>& notes) {
  const std::optional<std::vector<CsvRow>> rows = read_csv_file(tasks_csv);
  if (!rows) {
    notes.push_back("no tasks.csv yet (written at the first checkpoint): task similarity and network usage are left out");
    return;
  }
  const auto& identities = state.job().tasks;
  const auto model_name = [&](const std::string& task) {
    return stepwise > 0 ? task + "/step_" + std::to_string(stepwise) : task;
  };
  bool any_usage = false;
  for (const CsvRow& row : *rows) {
    const auto task = row.find("task");
    const auto step = row.find("step");
    if (task == row.end()) continue;
    if (stepwise > 0 && (step == row.end() || step->second != std::to_string(stepwise))) continue;
    const auto at = std::find_if(identities.begin(), identities.end(), [&](const auto& t) { return t.name == task->second; });
    if (at == identities.end()) continue;
    json& out = tasks[static_cast<std::size_t>(at - identities.begin())];
    json similarity = json::array();
    bool any = false;
    for (const auto& t : identities) {
      const double s = number_or_nan(row, "similarity:" + model_name(t.name));
      similarity.push_back(std::isfinite(s) ? json(s) : json());
      any = any || std::isfinite(s);
    }
    if (any) out["similarity"] = std::move(similarity);
    json usage = json::array();
    for (int m = 0; row.count("usage:" + std::to_string(m)); ++m) {
      const double q = number_or_nan(row, "usage:" + std::to_string(m));
      usage.push_back(std::isfinite(q) ? json(q) : json());
    }
    if (!usage.empty()) {
      out["usage"] = std::move(usage);
      any_usage = true;
    }
  }
  if (lbo_surrogate && !any_usage && !rows->empty() && !rows->front().count("usage:0")) {
    notes.push_back("tasks.csv has no usage columns (written by an older lbo, or before the first fit): the network-usage figure is left out");
  }
}

// hedge.csv's draws, the last of each trial and kind (a proposal lost to a crash may have left
// an earlier draw for the same trial id).
json hedge_draws(const fs::path& hedge_csv, const std::vector<orchestrator::TaskIdentity>& tasks) {
  json out = json::array();
  const std::optional<std::vector<CsvRow>> rows = read_csv_file(hedge_csv);
  if (!rows) return out;
  std::map<std::pair<std::int64_t, std::string>, std::size_t> last;
  std::vector<json> draws;
  for (const CsvRow& row : *rows) {
    if (!row.count("trial") || !row.count("over") || !row.count("option") || !row.count("probability")) continue;
    std::int64_t trial = 0;
    try {
      trial = std::stoll(row.at("trial"));
    } catch (const std::exception&) {
      continue;
    }
    const std::string& over = row.at("over");
    const std::string task = row.count("task") ? row.at("task") : "";
    // Rows of one draw are consecutive: a new draw starts when trial, kind or task changes, or
    // an option comes again.
    json* draw = draws.empty() ? nullptr : &draws.back();
    const bool same = draw != nullptr && (*draw)["trial"] == trial && (*draw)["over"] == over &&
                      (*draw)["task_name"] == task &&
                      std::find((*draw)["options"].begin(), (*draw)["options"].end(), row.at("option")) == (*draw)["options"].end();
    if (!same) {
      json d{{"trial", trial}, {"over", over}, {"task_name", task}, {"options", json::array()}, {"probabilities", json::array()}};
      const auto at = std::find_if(tasks.begin(), tasks.end(), [&](const auto& t) { return t.name == task; });
      if (at != tasks.end()) d["task"] = at - tasks.begin();
      draws.push_back(std::move(d));
      last[{trial, over + "\n" + task}] = draws.size() - 1;
      draw = &draws.back();
    }
    const double p = number_or_nan(row, "probability");
    if ((row.count("chosen") ? row.at("chosen") : "") == "1") (*draw)["chosen"] = (*draw)["options"].size();
    (*draw)["options"].push_back(row.at("option"));
    (*draw)["probabilities"].push_back(std::isfinite(p) ? json(p) : json());
  }
  std::vector<std::size_t> kept;
  for (const auto& [key, at] : last) kept.push_back(at);
  std::sort(kept.begin(), kept.end());
  for (std::size_t at : kept) out.push_back(std::move(draws[at]));
  return out;
}

// "running", "stopped", "done" or "unknown", and a sentence saying what it means.
void add_state(json& out, const RunState& state, const orchestrator::LockHolder& lock, std::optional<int> ended_with) {
  const bool running = !ended_with && lock.held;
  const bool done = !running && state.has_job() && !state.tasks().empty() && state.all_budgets_done() &&
                    ended_with.value_or(0) == 0;
  const bool unknown = !ended_with && !done && !lock.unknown_why.empty();
  out["state"] = running ? "running" : done ? "done" : unknown ? "unknown" : "stopped";
  if (unknown) {
    out["state_note"] = "running or stopped: " + lock.unknown_why + ", so lbo cannot tell whether a live lbo uses it";
  } else if (running) {
    out["state_note"] = "running (" + (lock.holder.empty() ? std::string("holder unknown") : lock.holder) + ")";
  } else if (done) {
    out["state_note"] = "done: every task's budget is spent";
  } else if (ended_with) {
    out["state_note"] = "stopped with exit status " + std::to_string(*ended_with) +
                        (*ended_with == 75 ? " (a stop signal or the deadline): the same `lbo run` command resumes it"
                                           : ": see the log; the same `lbo run` command resumes it once the cause is fixed");
  } else {
    out["state_note"] = "stopped before its budgets were spent (exit 75 after a signal, a walltime, a kill or a crash): "
                        "the same `lbo run` command resumes it";
  }
}

// The job: the journal's identity (space, direction, tasks), job.toml's policy.
json job_json(const orchestrator::JobIdentity& identity, const History& history, const fs::path& job_file,
              std::vector<std::string>& notes) {
  json job;
  job["direction"] = std::string(jobs::to_string(identity.direction));
  job["space"] = space_json(identity.space);
  job["tasks"] = json::array();
  for (const orchestrator::TaskIdentity& t : identity.tasks) {
    job["tasks"].push_back({{"name", t.name}, {"budget", t.budget}, {"origin", std::string(jobs::to_string(t.origin))}});
  }
  if (!identity.objectives.empty()) {
    job["objectives"] = json::array();
    for (const jobs::Objective& o : identity.objectives) {
      job["objectives"].push_back({{"name", o.name()}, {"direction", std::string(jobs::to_string(o.direction()))}});
    }
  }
  add_job_settings(job, job_file, notes);
  // Reports of the primary objective are what a job of one objective has: nothing to mark.
  if (!identity.objectives.empty() && job.value("reports_objective", "") == identity.objectives.front().name()) {
    job.erase("reports_objective");
  }
  if (!history.allocations.empty()) job["slots"] = history.allocations.back().slots;
  return job;
}

// Allocations, with where each ended (its last record) and the slot time it used.
json allocations_json(const History& history, const Utilization& use) {
  json allocations = json::array();
  for (std::size_t i = 0; i < history.allocations.size(); ++i) {
    const Allocation& a = history.allocations[i];
    allocations.push_back({{"started", time_or_null(a.started)}, {"ended", time_or_null(use.allocation_end[i])},
                           {"slots", a.slots}, {"busy", use.allocation_busy_s[i]}, {"lbo_version", a.lbo_version}});
  }
  return allocations;
}

// Each trial's newest attempt, and every attempt by (trial, attempt).
struct AttemptIndex {
  std::map<std::int64_t, const Attempt*> newest;
  std::map<workers::AttemptKey, const Attempt*> each;
};

// Attempts; one that never ended ran when its allocation ended (or runs now). `index` gets them.
json attempts_json(const History& history, bool running, AttemptIndex& index) {
  json attempts = json::array();
  for (const Attempt& a : history.attempts) {
    json item{{"trial", a.trial}, {"attempt", a.attempt}, {"start", time_or_null(a.start)}, {"final", a.final}};
    add_place(item, a.worker);
    const bool in_last_allocation = a.allocation + 1 >= history.allocations.size();
    if (!a.status.empty()) {
      item["status"] = a.status;
      item["end"] = time_or_null(a.end);
      if (!a.cores.empty()) item["cores"] = a.cores;
      if (!a.gpus.empty()) item["gpus"] = a.gpus;
    } else if (running && in_last_allocation) {
      item["status"] = "running";
    } else {
      item["status"] = "interrupted";
      if (a.allocation < history.allocations.size()) item["end"] = time_or_null(history.allocations[a.allocation].last_seen);
    }
    attempts.push_back(std::move(item));
    const Attempt*& newest = index.newest[a.trial];
    if (newest == nullptr || a.attempt >= newest->attempt) newest = &a;
    index.each[{a.trial, a.attempt}] = &a;
  }
  return attempts;
}

// A trial's curve: [step, value, seconds since its attempt started, Unix time or null] for its
// newest attempt's reports and those of the earlier attempts it went on from (promotion mode: an
// attempt resumes past its predecessor's last step; a retry starts again and its predecessors'
// reports are not its curve). `paused`: [step, value] where one of those attempts was paused.
json curve_json(const Trial& t, const AttemptIndex& index, json& paused) {
  std::size_t first = t.reports.size() - 1;
  while (first > 0 && t.reports[first - 1].step < t.reports[first].step) --first;
  json curve = json::array();
  for (std::size_t i = first; i < t.reports.size(); ++i) {
    const orchestrator::StepReport& r = t.reports[i];
    const auto attempt = index.each.find({t.id, r.attempt});
    const double start = attempt != index.each.end() ? attempt->second->start : 0;
    curve.push_back(json::array({r.step, r.value, r.elapsed_s, time_or_null(start > 0 ? start + r.elapsed_s : 0)}));
    const bool attempt_ends = i + 1 < t.reports.size() && t.reports[i + 1].attempt != r.attempt;
    if (attempt_ends && attempt != index.each.end() && attempt->second->status == "paused") {
      paused.push_back(json::array({r.step, r.value}));
    }
  }
  return curve;
}

json trials_json(const RunState& state, bool running, const AttemptIndex& index, const History& history) {
  const std::map<std::int64_t, const Attempt*>& last_attempt = index.newest;
  const orchestrator::JobIdentity& identity = state.job();
  json trials = json::array();
  for (const Trial& t : state.trials()) {
    if (t.lost()) continue;
    json item{{"id", t.id}, {"task", t.task}, {"attempts", t.attempts},
              {"proposed_by", std::string(orchestrator::to_string(t.proposed_by))}, {"note", t.proposal_note}};
    const auto found = last_attempt.find(t.id);
    const Attempt* a = found != last_attempt.end() ? found->second : nullptr;
    if (t.finished) {
      item["status"] = std::string(workers::to_string(t.outcome.status));
      if (t.outcome.status == workers::TrialStatus::ok) {
        item["objective"] = t.outcome.objective;
        if (!t.outcome.steps.empty()) item["steps"] = t.outcome.steps;
        if (t.infeasible) item["infeasible"] = true;  // outside a limit of [[constraints]]: never a best
        if (state.several_objectives()) {  // every objective's value, and whether it is in its task's Pareto set
          item["values"] = state.values_of(t);
          item["pareto"] = state.on_pareto_front(t);
        }
      } else {
        item["reason"] = t.outcome.reason;
        if (!t.outcome.path.empty()) item["path"] = t.outcome.path;
      }
      if (t.outcome.status == workers::TrialStatus::stopped) item["stopped_value"] = t.outcome.objective;
      if (t.steps_run() > 0) item["last_step"] = t.steps_run();
      json metrics = json::parse(t.outcome.metrics_json, nullptr, false);
      if (metrics.is_object() && !metrics.empty()) {
        item["metrics"] = std::move(metrics);
      } else if (const auto reported = history.reported_metrics.find(t.id);
                 t.outcome.status == workers::TrialStatus::stopped && reported != history.reported_metrics.end()) {
        // A stopped trial's result has no metrics: those of its newest report that had some.
        json at_step = json::parse(reported->second.metrics_json, nullptr, false);
        if (at_step.is_object() && !at_step.empty()) {
          item["metrics"] = std::move(at_step);
          item["metrics_step"] = reported->second.step;
        }
      }
      if (!t.outcome.cores.empty()) item["cores"] = t.outcome.cores;
      if (!t.outcome.gpus.empty()) item["gpus"] = t.outcome.gpus;
    } else {
      item["status"] = running && a != nullptr && a->status.empty() ? "running" : "queued";
    }
    if (!t.reports.empty()) {
      json paused = json::array();
      item["curve"] = curve_json(t, index, paused);
      if (!paused.empty()) item["paused"] = std::move(paused);
    }
    item["config"] = config_json(identity.space, t.config);
    add_place(item, a != nullptr ? a->worker : t.worker);
    item["started"] = time_or_null(a != nullptr ? a->start : t.started_unix);
    item["finished"] = time_or_null(a != nullptr ? a->end : t.finished_unix);
    trials.push_back(std::move(item));
  }
  return trials;
}

// With several objectives: each objective's `reference` as job.toml gives it (NaN where it gives
// none, or it cannot be read: derived, as tasks.csv's).
std::vector<double> job_references(const fs::path& job_file, std::size_t objectives) {
  std::vector<double> reference(objectives, std::nan(""));
  try {
    const toml::table table = toml::parse_file(job_file.string());
    if (const toml::array* list = table["objective"]["objectives"].as_array()) {
      for (std::size_t i = 0; i < objectives && i < list->size(); ++i) {
        if (const auto v = (*list)[i].as_table() ? (*(*list)[i].as_table())["reference"].value<double>() : std::nullopt) reference[i] = *v;
      }
    }
  } catch (const std::exception&) {
    // job_json's note already says the file cannot be read
  }
  return reference;
}

// A task's Pareto set as tasks.csv gives it, and its hypervolume after each finished trial.
json pareto_json(const RunState& state, int task, const jobs::JobSpec& references) {
  const orchestrator::ParetoSummary p = orchestrator::summarize_pareto(references, state, task);
  json out{{"size", p.size}, {"hypervolume", p.hypervolume}, {"reference", p.reference}, {"reference_from", json::array()}};
  for (const bool derived : p.derived) out["reference_from"].push_back(derived ? "derived" : "job");
  if (p.reference.empty()) return out;
  const std::string& name = state.job().tasks[static_cast<std::size_t>(task)].name;
  out["curve"] = hypervolume_so_far(state, {{name, p.reference}})[name];
  return out;
}

json tasks_json(const RunState& state, int stepwise, const fs::path& job_file) {
  json tasks = json::array();
  jobs::JobSpec references;  // what summarize_pareto reads of the job: the references it gives
  if (state.several_objectives()) references.objective.reference = job_references(job_file, state.job().objectives.size());
  for (int i = 0; i < static_cast<int>(state.tasks().size()); ++i) {
    const orchestrator::TaskSummary s = orchestrator::summarize_task(state, i, stepwise > 0 ? stepwise - 1 : -1);
    json item{{"name", state.job().tasks[static_cast<std::size_t>(i)].name}, {"ok", s.ok}, {"stopped", s.stopped}};
    if (s.best) item["best"] = *s.best;
    if (s.best_trial >= 0) item["best_trial"] = s.best_trial;
    if (s.trials_to_95) item["trials_to_95"] = *s.trials_to_95;
    if (state.several_objectives()) item["pareto"] = pareto_json(state, i, references);
    tasks.push_back(std::move(item));
  }
  return tasks;
}

}  // namespace

json run_data(const fs::path& dir, std::optional<int> ended_with) {
  const orchestrator::RunPaths paths(dir);
  if (!orchestrator::has_run_state(dir)) {
    throw InputError(dir.string() + ": not a run directory (no " + paths.journal().filename().string() + ")");
  }
  const orchestrator::RecoveredRun run = orchestrator::recover_run(dir);
  const History history = read_history(paths.journal());
  const RunState& state = run.state;
  std::vector<std::string> notes;

  json out;
  out["dir"] = dir.string();
  out["name"] = fs::absolute(dir).lexically_normal().filename().string();
  if (out["name"] == "") out["name"] = fs::absolute(dir).lexically_normal().parent_path().filename().string();
  const orchestrator::LockHolder lock = orchestrator::lock_holder(dir);
  const bool running = !ended_with && lock.held;
  add_state(out, state, lock, ended_with);

  json job = job_json(state.job(), history, paths.job_file(), notes);
  const int stepwise = job["stepwise"].get<int>();
  const Utilization use = utilization(history, running);
  out["allocations"] = allocations_json(history, use);
  out["utilization"] = utilization_json(use);
  if (!history.allocations.empty()) {
    out["lbo_version"] = history.allocations.back().lbo_version;
    out["started"] = time_or_null(history.allocations.front().started);
  }
  out["last_activity"] = time_or_null(history.last_activity);
  out["virtual_clock"] = state.job().virtual_clock;  // a simulated run: every time above is virtual

  AttemptIndex attempts;
  out["attempts"] = attempts_json(history, running, attempts);
  out["trials"] = trials_json(state, running, attempts, history);
  json tasks = tasks_json(state, stepwise, paths.job_file());
  add_savings(out, tasks, state, paths.job_file());
  add_model_report(tasks, state, stepwise, paths.tasks_csv(), job["surrogate"] == "lbo", notes);
  out["tasks"] = std::move(tasks);

  out["hedge"] = hedge_draws(paths.hedge_csv(), state.job().tasks);
  if (out["hedge"].empty() && job["acquisition"] == "hedge" && !fs::exists(paths.hedge_csv())) {
    notes.push_back("no hedge.csv (a run of an older lbo, or no model proposal yet): the Hedge figures are left out");
  }
  out["job"] = std::move(job);
  for (const std::string& w : run.warnings) notes.push_back(w);
  for (const std::string& a : state.anomalies()) notes.push_back("journal: " + a);
  out["notes"] = notes;
  return out;
}

}  // namespace lbo::report
