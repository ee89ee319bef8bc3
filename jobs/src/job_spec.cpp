#include "lbo/jobs/job_spec.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <toml++/toml.h>

#include "lbo/jobs/error.hpp"
#include "lbo/jobs/protocol.hpp"

namespace fs = std::filesystem;

namespace lbo::jobs {

std::string_view to_string(Direction direction) {
  return direction == Direction::maximize ? "maximize" : "minimize";
}

std::string_view to_string(SurrogateKind kind) {
  switch (kind) {
    case SurrogateKind::random: return "random";
    case SurrogateKind::gp: return "gp";
    case SurrogateKind::ablr: return "ablr";
    case SurrogateKind::lbo: return "lbo";
    case SurrogateKind::libo: return "libo";
    case SurrogateKind::jumbo: return "jumbo";
  }
  return "?";
}

std::string_view to_string(AcquisitionKind kind) {
  switch (kind) {
    case AcquisitionKind::ucb: return "ucb";
    case AcquisitionKind::ei: return "ei";
    case AcquisitionKind::pi: return "pi";
    case AcquisitionKind::hedge: return "hedge";
  }
  return "?";
}

std::string_view to_string(TaskOrigin origin) {
  switch (origin) {
    case TaskOrigin::job_file: return "job file";
    case TaskOrigin::added: return "add-task";
    case TaskOrigin::watched: return "watch";
  }
  return "?";
}

int JobSpec::total_budget() const {
  int total = 0;
  for (const TaskSpec& t : tasks) total += t.budget;
  return total;
}

bool is_valid_name(std::string_view name) {
  if (name.empty() || name.front() == '.' || name.size() > 200) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
}

std::string task_name_for(const std::filesystem::path& dataset) {
  std::string name = dataset.stem().string();
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
  }
  while (!name.empty() && name.front() == '.') name.erase(name.begin());
  if (name.size() > 200) name.resize(200);
  return name.empty() ? "task" : name;
}

std::optional<int> default_budget_in(std::string_view job_text) {
  try {
    const toml::table root = toml::parse(job_text);
    if (const auto n = root["schedule"]["default_budget"].value<std::int64_t>(); n && *n >= 1 && *n <= kMaxBudget) {
      return static_cast<int>(*n);
    }
  } catch (const toml::parse_error&) {
  }
  return std::nullopt;
}

int libo_initial_random(int budget, int s) {
  const double n = std::sqrt(static_cast<double>(std::max(budget, 0))) / std::pow(static_cast<double>(std::max(s, 1)), 0.25);
  // A hair below the ceiling absorbs rounding: sqrt(16)/1 is 4, not 5.
  return static_cast<int>(std::ceil(n - 1e-9));
}

int usable_cores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

namespace {

constexpr std::string_view kBudgetRule = "must be between 1 and 100000000";

// results.csv has these columns before the parameters; a parameter may not share a name.
constexpr std::string_view kFixedColumns[] = {"trial",    "task",       "status", "objective",
                                              "attempts", "duration_s", "worker"};

// step_1..step_T: the results.csv columns of a stepwise objective.
bool is_step_column(std::string_view name, int steps) {
  if (steps <= 0 || !name.starts_with("step_")) return false;
  int k = 0;
  const std::string_view digits = name.substr(5);
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), k);
  return ec == std::errc() && end == digits.data() + digits.size() && k >= 1 && k <= steps;
}

std::string in_quotes(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string join_quoted(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + in_quotes(item);
  return out;
}

std::string_view type_name(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::array: return "an array";
    case toml::node_type::table: return "a table";
    default: return "a date/time";
  }
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitution = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitution});
    }
  }
  return row[b.size()];
}

// Whether `file` can be run: an executable regular file.
bool is_executable_file(const fs::path& file) {
  std::error_code ec;
  return fs::is_regular_file(file, ec) && ::access(file.c_str(), X_OK) == 0;
}

// The executable file a bare program name runs, as posix_spawnp finds it on PATH.
std::optional<fs::path> find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    fs::path candidate = fs::path(dir.empty() ? "." : dir) / program;
    if (is_executable_file(candidate)) return candidate;
  }
  return std::nullopt;
}

// Collects every problem in one pass so that a user fixes a job file in one edit.
class JobParser {
 public:
  JobParser(const fs::path& path, std::string_view text) : path_(path), text_(text) {
    std::error_code ec;
    base_dir_ = fs::absolute(path, ec).parent_path();
  }

  JobSpec parse() {
    toml::table root;
    try {
      root = toml::parse(text_, path_.string());
    } catch (const toml::parse_error& e) {
      const auto& begin = e.source().begin;
      throw InputError(path_.string() + ":" + std::to_string(begin.line) + ":" +
                       std::to_string(begin.column) + ": syntax error: " +
                       std::string(e.description()));
    }
    JobSpec job;
    std::error_code ec;
    job.job_file = fs::absolute(path_, ec);
    job.source_text = std::string(text_);
    check_keys(root, "", {"name", "seed", "checkpoint_every_s", "grace_s", "objective", "policy", "workers", "schedule",
                          "space", "tasks"});
    parse_top(root, job);
    if (const toml::table* t = require_table(root, "objective", "")) parse_objective(*t, job);
    if (const toml::table* t = optional_table(root, "policy", "")) parse_policy(*t, job);
    if (const toml::table* t = optional_table(root, "workers", "")) parse_workers(*t, job);
    if (job.workers.local_slots_auto) {
      job.workers.local_slots = std::max(usable_cores() / job.workers.threads_per_trial.value_or(1), 1);
    }
    if (const toml::table* t = optional_table(root, "schedule", "")) parse_schedule(*t, job);
    if (const toml::table* t = require_table(root, "space", "")) parse_space(*t, job);
    parse_tasks(root, job);
    if (!errors_.empty()) {
      std::string message;
      for (const std::string& e : errors_) message += (message.empty() ? "" : "\n") + e;
      throw InputError(message);
    }
    return job;
  }

