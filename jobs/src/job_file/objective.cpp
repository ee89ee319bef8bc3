#include <filesystem>

#include "lbo/jobs/error.hpp"
#include "lbo/jobs/protocol.hpp"
#include "sections.hpp"

namespace fs = std::filesystem;

namespace lbo::jobs::job_file {

namespace {

// A script whose #! line names a missing interpreter exists, yet fails every trial with
// "No such file or directory".
void check_interpreter(Reader& r, const toml::node& where, const std::string& key, const std::string& program) {
  if (const auto problem = interpreter_problem(program)) {
    r.error(where, key, in_quotes(fs::path(program).filename().string()) + ": " + *problem + "; fix its first line");
  }
}

// The program must exist now; other arguments that name an existing file next to the job
// file become absolute (trials run in their own working directory).
std::string resolve_argument(Reader& r, const toml::node& where, const std::string& key, const std::string& arg,
                             bool is_program) {
  const bool has_placeholder = arg.find('{') != std::string::npos;
  if (arg.empty() || has_placeholder || fs::path(arg).is_absolute()) {
    if (is_program && !has_placeholder && !arg.empty()) {
      if (!is_executable_file(arg)) {
        r.error(where, key, in_quotes(arg) + " is not an executable file");
      } else {
        check_interpreter(r, where, key, arg);
      }
    }
    return arg;
  }
  if (is_program) {
    if (arg.find('/') == std::string::npos) {
      if (!find_on_path(arg)) {
        r.error(where, key, in_quotes(arg) + " is not found on PATH");
      } else {
        check_interpreter(r, where, key, arg);
      }
      return arg;
    }
    const fs::path program = r.resolve(arg);
    if (!is_executable_file(program)) {
      r.error(where, key, in_quotes(arg) + " (" + program.string() + ") is not an executable file");
    } else {
      check_interpreter(r, where, key, program.string());
    }
    return program.string();
  }
  std::error_code ec;
  const fs::path candidate = r.resolve(arg);
  if (arg.front() != '-' && fs::exists(candidate, ec)) return candidate.string();
  return arg;
}

void read_command(Reader& r, const toml::table& t, ObjectiveSpec& o) {
  const toml::node* node = t.get("command");
  if (node == nullptr) {
    if (t.get("table") == nullptr) {
      r.error(t.source(), "objective.command",
              "missing; add command = [\"program\", \"arg\", ...] (an argv array, no shell), or table = \"evals.csv\"");
    }
    return;
  }
  if (t.get("table") != nullptr) {
    r.error(*node, "objective.command", "an objective is a command or a table, not both; leave one out");
    return;
  }
  const toml::array* array = node->as_array();
  if (array == nullptr || array->empty()) {
    r.error(*node, "objective.command", "must be a non-empty array of strings");
    return;
  }
  for (std::size_t i = 0; i < array->size(); ++i) {
    const toml::node& element = *array->get(i);
    const std::string key = "objective.command[" + std::to_string(i) + "]";
    const auto arg = element.value_exact<std::string>();
    if (!arg) {
      r.error(element, key, "must be a string, not " + std::string(type_name(element)));
      continue;
    }
    if (const auto unknown = find_unknown_placeholder(*arg)) {
      std::string known;
      for (std::string_view p : kPlaceholders) known += (known.empty() ? "" : ", ") + ("{" + std::string(p) + "}");
      r.error(element, key, "unknown placeholder {" + *unknown + "}; use one of " + known);
    }
    o.command.push_back(resolve_argument(r, element, key, *arg, i == 0));
  }
}

// table = "evals.csv" and its columns; the file is read once the space is known (read_table).
void read_table_keys(Reader& r, const toml::table& t, ObjectiveSpec& o) {
  const std::string prefix = "objective";
  const auto path = r.get_string(t, "table", prefix, false);
  if (!path) {
    for (const char* key : {"table_objective", "table_task", "table_time", "table_restrict"}) {
      if (const toml::node* node = t.get(key)) r.error(*node, Reader::key_path(prefix, key), "needs objective.table");
    }
    return;
  }
  ObjectiveTableSpec table;
  table.path = r.resolve(*path);
  if (const auto column = r.get_string(t, "table_objective", prefix, false)) {
    table.objective_column = *column;
  } else if (t.get("table_objective") == nullptr) {
    r.error(t.source(), "objective.table_objective", "missing; name the table's column that holds the objective");
  }
  if (const auto column = r.get_string(t, "table_task", prefix, false)) table.task_column = *column;
  if (const auto column = r.get_string(t, "table_time", prefix, false)) table.time_column = *column;
  if (const toml::node* node = t.get("table_restrict")) {
    if (const auto flag = node->value_exact<bool>()) {
      table.restricted = *flag;
    } else {
      r.error(*node, "objective.table_restrict", "must be true or false");
    }
  }
  o.table = std::move(table);
}

}  // namespace

void read_table(Reader& r, const toml::table& root, JobSpec& job) {
  if (!job.objective.table || !r.errors().empty()) return;  // the space must be right first
  const toml::node& where = *root.at_path("objective.table").node();
  try {
    job.objective.table_data = std::make_shared<const ObjectiveTable>(ObjectiveTable::load(*job.objective.table, job.space));
  } catch (const InputError& e) {
    r.error(where, "objective.table", e.what());
    return;
  }
  const ObjectiveTable& table = *job.objective.table_data;
  for (std::size_t k = 0; k < job.tasks.size(); ++k) {
    const TaskSpec& task = job.tasks[k];
    const std::string why = table.task_problem(task.name, task.budget);
    if (why.empty()) continue;
    if (table.rows(task.name).empty()) {
      r.error(where, "objective.table", why);
    } else {  // the budget is too large: said at the budget
      const std::string key = "tasks[" + std::to_string(k) + "].budget";
      const toml::node* budget = root.at_path(key).node();
      r.error(budget != nullptr ? *budget : where, key, why);
    }
  }
  if (job.objective.stepwise > 0) r.error(where, "objective.table", "a table has no steps; leave out objective.stepwise");
  if (job.early_stopping) {
    r.error(where, "objective.table", "a table gives no intermediate reports; leave out [early_stopping]");
  }
}

void read_top(Reader& r, const toml::table& root, JobSpec& job) {
  if (const auto name = r.get_string(root, "name", "", false)) {
    if (!is_valid_name(*name)) {
      r.error(*root.get("name"), "name",
              in_quotes(*name) + " is not a usable run directory name; use letters, digits, '.', '_' and '-'");
    }
    job.name = *name;
  } else if (root.get("name") == nullptr) {
    job.name = r.path().stem().string();
    if (!is_valid_name(job.name)) r.error(root.source(), "name", "missing, and the file name is not a usable run name; add it");
  }
  if (const auto every = r.get_number(root, "checkpoint_every_s", "", false)) {
    if (const std::string why = checkpoint_every_problem(*every); !why.empty()) {
      r.error(*root.get("checkpoint_every_s"), "checkpoint_every_s", why);
    } else {
      job.checkpoint_every_s = *every;
    }
  }
  if (const auto grace = r.get_seconds(root, "grace_s", "", Bound::inclusive)) job.grace_s = *grace;
  if (const auto seed = r.get_int(root, "seed", "", false)) {
    if (*seed < 0) {
      r.error(*root.get("seed"), "seed", "must be >= 0");
    } else {
      job.seed = static_cast<std::uint64_t>(*seed);
    }
  }
}

void read_objective(Reader& r, const toml::table& t, JobSpec& job) {
  const std::string prefix = "objective";
  r.check_keys(t, prefix, {"command", "table", "table_objective", "table_task", "table_time", "table_restrict", "direction",
                           "timeout_s",
                           "kill_grace_s", "retries", "stepwise", "failures", "objectives"});
  ObjectiveSpec& o = job.objective;
  read_command(r, t, o);
  read_table_keys(r, t, o);
  if (const auto direction = r.get_string(t, "direction", prefix, false)) {
    if (*direction == "maximize") {
      o.direction = Direction::maximize;
    } else if (*direction == "minimize") {
      o.direction = Direction::minimize;
    } else {
      r.error(*t.get("direction"), "objective.direction", in_quotes(*direction) + " is neither \"maximize\" nor \"minimize\"");
    }
  } else if (t.get("direction") == nullptr && t.get("objectives") == nullptr) {
    r.error(t.source(), "objective.direction",
            "missing; add direction = \"maximize\" or \"minimize\" (or objectives = [...] for several objectives)");
  }
  if (const auto timeout = r.get_seconds(t, "timeout_s", prefix, Bound::exclusive, "; leave it out for no limit")) {
    o.timeout_s = *timeout;
  }
  if (const auto grace = r.get_seconds(t, "kill_grace_s", prefix, Bound::inclusive)) o.kill_grace_s = *grace;
  if (const auto retries = r.get_int_in(t, "retries", prefix, false, 0, 100, "must be in 0..100")) o.retries = *retries;
  if (const auto steps = r.get_int_in(t, "stepwise", prefix, false, 1, 1000,
                                      "must be in 1..1000 (the number of steps each result reports)")) {
    o.stepwise = *steps;
  }
  if (const auto failures = r.get_string(t, "failures", prefix, false)) {
    if (*failures == "learn") {
      o.failures = FailureLearning::learn;
    } else if (*failures == "ignore") {
      o.failures = FailureLearning::ignore;
    } else {
      r.error(*t.get("failures"), "objective.failures", in_quotes(*failures) + " is neither \"learn\" nor \"ignore\"");
    }
  }
  read_objectives(r, t, o);
}

}  // namespace lbo::jobs::job_file
