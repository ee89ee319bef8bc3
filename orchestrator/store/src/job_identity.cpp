#include "lbo/orchestrator/job_identity.hpp"

#include <algorithm>
#include <sstream>

#include "lbo/jobs/error.hpp"

namespace lbo::orchestrator {

namespace {

std::string describe(const jobs::ParamSpec& p, const std::vector<jobs::ParamSpec>& space) {
  std::ostringstream out;
  out << jobs::to_string(p.type);
  if (p.type == jobs::ParamType::categorical) {
    out << " [";
    for (std::size_t i = 0; i < p.choices.size(); ++i) out << (i ? ", " : "") << p.choices[i];
    out << "]";
  } else {
    out << " [" << p.low << ", " << p.high << "]" << (p.log ? " log" : "");
  }
  for (const jobs::Condition& c : p.when) {
    const jobs::ParamSpec& parent = space.at(static_cast<std::size_t>(c.parent));
    out << " when " << parent.name << " in {";
    for (std::size_t i = 0; i < c.choices.size(); ++i) {
      out << (i ? ", " : "") << parent.choices.at(static_cast<std::size_t>(c.choices[i]));
    }
    out << "}";
  }
  return out.str();
}

std::string join(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

}  // namespace

TaskIdentity TaskIdentity::of(const jobs::TaskSpec& task) {
  return {task.name, task.budget, task.dataset ? task.dataset->string() : std::string(), task.origin, task.budget_steps};
}

jobs::TaskSpec TaskIdentity::spec() const {
  jobs::TaskSpec task;
  task.name = name;
  task.budget = budget;
  if (!dataset.empty()) task.dataset = std::filesystem::path(dataset);
  task.origin = origin;
  task.budget_steps = budget_steps;
  return task;
}

JobIdentity JobIdentity::of(const jobs::JobSpec& job) {
  JobIdentity id;
  id.space = job.space.params();
  id.direction = job.objective.direction;
  id.command = job.objective.command;
  if (const std::optional<jobs::ObjectiveTableSpec>& table = job.objective.table) {
    // A tabulated objective's identity: its file and columns, where a command's argv goes.
    id.command = {"table", table->path.string(), "objective=" + table->objective_column, "task=" + table->task_column,
                  "time=" + table->time_column};
    if (table->restricted) id.command.push_back("restricted");
  }
  for (const jobs::TaskSpec& t : job.tasks) id.tasks.push_back(TaskIdentity::of(t));
  id.virtual_clock = job.workers.simulate > 0;
  id.constraints = job.constraints;
  id.objectives = job.objective.several;
  return id;
}

std::shared_ptr<const jobs::ObjectiveTable> JobIdentity::table() const {
  if (command.size() < 5 || command[0] != "table") return nullptr;
  const auto after = [](const std::string& entry, std::string_view key) {
    return entry.rfind(key, 0) == 0 ? entry.substr(key.size()) : std::string();
  };
  jobs::ObjectiveTableSpec spec;
  spec.path = command[1];
  spec.objective_column = after(command[2], "objective=");
  spec.task_column = after(command[3], "task=");
  spec.time_column = after(command[4], "time=");
  spec.restricted = command.size() > 5 && command[5] == "restricted";
  try {
    return std::make_shared<const jobs::ObjectiveTable>(jobs::ObjectiveTable::load(spec, jobs::Space(space)));
  } catch (const InputError& e) {
    throw InputError("the run's table " + spec.path.string() + " cannot be read: " + e.what());
  }
}

std::vector<jobs::TaskSpec> JobIdentity::merged_tasks(const jobs::JobSpec& file) const {
  std::vector<jobs::TaskSpec> merged;
  for (const TaskIdentity& t : tasks) {
    jobs::TaskSpec spec = t.spec();
    const auto in_file = std::find_if(file.tasks.begin(), file.tasks.end(), [&](const jobs::TaskSpec& f) { return f.name == t.name; });
    if (in_file != file.tasks.end()) {
      spec.budget = in_file->budget;
      spec.budget_steps = in_file->budget_steps;
    }
    merged.push_back(std::move(spec));
  }
  for (const jobs::TaskSpec& f : file.tasks) {
    const bool known = std::any_of(tasks.begin(), tasks.end(), [&](const TaskIdentity& t) { return t.name == f.name; });
    if (!known) merged.push_back(f);
  }
  return merged;
}

std::vector<std::string> JobIdentity::space_differences(const JobIdentity& newer) const {
  std::vector<std::string> why;
  // Parameters by name: their encoding is what every recorded configuration means.
  for (const jobs::ParamSpec& old : space) {
    const auto match = std::find_if(newer.space.begin(), newer.space.end(),
                                     [&](const jobs::ParamSpec& p) { return p.name == old.name; });
    if (match == newer.space.end()) {
      why.push_back("space." + old.name + ": removed (was " + describe(old, space) + ")");
      continue;
    }
    const std::string before = describe(old, space), after = describe(*match, newer.space);
    if (before != after) why.push_back("space." + old.name + ": " + before + " → " + after);
  }
  for (const jobs::ParamSpec& p : newer.space) {
    const bool known = std::any_of(space.begin(), space.end(), [&](const jobs::ParamSpec& o) { return o.name == p.name; });
    if (!known) why.push_back("space." + p.name + ": new parameter (" + describe(p, newer.space) + ")");
  }
  if (why.empty()) {
    for (std::size_t i = 0; i < space.size() && i < newer.space.size(); ++i) {
      if (space[i].name != newer.space[i].name) {
        why.push_back("space: parameters reordered (" + space[i].name + " was #" + std::to_string(i + 1) + ")");
        break;
      }
    }
  }
  return why;
}

std::vector<std::string> JobIdentity::incompatibilities(const JobIdentity& newer) const {
  std::vector<std::string> why = space_differences(newer);
  if (direction != newer.direction) {
    why.push_back("objective.direction: " + std::string(jobs::to_string(direction)) + " → " +
                  std::string(jobs::to_string(newer.direction)));
  }
  if (objectives != newer.objectives) {
    const auto names = [](const JobIdentity& id) {
      const jobs::Objectives all = id.all_objectives();
      std::string n;
      for (std::size_t i = 0; i < all.size(); ++i) {
        n += (i ? ", " : "") + all[i].name() + " (" + std::string(jobs::to_string(all[i].direction())) + ")";
      }
      return n;
    };
    why.push_back("objective.objectives: " + names(*this) + " → " + names(newer));
  }
  if (command != newer.command) why.push_back("objective.command: " + join(command) + " → " + join(newer.command));
  if (virtual_clock != newer.virtual_clock) {
    why.push_back(virtual_clock ? "workers.simulate: the run was simulated (its times are virtual); simulate it again"
                                : "workers.simulate: the run was real; a simulated continuation would mix virtual "
                                  "times into it");
  }
  // Tasks by name: the job file's own tasks stay, in their order; any task it names keeps its
  // dataset (a task's trials mean that dataset).
  std::size_t next = 0;  // where in newer.tasks the next job-file task must come
  for (const TaskIdentity& task : tasks) {
    const auto match = std::find_if(newer.tasks.begin(), newer.tasks.end(),
                                    [&](const TaskIdentity& t) { return t.name == task.name; });
    if (match == newer.tasks.end()) {
      if (task.origin == jobs::TaskOrigin::job_file) {
        why.push_back("tasks: " + task.name + " was removed (tasks of the job file may only be appended)");
      }
      continue;
    }
    const auto at = static_cast<std::size_t>(match - newer.tasks.begin());
    if (match->dataset != task.dataset) {
      why.push_back("tasks[" + std::to_string(at) + "].dataset: " + task.dataset + " → " + match->dataset);
    }
    if (task.origin == jobs::TaskOrigin::job_file) {
      if (at < next) why.push_back("tasks: " + task.name + " moved before an earlier task (tasks may only be appended)");
      next = std::max(next, at + 1);
    }
  }
  return why;
}

}  // namespace lbo::orchestrator