 private:
  // "job.toml:14:9: key", the start of every message about `key` at `where`.
  std::string place(const toml::source_region& where, std::string_view key) const {
    std::string location = path_.string();
    if (where.begin.line > 0) {
      location += ":" + std::to_string(where.begin.line) + ":" + std::to_string(where.begin.column);
    }
    return location + ": " + std::string(key);
  }
  void error(const toml::source_region& where, std::string_view key, std::string_view what) {
    errors_.push_back(place(where, key) + ": " + std::string(what));
  }
  void error(const toml::node& where, std::string_view key, std::string_view what) {
    error(where.source(), key, what);
  }

  static std::string key_path(std::string_view prefix, std::string_view key) {
    return prefix.empty() ? std::string(key) : std::string(prefix) + "." + std::string(key);
  }

  void check_keys(const toml::table& table, std::string_view prefix,
                  std::initializer_list<std::string_view> allowed) {
    for (auto&& [key, node] : table) {
      const std::string_view name = key.str();
      if (std::find(allowed.begin(), allowed.end(), name) != allowed.end()) continue;
      std::string message = "unknown key";
      std::string_view closest;
      std::size_t best = 3;  // suggest only near misses
      for (std::string_view candidate : allowed) {
        const std::size_t d = edit_distance(name, candidate);
        if (d < best) best = d, closest = candidate;
      }
      if (!closest.empty()) {
        message += "; did you mean \"" + std::string(closest) + "\"?";
      } else {
        message += "; allowed here: ";
        for (std::string_view candidate : allowed) {
          message += (candidate == *allowed.begin() ? "" : ", ") + std::string(candidate);
        }
      }
      error(key.source(), key_path(prefix, name), message);
    }
  }

  const toml::table* optional_table(const toml::table& parent, std::string_view key,
                                    std::string_view prefix) {
    const toml::node* node = parent.get(key);
    if (node == nullptr) return nullptr;
    if (!node->is_table()) {
      error(*node, key_path(prefix, key), "must be a table, not " + std::string(type_name(*node)));
      return nullptr;
    }
    return node->as_table();
  }

  const toml::table* require_table(const toml::table& parent, std::string_view key,
                                   std::string_view prefix) {
    if (parent.get(key) == nullptr) {
      error(parent.source(), key_path(prefix, key), "missing; add a [" + std::string(key) + "] table");
      return nullptr;
    }
    return optional_table(parent, key, prefix);
  }

  // A typed value: nullptr when absent (and reported when `required`) or of the wrong type.
  template <class T>
  std::optional<T> get(const toml::table& table, std::string_view key, std::string_view prefix,
                       bool required, std::string_view expected) {
    const toml::node* node = table.get(key);
    if (node == nullptr) {
      if (required) error(table.source(), key_path(prefix, key), "missing; add it");
      return std::nullopt;
    }
    if constexpr (std::is_same_v<T, double>) {
      if (node->is_integer()) return static_cast<double>(node->as_integer()->get());
    }
    if (const auto value = node->value_exact<T>()) return value;
    error(*node, key_path(prefix, key),
          "must be " + std::string(expected) + ", not " + std::string(type_name(*node)));
    return std::nullopt;
  }

  std::optional<std::string> get_string(const toml::table& t, std::string_view key,
                                        std::string_view prefix, bool required) {
    return get<std::string>(t, key, prefix, required, "a string");
  }
  std::optional<std::int64_t> get_int(const toml::table& t, std::string_view key,
                                      std::string_view prefix, bool required) {
    return get<std::int64_t>(t, key, prefix, required, "an integer");
  }
  std::optional<double> get_number(const toml::table& t, std::string_view key,
                                   std::string_view prefix, bool required) {
    return get<double>(t, key, prefix, required, "a number");
  }

  // An integer in [low, high], reported otherwise.
  std::optional<int> get_int_in(const toml::table& t, std::string_view key, std::string_view prefix,
                                bool required, std::int64_t low, std::int64_t high,
                                std::string_view rule) {
    const auto value = get_int(t, key, prefix, required);
    if (!value) return std::nullopt;
    if (*value < low || *value > high) {
      error(*t.get(key), key_path(prefix, key),
            std::string(rule) + " (got " + std::to_string(*value) + ")");
      return std::nullopt;
    }
    return static_cast<int>(*value);
  }

  // Whether a range includes its lower end, 0.
  enum class Bound : std::uint8_t { inclusive, exclusive };

  // A number of seconds in [0, kMaxSeconds] (0 left out when `zero` is exclusive), reported
  // otherwise: longer ones overflow the timers' nanoseconds.
  std::optional<double> get_seconds(const toml::table& t, std::string_view key, std::string_view prefix, Bound zero,
                                    std::string_view hint = "") {
    const auto value = get_number(t, key, prefix, false);
    if (!value) return std::nullopt;
    const bool above_zero = zero == Bound::inclusive ? *value >= 0 : *value > 0;
    if (!above_zero || !(*value <= kMaxSeconds)) {
      error(*t.get(key), key_path(prefix, key),
            std::string(zero == Bound::inclusive ? "must be a number of seconds between 0 and 1e9"
                                                 : "must be a number of seconds > 0 and <= 1e9") +
                " (got " + format_number(*value) + ")" + std::string(hint));
      return std::nullopt;
    }
    return value;
  }

  // Relative paths resolve against the job file's folder.
  fs::path resolve(const std::string& path) const {
    fs::path p(path);
    return (p.is_absolute() ? p : base_dir_ / p).lexically_normal();
  }

