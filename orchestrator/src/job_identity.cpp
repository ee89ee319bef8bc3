#include "lbo/orchestrator/job_identity.hpp"

#include <algorithm>
#include <sstream>

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

JobIdentity JobIdentity::of(const jobs::JobSpec& job) {
  JobIdentity id;
  id.space = job.space.params();
  id.direction = job.objective.direction;
  id.command = job.objective.command;
  for (const jobs::TaskSpec& t : job.tasks) {
    id.tasks.push_back({t.name, t.budget, t.dataset ? t.dataset->string() : std::string()});
  }
  return id;
}

std::vector<std::string> JobIdentity::incompatibilities(const JobIdentity& newer) const {
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
  if (direction != newer.direction) {
    why.push_back("objective.direction: " + std::string(jobs::to_string(direction)) + " → " +
                  std::string(jobs::to_string(newer.direction)));
  }
  if (command != newer.command) why.push_back("objective.command: " + join(command) + " → " + join(newer.command));
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const std::string where = "tasks[" + std::to_string(i) + "]";
    if (i >= newer.tasks.size()) {
      why.push_back(where + ": task " + tasks[i].name + " was removed (tasks may only be appended)");
    } else if (tasks[i].name != newer.tasks[i].name) {
      why.push_back(where + ": " + tasks[i].name + " → " + newer.tasks[i].name + " (tasks may only be appended)");
    } else if (tasks[i].dataset != newer.tasks[i].dataset) {
      why.push_back(where + ".dataset: " + tasks[i].dataset + " → " + newer.tasks[i].dataset);
    }
  }
  return why;
}

}  // namespace lbo::orchestrator
