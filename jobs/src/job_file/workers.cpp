#include <algorithm>

#include "sections.hpp"

namespace fs = std::filesystem;

namespace lbo::jobs::job_file {

namespace {

// A string value of a key that also takes a number: true for "auto", false for any other
// string (reported); nullopt when it is not a string (the caller reads the number).
std::optional<bool> auto_or_reported(Reader& r, const toml::table& t, std::string_view key) {
  const toml::node* node = t.get(key);
  if (node == nullptr || !node->is_string()) return std::nullopt;
  if (node->value_exact<std::string>() == "auto") return true;
  r.error(*node, Reader::key_path("workers", key), "must be a number or \"auto\", not \"" + *node->value_exact<std::string>() + "\"");
  return false;
}

void read_gpus(Reader& r, const toml::node& node, WorkersSpec& w) {
  const toml::array* array = node.as_array();
  if (array == nullptr) {
    r.error(node, "workers.gpus", "must be an array of device ids, e.g. [0, 1] or [\"GPU-8e2f...\"]");
    return;
  }
  for (const toml::node& item : *array) {
    std::string id;
    if (const auto i = item.value_exact<std::int64_t>(); i && *i >= 0) {
      id = std::to_string(*i);
    } else if (const auto text = item.value_exact<std::string>();
               text && !text->empty() && text->find_first_of(", ") == std::string::npos) {
      id = *text;
    } else {
      r.error(item, "workers.gpus", "each device must be an integer >= 0 or a non-empty string without commas or spaces");
      continue;
    }
    if (std::find(w.gpus.begin(), w.gpus.end(), id) != w.gpus.end()) {
      r.error(item, "workers.gpus", "device " + id + " is listed twice");
      continue;
    }
    w.gpus.push_back(id);
  }
}

// simulate = N and simulate_duration; whether the job can be simulated is checked once the
// objective's table is read (check_simulation).
void read_simulation(Reader& r, const toml::table& t, WorkersSpec& w) {
  if (const auto n = r.get_int_in(t, "simulate", "workers", false, 1, kMaxSimulatedSlots,
                                  "must be in 1..1000000 (virtual slots)")) {
    w.simulate = *n;
  }
  const toml::node* node = t.get("simulate_duration");
  if (node == nullptr) return;
  std::optional<SimulatedDuration> duration;
  if (const auto seconds = node->value<double>(); seconds && !node->is_string()) {
    duration = parse_simulated_duration(std::to_string(*seconds));
  } else if (const auto text = node->value_exact<std::string>()) {
    duration = parse_simulated_duration(*text);
  }
  if (!duration) {
    r.error(*node, "workers.simulate_duration",
            "must be \"table\", seconds >= 0, \"uniform(a, b)\" with 0 <= a <= b, \"lognormal(mu, sigma)\" with sigma "
            "> 0, or \"exponential(mean)\" with mean > 0");
    return;
  }
  w.simulate_duration = *duration;
}

}  // namespace

void check_simulation(Reader& r, const toml::table& root, const JobSpec& job) {
  if (job.workers.simulate == 0 || !r.errors().empty()) return;
  if (const std::string why = simulation_problem(job, "workers.simulate"); !why.empty()) {
    r.error(*root.at_path("workers.simulate").node(), "workers.simulate", why.substr(why.find(':') + 2));
  }
}

void read_workers(Reader& r, const toml::table& t, JobSpec& job) {
  const std::string prefix = "workers";
  WorkersSpec& w = job.workers;
  r.check_keys(t, prefix, {"local_slots", "slots_per_rank", "threads_per_trial", "gpus_per_trial", "gpus", "rank_timeout_s",
                           "simulate", "simulate_duration"});
  if (const auto timeout = r.get_number(t, "rank_timeout_s", prefix, false)) {
    if (*timeout >= 1 && *timeout <= 86'400) {
      w.rank_timeout_s = *timeout;
    } else {
      r.error(*t.get("rank_timeout_s"), "workers.rank_timeout_s",
              "must be a number of seconds between 1 and 86400 (got " + format_number(*timeout) + ")");
    }
  }
  if (const auto automatic = auto_or_reported(r, t, "local_slots")) {
    if (*automatic) w.local_slots_auto = true;
  } else if (const auto n = r.get_int_in(t, "local_slots", prefix, false, 1, 4096, "must be in 1..4096 or \"auto\"")) {
    w.local_slots = *n;
    w.local_slots_auto = false;
  }
  if (const auto automatic = auto_or_reported(r, t, "slots_per_rank")) {
    if (*automatic) w.slots_per_rank.reset();
  } else if (const auto n = r.get_int_in(t, "slots_per_rank", prefix, false, 1, 4096, "must be in 1..4096 or \"auto\"")) {
    w.slots_per_rank = *n;
  }
  if (const auto n = r.get_int_in(t, "threads_per_trial", prefix, false, 1, 4096, "must be in 1..4096")) {
    w.threads_per_trial = *n;
  }
  if (const auto n = r.get_int_in(t, "gpus_per_trial", prefix, false, 0, 1024, "must be in 0..1024")) w.gpus_per_trial = *n;
  if (const toml::node* node = t.get("gpus")) read_gpus(r, *node, w);
  read_simulation(r, t, w);
}

void read_schedule(Reader& r, const toml::table& t, JobSpec& job) {
  const std::string prefix = "schedule";
  r.check_keys(t, prefix, {"watch", "watch_pattern", "default_budget", "concurrent_tasks", "idle_timeout_s"});
  ScheduleSpec& s = job.schedule;
  if (const auto watch = r.get_string(t, "watch", prefix, false)) {
    const fs::path folder = r.resolve(*watch);
    std::error_code ec;
    if (!fs::is_directory(folder, ec)) {
      r.error(*t.get("watch"), "schedule.watch", in_quotes(*watch) + " is not a folder (looked for " + folder.string() + ")");
    }
    s.watch = folder;
  }
  if (const auto pattern = r.get_string(t, "watch_pattern", prefix, false)) {
    if (pattern->empty() || pattern->find('/') != std::string::npos) {
      r.error(*t.get("watch_pattern"), "schedule.watch_pattern",
              "must be a glob over file names without '/', such as \"*.csv\" or \"year-*.parquet\"");
    } else {
      s.watch_pattern = *pattern;
      if (!s.watch) r.error(*t.get("watch_pattern"), "schedule.watch_pattern", "needs watch, the folder to watch; add it");
    }
  }
  if (const auto n = r.get_int_in(t, "default_budget", prefix, false, 1, kMaxBudget, kBudgetRule)) {
    s.default_budget = *n;
  }
  if (const auto n = r.get_int_in(t, "concurrent_tasks", prefix, false, 1, 100'000, "must be in 1..100000")) {
    s.concurrent_tasks = *n;
  }
  if (const auto idle = r.get_seconds(t, "idle_timeout_s", prefix, Bound::inclusive)) s.idle_timeout_s = *idle;
}

}  // namespace lbo::jobs::job_file