  void parse_top(const toml::table& root, JobSpec& job) {
    if (const auto name = get_string(root, "name", "", false)) {
      if (!is_valid_name(*name)) {
        error(*root.get("name"), "name",
              in_quotes(*name) + " is not a usable run directory name; use letters, digits, "
                              "'.', '_' and '-'");
      }
      job.name = *name;
    } else if (root.get("name") == nullptr) {
      job.name = path_.stem().string();
      if (!is_valid_name(job.name)) {
        error(root.source(), "name", "missing, and the file name is not a usable run name; add it");
      }
    }
    if (const auto every = get_number(root, "checkpoint_every_s", "", false)) {
      if (const std::string why = checkpoint_every_problem(*every); !why.empty()) {
        error(*root.get("checkpoint_every_s"), "checkpoint_every_s", why);
      } else {
        job.checkpoint_every_s = *every;
      }
    }
    if (const auto grace = get_seconds(root, "grace_s", "", Bound::inclusive)) job.grace_s = *grace;
    if (const auto seed = get_int(root, "seed", "", false)) {
      if (*seed < 0) {
        error(*root.get("seed"), "seed", "must be >= 0");
      } else {
        job.seed = static_cast<std::uint64_t>(*seed);
      }
    }
  }

  void parse_objective(const toml::table& t, JobSpec& job) {
    const std::string prefix = "objective";
    check_keys(t, prefix, {"command", "direction", "timeout_s", "kill_grace_s", "retries", "stepwise"});
    ObjectiveSpec& o = job.objective;
    parse_command(t, o);
    if (const auto direction = get_string(t, "direction", prefix, false)) {
      if (*direction == "maximize") {
        o.direction = Direction::maximize;
      } else if (*direction == "minimize") {
        o.direction = Direction::minimize;
      } else {
        error(*t.get("direction"), "objective.direction",
              in_quotes(*direction) + " is neither \"maximize\" nor \"minimize\"");
      }
    } else if (t.get("direction") == nullptr) {
      error(t.source(), "objective.direction", "missing; add direction = \"maximize\" or \"minimize\"");
    }
    if (const auto timeout = get_seconds(t, "timeout_s", prefix, Bound::exclusive, "; leave it out for no limit")) {
      o.timeout_s = *timeout;
    }
    if (const auto grace = get_seconds(t, "kill_grace_s", prefix, Bound::inclusive)) o.kill_grace_s = *grace;
    if (const auto retries = get_int_in(t, "retries", prefix, false, 0, 100, "must be in 0..100")) {
      o.retries = *retries;
    }
    if (const auto steps = get_int_in(t, "stepwise", prefix, false, 1, 1000, "must be in 1..1000 (the number of steps each result reports)")) {
      o.stepwise = *steps;
    }
  }

  void parse_command(const toml::table& t, ObjectiveSpec& o) {
    const toml::node* node = t.get("command");
    if (node == nullptr) {
      error(t.source(), "objective.command",
            "missing; add command = [\"program\", \"arg\", ...] (an argv array, no shell)");
      return;
    }
    const toml::array* array = node->as_array();
    if (array == nullptr || array->empty()) {
      error(*node, "objective.command", "must be a non-empty array of strings");
      return;
    }
    for (std::size_t i = 0; i < array->size(); ++i) {
      const toml::node& element = *array->get(i);
      const std::string key = "objective.command[" + std::to_string(i) + "]";
      const auto arg = element.value_exact<std::string>();
      if (!arg) {
        error(element, key, "must be a string, not " + std::string(type_name(element)));
        continue;
      }
      if (const auto unknown = find_unknown_placeholder(*arg)) {
        std::string known;
        for (std::string_view p : kPlaceholders) known += (known.empty() ? "" : ", ") + ("{" + std::string(p) + "}");
        error(element, key, "unknown placeholder {" + *unknown + "}; use one of " + known);
      }
      o.command.push_back(resolve_argument(element, key, *arg, i == 0));
    }
  }

  // The program must exist now; other arguments that name an existing file next to the job
  // file become absolute (trials run in their own working directory).
  std::string resolve_argument(const toml::node& where, const std::string& key,
                               const std::string& arg, bool is_program) {
    const bool has_placeholder = arg.find('{') != std::string::npos;
    if (arg.empty() || has_placeholder || fs::path(arg).is_absolute()) {
      if (is_program && !has_placeholder && !arg.empty()) {
        if (!is_executable_file(arg)) {
          error(where, key, in_quotes(arg) + " is not an executable file");
        } else {
          check_interpreter(where, key, arg);
        }
      }
      return arg;
    }
    if (is_program) {
      if (arg.find('/') == std::string::npos) {
        if (!find_on_path(arg)) {
          error(where, key, in_quotes(arg) + " is not found on PATH");
        } else {
          check_interpreter(where, key, arg);
        }
        return arg;
      }
      const fs::path program = resolve(arg);
      if (!is_executable_file(program)) {
        error(where, key, in_quotes(arg) + " (" + program.string() + ") is not an executable file");
      } else {
        check_interpreter(where, key, program.string());
      }
      return program.string();
    }
    std::error_code ec;
    const fs::path candidate = resolve(arg);
    if (arg.front() != '-' && fs::exists(candidate, ec)) return candidate.string();
    return arg;
  }

  // A script whose #! line names a missing interpreter exists, yet fails every trial with
  // "No such file or directory".
  void check_interpreter(const toml::node& where, const std::string& key, const std::string& program) {
    if (const auto problem = interpreter_problem(program)) {
      error(where, key, in_quotes(fs::path(program).filename().string()) + ": " + *problem + "; fix its first line");
    }
  }

  void parse_policy(const toml::table& t, JobSpec& job) {
    const std::string prefix = "policy";
    check_keys(t, prefix,
               {"surrogate", "acquisition", "initial_random", "ucb_beta", "ucb_scale", "ucb_delta", "xi", "hedge_eta",
                "candidates", "refine", "network_width", "network_depth", "networks", "ibp_alpha", "warm_start", "residual_gp",
                "transfer_gp", "fit_threads", "transfer_best", "hedge_memory", "libo_full_share",
                "jumbo_threshold", "jumbo_cold_switch", "libo_gp_switch"});
    PolicySpec& policy = job.policy;
    if (const auto surrogate = get_string(t, "surrogate", prefix, false)) {
      if (const auto kind = one_of<SurrogateKind>(
              *surrogate,
              {SurrogateKind::random, SurrogateKind::gp, SurrogateKind::ablr, SurrogateKind::lbo, SurrogateKind::libo,
               SurrogateKind::jumbo})) {
        policy.surrogate = *kind;
      } else {
        error(*t.get("surrogate"), "policy.surrogate",
              in_quotes(*surrogate) +
                  " is not a surrogate; use \"lbo\", \"gp\", \"ablr\", \"libo\", \"jumbo\" or \"random\"");
      }
    }
    // LiBO's kernel is learned from its tasks' forced exploration: on unless initial_random says.
    if (policy.surrogate == SurrogateKind::libo && !t.contains("initial_random")) policy.libo_exploration = true;
    // JUMBO's acquisition is UCB in the paper: its default unless the job says otherwise.
    if (policy.surrogate == SurrogateKind::jumbo) policy.acquisition = AcquisitionKind::ucb;
    if (const auto acquisition = get_string(t, "acquisition", prefix, false)) {
      if (const auto kind = one_of<AcquisitionKind>(
              *acquisition, {AcquisitionKind::ucb, AcquisitionKind::ei, AcquisitionKind::pi, AcquisitionKind::hedge})) {
        policy.acquisition = *kind;
      } else {
        error(*t.get("acquisition"), "policy.acquisition",
              in_quotes(*acquisition) + " is not an acquisition; use \"ucb\", \"ei\", \"pi\" or \"hedge\"");
      }
    }
    if (const toml::node* initial = t.get("initial_random"); initial && initial->is_string()) {
      if (initial->value_exact<std::string>() == std::optional<std::string>("libo")) {
        policy.libo_exploration = true;
      } else {
        error(*initial, "policy.initial_random", "must be a number >= 0 or \"libo\"");
      }
    } else if (const auto n = get_int_in(t, "initial_random", prefix, false, 0, 1'000'000, "must be between 0 and 1000000 or \"libo\"")) {
      policy.initial_random = *n;
    }
    if (const toml::node* warm = t.get("warm_start")) {
      const toml::array* runs = warm->as_array();
      if (runs == nullptr) {
        error(*warm, "policy.warm_start", "must be an array of run directories, e.g. [\"runs/older-run\"]");
      } else {
        for (std::size_t i = 0; i < runs->size(); ++i) {
          const toml::node& entry = *runs->get(i);
          const std::string key = "policy.warm_start[" + std::to_string(i) + "]";
          const auto text = entry.value_exact<std::string>();
          if (!text) {
            error(entry, key, "must be a string naming a run directory");
            continue;
          }
          // Whether it holds a run is the orchestrator's to say (it knows a run's files).
          policy.warm_start.push_back(resolve(*text));
          policy.warm_start_places.push_back(place(entry.source(), key));
        }
      }
    }
    if (const toml::node* beta = t.get("ucb_beta")) {
      if (beta->value_exact<std::string>() == std::optional<std::string>("schedule")) {
        policy.ucb_beta.reset();
      } else if (const auto value = get_number(t, "ucb_beta", prefix, false); value && *value > 0) {
        policy.ucb_beta = *value;
      } else {
        error(*beta, "policy.ucb_beta", "must be \"schedule\" or a number > 0");
      }
    }
    positive(t, prefix, "ucb_scale", policy.ucb_scale);
    if (positive(t, prefix, "ucb_delta", policy.ucb_delta) && policy.ucb_delta >= 1) {
      error(*t.get("ucb_delta"), "policy.ucb_delta", "must be in (0, 1)");
    }
    if (const auto xi = get_number(t, "xi", prefix, false)) {
      if (*xi < 0 || !std::isfinite(*xi)) {
        error(*t.get("xi"), "policy.xi", "must be >= 0");
      } else {
        policy.xi = *xi;
      }
    }
    positive(t, prefix, "hedge_eta", policy.hedge_eta);
    if (const auto memory = get_number(t, "hedge_memory", prefix, false)) {
      if (!(*memory >= 0 && *memory <= 1)) {
        error(*t.get("hedge_memory"), "policy.hedge_memory", "must be in [0, 1]");
      } else {
        policy.hedge_memory = *memory;
      }
    }
    if (const auto n = get_int_in(t, "candidates", prefix, false, 1, 1'000'000, "must be in 1..1000000")) {
      policy.candidates = *n;
    }
    if (const auto n = get_int_in(t, "refine", prefix, false, 0, 1000, "must be in 0..1000")) policy.refine = *n;
    if (const auto n = get_int_in(t, "transfer_best", prefix, false, 0, 1'000'000, "must be in 0..1000000")) {
      policy.transfer_best = *n;
    }
    if (const auto n = get_int_in(t, "fit_threads", prefix, false, 1, 1024, "must be in 1..1024")) policy.fit_threads = *n;
    if (const auto n = get_int_in(t, "network_width", prefix, false, 1, 4096, "must be in 1..4096")) {
      policy.network_width = *n;
    }
    if (const auto n = get_int_in(t, "network_depth", prefix, false, 1, 32, "must be in 1..32")) {
      policy.network_depth = *n;
    }
    if (const auto n = get_int_in(t, "networks", prefix, false, 1, 100, "must be in 1..100")) policy.networks = *n;
    positive(t, prefix, "ibp_alpha", policy.ibp_alpha);
    if (const auto residual = get<bool>(t, "residual_gp", prefix, false, "true or false")) policy.residual_gp = *residual;
    if (const auto transfer = get<bool>(t, "transfer_gp", prefix, false, "true or false")) policy.transfer_gp = *transfer;
    if (const auto share = get<bool>(t, "libo_full_share", prefix, false, "true or false")) policy.libo_full_share = *share;
    if (const auto on = get<bool>(t, "libo_gp_switch", prefix, false, "true or false")) policy.libo_gp_switch = *on;
    if (const auto threshold = get_number(t, "jumbo_threshold", prefix, false)) {
      if (!(*threshold >= 0)) {
        error(*t.get("jumbo_threshold"), "policy.jumbo_threshold", "must be a number >= 0 (inf: the cold GP alone)");
      } else {
        policy.jumbo_threshold = *threshold;
      }
    }
    if (const auto on = get<bool>(t, "jumbo_cold_switch", prefix, false, "true or false")) policy.jumbo_cold_switch = *on;
  }

  // A number > 0 into `out`; false when absent or reported.
  bool positive(const toml::table& t, const std::string& prefix, std::string_view key, double& out) {
    const auto value = get_number(t, key, prefix, false);
    if (!value) return false;
    if (!(*value > 0) || !std::isfinite(*value)) {
      error(*t.get(key), key_path(prefix, key), "must be a number > 0");
      return false;
    }
    out = *value;
    return true;
  }

  template <class Enum>
  static std::optional<Enum> one_of(std::string_view name, std::initializer_list<Enum> values) {
    for (Enum v : values) {
      if (to_string(v) == name) return v;
    }
    return std::nullopt;
  }

  void parse_schedule(const toml::table& t, JobSpec& job) {
    const std::string prefix = "schedule";
    check_keys(t, prefix, {"watch", "watch_pattern", "default_budget", "concurrent_tasks", "idle_timeout_s"});
    ScheduleSpec& s = job.schedule;
    if (const auto watch = get_string(t, "watch", prefix, false)) {
      const fs::path folder = resolve(*watch);
      std::error_code ec;
      if (!fs::is_directory(folder, ec)) {
        error(*t.get("watch"), "schedule.watch", in_quotes(*watch) + " is not a folder (looked for " + folder.string() + ")");
      }
      s.watch = folder;
    }
    if (const auto pattern = get_string(t, "watch_pattern", prefix, false)) {
      if (pattern->empty() || pattern->find('/') != std::string::npos) {
        error(*t.get("watch_pattern"), "schedule.watch_pattern",
              "must be a glob over file names without '/', such as \"*.csv\" or \"year-*.parquet\"");
      } else {
        s.watch_pattern = *pattern;
        if (!s.watch) error(*t.get("watch_pattern"), "schedule.watch_pattern", "needs watch, the folder to watch; add it");
      }
    }
    if (const auto n = get_int_in(t, "default_budget", prefix, false, 1, kMaxBudget, kBudgetRule)) {
      s.default_budget = *n;
    }
    if (const auto n = get_int_in(t, "concurrent_tasks", prefix, false, 1, 100'000, "must be in 1..100000")) {
      s.concurrent_tasks = *n;
    }
    if (const auto idle = get_seconds(t, "idle_timeout_s", prefix, Bound::inclusive)) s.idle_timeout_s = *idle;
  }

  void parse_workers(const toml::table& t, JobSpec& job) {
    const std::string prefix = "workers";
    WorkersSpec& w = job.workers;
    check_keys(t, prefix, {"local_slots", "slots_per_rank", "threads_per_trial", "gpus_per_trial", "gpus", "rank_timeout_s"});
    if (const auto timeout = get_number(t, "rank_timeout_s", prefix, false)) {
      if (*timeout >= 1 && *timeout <= 86'400) {
        w.rank_timeout_s = *timeout;
      } else {
        error(*t.get("rank_timeout_s"), "workers.rank_timeout_s",
              "must be a number of seconds between 1 and 86400 (got " + format_number(*timeout) + ")");
      }
    }
    if (const auto automatic = auto_or_reported(t, "local_slots")) {
      if (*automatic) w.local_slots_auto = true;
    } else if (const auto n = get_int_in(t, "local_slots", prefix, false, 1, 4096, "must be in 1..4096 or \"auto\"")) {
      w.local_slots = *n;
      w.local_slots_auto = false;
    }
    if (const auto automatic = auto_or_reported(t, "slots_per_rank")) {
      if (*automatic) w.slots_per_rank.reset();
    } else if (const auto n = get_int_in(t, "slots_per_rank", prefix, false, 1, 4096, "must be in 1..4096 or \"auto\"")) {
      w.slots_per_rank = *n;
    }
    if (const auto n = get_int_in(t, "threads_per_trial", prefix, false, 1, 4096, "must be in 1..4096")) {
      w.threads_per_trial = *n;
    }
    if (const auto n = get_int_in(t, "gpus_per_trial", prefix, false, 0, 1024, "must be in 0..1024")) {
      w.gpus_per_trial = *n;
    }
    if (const toml::node* node = t.get("gpus")) {
      const toml::array* array = node->as_array();
      if (array == nullptr) {
        error(*node, "workers.gpus", "must be an array of device ids, e.g. [0, 1] or [\"GPU-8e2f...\"]");
        return;
      }
      for (const toml::node& item : *array) {
        std::string id;
        if (const auto i = item.value_exact<std::int64_t>(); i && *i >= 0) {
          id = std::to_string(*i);
        } else if (const auto text = item.value_exact<std::string>(); text && !text->empty() &&
                                                                      text->find_first_of(", ") == std::string::npos) {
          id = *text;
        } else {
          error(item, "workers.gpus", "each device must be an integer >= 0 or a non-empty string without commas or spaces");
          continue;
        }
        if (std::find(w.gpus.begin(), w.gpus.end(), id) != w.gpus.end()) {
          error(item, "workers.gpus", "device " + id + " is listed twice");
          continue;
        }
        w.gpus.push_back(id);
      }
    }
  }

  // A string value of a key that also takes a number: true for "auto", false for any other
  // string (reported); nullopt when it is not a string (the caller reads the number).
  std::optional<bool> auto_or_reported(const toml::table& t, std::string_view key) {
    const toml::node* node = t.get(key);
    if (node == nullptr || !node->is_string()) return std::nullopt;
    if (node->value_exact<std::string>() == "auto") return true;
    error(*node, key_path("workers", key), "must be a number or \"auto\", not \"" + *node->value_exact<std::string>() + "\"");
    return false;
  }

  struct PendingConditions {
    int param;
    const toml::table* when;
    std::string prefix;
  };

  void parse_space(const toml::table& space, JobSpec& job) {
    // toml++ tables are ordered by key; keep the file's order, which users read results in.
    std::vector<std::pair<const toml::key*, const toml::node*>> entries;
    for (auto&& [key, node] : space) entries.emplace_back(&key, &node);
    std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
      const auto& pa = a.first->source().begin;
      const auto& pb = b.first->source().begin;
      return pa.line != pb.line ? pa.line < pb.line : pa.column < pb.column;
    });
    if (entries.empty()) {
      error(space, "space", "define at least one parameter, e.g. x = { type = \"float\", low = 0, high = 1 }");
      return;
    }
    std::vector<ParamSpec> params;
    std::vector<PendingConditions> conditions;
    std::vector<const toml::node*> param_nodes;
    bool all_valid = true;
    for (const auto& [key, node] : entries) {
      const std::string name(key->str());
      const std::string prefix = "space." + name;
      if (!is_parameter_name(name)) {
        error(key->source(), prefix, "parameter names use letters, digits and '_', starting with a letter or '_'");
        all_valid = false;
      } else if (std::find(std::begin(kFixedColumns), std::end(kFixedColumns), name) !=
                 std::end(kFixedColumns)) {
        error(key->source(), prefix, "the name is taken by a results.csv column; rename the parameter");
        all_valid = false;
      } else if (is_step_column(name, job.objective.stepwise)) {
        error(key->source(), prefix, "the name is taken by a results.csv column of objective.stepwise; rename the parameter");
        all_valid = false;
      }
      const toml::table* t = node->as_table();
      if (t == nullptr) {
        error(*node, prefix, "must be a table such as { type = \"float\", low = 0, high = 1 }");
        all_valid = false;
        continue;
      }
      std::optional<ParamSpec> param = parse_param(*t, name, prefix);
      if (!param) {
        all_valid = false;
        continue;
      }
      if (const toml::node* when = t->get("when")) {
        if (!when->is_table()) {
          error(*when, prefix + ".when", "must be a table such as { model = \"xgboost\" }");
          all_valid = false;
        } else {
          conditions.push_back({static_cast<int>(params.size()), when->as_table(), prefix + ".when"});
        }
      }
      params.push_back(std::move(*param));
      param_nodes.push_back(node);
    }
    if (!all_valid) return;
    for (const PendingConditions& pending : conditions) {
      if (!parse_conditions(pending, params)) all_valid = false;
    }
    if (!all_valid) return;
    try {
      job.space = Space(std::move(params));
    } catch (const std::invalid_argument& e) {
      error(space, "space", e.what());
    }
  }

  static bool is_parameter_name(std::string_view name) {
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name.front()))) return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
  }

  std::optional<ParamSpec> parse_param(const toml::table& t, const std::string& name,
                                       const std::string& prefix) {
    check_keys(t, prefix, {"type", "low", "high", "log", "choices", "when"});
    ParamSpec p;
    p.name = name;
    const auto type = get_string(t, "type", prefix, false);
    if (!type) {
      if (t.get("type") == nullptr) {
        error(t, prefix + ".type", "missing; add type = \"float\", \"int\" or \"categorical\"");
      }
      return std::nullopt;
    }
    const std::size_t errors_before = errors_.size();
    if (*type == "float" || *type == "int") {
      p.type = *type == "float" ? ParamType::real : ParamType::integer;
      for (std::string_view key : {"choices"}) {
        if (const toml::node* n = t.get(key)) {
          error(*n, prefix + "." + std::string(key), "only categorical parameters have choices");
        }
      }
      const auto low = p.type == ParamType::real ? get_number(t, "low", prefix, true)
                                                 : to_double(get_int(t, "low", prefix, true));
      const auto high = p.type == ParamType::real ? get_number(t, "high", prefix, true)
                                                  : to_double(get_int(t, "high", prefix, true));
      if (const auto log = get<bool>(t, "log", prefix, false, "true or false")) p.log = *log;
      if (low && high) {
        p.low = *low;
        p.high = *high;
        // Int bounds are compared and printed as the integers written, not as doubles: near
        // 2^63, neighbouring integers are one double.
        const bool is_int = p.type == ParamType::integer;
        const std::int64_t int_low = is_int ? *t.get("low")->value_exact<std::int64_t>() : 0;
        const std::int64_t int_high = is_int ? *t.get("high")->value_exact<std::int64_t>() : 0;
        const auto text = [&](double v, std::int64_t i) { return is_int ? std::to_string(i) : format_number(v); };
        if (!std::isfinite(p.low) || !std::isfinite(p.high)) {
          error(t, prefix, "low and high must be finite");
        } else if (is_int ? !(int_low < int_high) : !(p.low < p.high)) {
          error(*t.get("low"), prefix,
                "low (" + text(p.low, int_low) + ") must be < high (" + text(p.high, int_high) + ")");
        } else if (is_int && (int_low < -kMaxIntBound || int_high > kMaxIntBound)) {
          error(*t.get(int_low < -kMaxIntBound ? "low" : "high"), prefix,
                "int bounds must lie within -" + std::to_string(kMaxIntBound) + " and " + std::to_string(kMaxIntBound) +
                    " (±2^53, the integers a double holds exactly; got " + text(p.low, int_low) + " to " +
                    text(p.high, int_high) + "); use a float parameter for a wider range");
        } else if (p.log && !(p.low > 0)) {
          error(*t.get("low"), prefix,
                "log = true needs low > 0 (got " + text(p.low, int_low) + "); raise low or drop log");
        }
      }
    } else if (*type == "categorical") {
      p.type = ParamType::categorical;
      for (std::string_view key : {"low", "high", "log"}) {
        if (const toml::node* n = t.get(key)) {
          error(*n, prefix + "." + std::string(key), "categorical parameters take only choices");
        }
      }
      parse_choices(t, prefix, p);
    } else {
      error(*t.get("type"), prefix + ".type",
            in_quotes(*type) + " is not a type; use \"float\", \"int\" or \"categorical\"");
    }
    if (errors_.size() != errors_before) return std::nullopt;
    return p;
  }

  static std::optional<double> to_double(std::optional<std::int64_t> v) {
    if (!v) return std::nullopt;
    return static_cast<double>(*v);
  }

  static std::string format_number(double v) {
    std::ostringstream out;
    out << v;
    std::string s = out.str();
    if (std::isfinite(v) && s.find_first_of(".e") == std::string::npos) s += ".0";
    return s;
  }

  void parse_choices(const toml::table& t, const std::string& prefix, ParamSpec& p) {
    const toml::node* node = t.get("choices");
    if (node == nullptr) {
      error(t, prefix + ".choices", "missing; add choices = [\"a\", \"b\"]");
      return;
    }
    const toml::array* array = node->as_array();
    if (array == nullptr || array->empty()) {
      error(*node, prefix + ".choices", "must be a non-empty array of strings");
      return;
    }
    for (std::size_t i = 0; i < array->size(); ++i) {
      const toml::node& element = *array->get(i);
      const auto choice = element.value_exact<std::string>();
      const std::string key = prefix + ".choices[" + std::to_string(i) + "]";
      if (!choice) {
        error(element, key, "must be a string, not " + std::string(type_name(element)) +
                                "; quote it, or use type = \"int\" for numbers");
      } else if (std::find(p.choices.begin(), p.choices.end(), *choice) != p.choices.end()) {
        error(element, key, in_quotes(*choice) + " is listed twice");
      } else {
        p.choices.push_back(*choice);
      }
    }
  }

  bool parse_conditions(const PendingConditions& pending, std::vector<ParamSpec>& params) {
    bool ok = true;
    ParamSpec& child = params[pending.param];
    for (auto&& [key, node] : *pending.when) {
      const std::string parent_name(key.str());
      const std::string where = pending.prefix + "." + parent_name;
      const auto parent = std::find_if(params.begin(), params.end(),
                                       [&](const ParamSpec& p) { return p.name == parent_name; });
      if (parent == params.end()) {
        std::vector<std::string> names;
        for (const ParamSpec& p : params) {
          if (p.type == ParamType::categorical) names.push_back(p.name);
        }
        error(key.source(), where,
              "no parameter is called " + in_quotes(parent_name) +
                  (names.empty() ? "" : "; categorical parameters: " + join_quoted(names)));
        ok = false;
        continue;
      }
      if (parent->name == child.name) {
        error(key.source(), where, "a parameter cannot depend on itself");
        ok = false;
        continue;
      }
      if (parent->type != ParamType::categorical) {
        error(key.source(), where,
              "conditions must name a categorical parameter; " + in_quotes(parent_name) + " is " +
                  std::string(to_string(parent->type)));
        ok = false;
        continue;
      }
      Condition condition;
      condition.parent = static_cast<int>(parent - params.begin());
      std::vector<const toml::node*> values;
      if (const toml::array* array = node.as_array()) {
        for (const toml::node& v : *array) values.push_back(&v);
        if (values.empty()) {
          error(node, where, "needs at least one value");
          ok = false;
        }
      } else {
        values.push_back(&node);
      }
      for (const toml::node* v : values) {
        const auto value = v->value_exact<std::string>();
        const auto choice = value ? std::find(parent->choices.begin(), parent->choices.end(), *value)
                                  : parent->choices.end();
        if (choice == parent->choices.end()) {
          error(*v, where,
                (value ? in_quotes(*value) : std::string(type_name(*v))) + " is not a choice of " +
                    in_quotes(parent_name) + "; choices: " + join_quoted(parent->choices));
          ok = false;
          continue;
        }
        condition.choices.push_back(static_cast<int>(choice - parent->choices.begin()));
      }
      child.when.push_back(std::move(condition));
    }
    return ok;
  }

  void parse_tasks(const toml::table& root, JobSpec& job) {
    const toml::node* node = root.get("tasks");
    if (node == nullptr) {
      // Tasks may all come from the watched folder.
      if (!job.schedule.watch) {
        error(root.source(), "tasks", "missing; add at least one [[tasks]] table with name and budget (or [schedule] watch)");
      }
      return;
    }
    const toml::array* array = node->as_array();
    if (array == nullptr || !array->is_array_of_tables() || array->empty()) {
      error(*node, "tasks", "must be an array of tables: write each task as a [[tasks]] table");
      return;
    }
    bool uses_dataset = false;
    for (const std::string& arg : job.objective.command) {
      uses_dataset = uses_dataset || uses_placeholder(arg, "dataset");
    }
    std::map<std::string, std::size_t> first_line;
    for (std::size_t i = 0; i < array->size(); ++i) {
      const toml::table& t = *array->get(i)->as_table();
      const std::string prefix = "tasks[" + std::to_string(i) + "]";
      check_keys(t, prefix, {"name", "dataset", "budget"});
      TaskSpec task;
      if (const auto name = get_string(t, "name", prefix, true)) {
        task.name = *name;
        if (!is_valid_name(*name)) {
          error(*t.get("name"), prefix + ".name",
                in_quotes(*name) + " is not a usable task name; use letters, digits, '.', '_' and '-'");
        } else if (const auto [it, inserted] = first_line.emplace(*name, t.source().begin.line);
                   !inserted) {
          error(*t.get("name"), prefix + ".name",
                "duplicate task name " + in_quotes(*name) + " (first used on line " +
                    std::to_string(it->second) + "); task names must be unique");
        }
      }
      if (const auto dataset = get_string(t, "dataset", prefix, false)) {
        const fs::path resolved = resolve(*dataset);
        std::error_code ec;
        if (!fs::exists(resolved, ec)) {
          error(*t.get("dataset"), prefix + ".dataset",
                in_quotes(*dataset) + " does not exist (looked for " + resolved.string() + ")");
        }
        task.dataset = resolved;
      } else if (uses_dataset && t.get("dataset") == nullptr) {
        error(t, prefix + ".dataset",
              "missing; objective.command uses {dataset}, so every task needs a dataset");
      }
      if (const auto budget = get_int_in(t, "budget", prefix, true, 1, kMaxBudget, kBudgetRule)) {
        task.budget = *budget;
      }
      job.tasks.push_back(std::move(task));
    }
  }

  fs::path path_;
  std::string_view text_;
  fs::path base_dir_;
  std::vector<std::string> errors_;
};

}  // namespace

std::optional<std::string> interpreter_problem(const std::string& program) {
  const std::optional<fs::path> file =
      program.find('/') == std::string::npos ? find_on_path(program) : std::optional<fs::path>(program);
  if (!file) return std::nullopt;
  std::ifstream in(*file, std::ios::binary);
  // The kernel reads the #! line from the first 256 bytes (BINPRM_BUF_SIZE) and takes the
  // interpreter up to the first blank.
  std::array<char, 256> head{};
  in.read(head.data(), head.size());
  const std::string_view text(head.data(), static_cast<std::size_t>(in.gcount()));
  if (!text.starts_with("#!")) return std::nullopt;
  const std::string_view line = text.substr(2, text.find('\n') == std::string_view::npos ? std::string_view::npos
                                                                                         : text.find('\n') - 2);
  const std::size_t begin = line.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return std::nullopt;
  const std::string interpreter(line.substr(begin, line.find_first_of(" \t\r", begin) - begin));
  // A relative interpreter resolves against the trial's own folder: nothing to check here.
  if (!fs::path(interpreter).is_absolute()) return std::nullopt;
  std::error_code ec;
  if (!fs::exists(interpreter, ec)) return "its #! interpreter " + interpreter + " does not exist";
  if (!is_executable_file(interpreter)) return "its #! interpreter " + interpreter + " is not an executable file";
  // `#!/usr/bin/env NAME`: env looks NAME up on PATH (the objective inherits lbo's PATH).
  if (fs::path(interpreter).filename() == "env") {
    std::string_view rest = line.substr(begin + interpreter.size());
    const std::size_t name_begin = rest.find_first_not_of(" \t");
    if (name_begin == std::string_view::npos) return std::nullopt;
    rest = rest.substr(name_begin);
    const std::string name(rest.substr(0, rest.find_first_of(" \t\r")));
    // Options (env -S ...) and assignments (NAME=value) are env's business.
    if (name.empty() || name.front() == '-' || name.find('=') != std::string::npos || name.find('/') != std::string::npos) {
      return std::nullopt;
    }
    if (!find_on_path(name)) return "its #! line runs " + name + " through env, and no " + name + " is on PATH";
  }
  return std::nullopt;
}

std::string checkpoint_every_problem(double seconds) {
  if (seconds >= kMinCheckpointEvery_s && seconds <= kMaxSeconds) return {};
  std::ostringstream got;
  got << seconds;
  return "must be a number of seconds between 0.1 and 1e9 (got " + got.str() + ")";
}

JobSpec parse_job(std::string_view text, const fs::path& path) {
  return JobParser(path, text).parse();
}

JobSpec load_job_file(const fs::path& path) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status)) throw InputError(path.string() + ": cannot read the job file (does it exist?)");
  if (!fs::is_regular_file(status)) {
    throw InputError(path.string() + ": not a regular file" +
                     (fs::is_directory(status) ? " but a folder" : std::string()) + "; name the job's TOML file");
  }
  const auto too_big = [&path] {
    return InputError(path.string() + ": larger than " + std::to_string(kMaxJobFileBytes >> 20) +
                      " MiB; is it the job file (a TOML file of a few kilobytes)?");
  };
  if (fs::file_size(path, ec) > kMaxJobFileBytes && !ec) throw too_big();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string() + ": cannot read the job file (" + std::strerror(errno) + ")");
  // The size is checked again as read: a file may grow, and some report none (/proc).
  std::string text;
  std::array<char, 65536> buffer{};
  while (in.read(buffer.data(), buffer.size()) || in.gcount() > 0) {
    text.append(buffer.data(), static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxJobFileBytes) throw too_big();
  }
  if (in.bad()) throw InputError(path.string() + ": cannot read the job file (" + std::strerror(errno) + ")");
  return parse_job(text, path);
}

}  // namespace lbo::jobs
