#include "lbo/jobs/job_spec.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include <toml++/toml.h>

#include "lbo/jobs/error.hpp"
#include "lbo/jobs/protocol.hpp"
#include "job_file/reader.hpp"
#include "job_file/sections.hpp"

namespace fs = std::filesystem;

namespace lbo::jobs {

std::string_view to_string(SurrogateKind kind) { return traits_of(kind).name; }

std::string_view to_string(AcquisitionKind kind) {
  switch (kind) {
    case AcquisitionKind::ucb: return "ucb";
    case AcquisitionKind::ei: return "ei";
    case AcquisitionKind::pi: return "pi";
    case AcquisitionKind::hedge: return "hedge";
  }
  return "?";
}

std::vector<std::string> ObjectiveSpec::result_names() const {
  std::vector<std::string> names;
  for (const Objective& o : several) names.push_back(o.name());
  return names;
}

std::string_view to_string(FailureLearning learning) {
  return learning == FailureLearning::learn ? "learn" : "ignore";
}

std::string_view to_string(OutputWarping warping) {
  switch (warping) {
    case OutputWarping::none: return "none";
    case OutputWarping::copula: return "copula";
    case OutputWarping::copula_below_median: return "copula_below_median";
    case OutputWarping::yeo_johnson: return "yeo_johnson";
  }
  return "?";
}

std::string_view to_string(TransferBestChoice choice) {
  return choice == TransferBestChoice::portfolio ? "portfolio" : "recent";
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

Objective JobSpec::stopping_objective() const {
  if (!early_stopping || objective.several.empty()) return objective.objective();
  return objective.several.at(early_stopping->objective);
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

std::optional<StepsOfJob> early_stopping_steps_in(std::string_view job_text) {
  try {
    const toml::table root = toml::parse(job_text);
    const toml::table* table = root["early_stopping"].as_table();
    if (table == nullptr) return std::nullopt;
    const EarlyStoppingSpec defaults;
    StepsOfJob steps{defaults.max_step, defaults.step_name};
    if (const auto n = (*table)["max_step"].value<std::int64_t>(); n && *n >= 1) steps.max_step = *n;
    if (const auto name = (*table)["step_name"].value<std::string>()) steps.step_name = *name;
    return steps;
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

using job_file::Reader;

// Every table in order: later ones need what earlier ones said ([space] the objective's steps,
// [[tasks]] its command and [schedule] watch). Every problem of the whole file is collected.
JobSpec read_job(Reader& r) {
  toml::table root;
  try {
    root = toml::parse(r.text(), r.path().string());
  } catch (const toml::parse_error& e) {
    const auto& begin = e.source().begin;
    throw InputError(r.path().string() + ":" + std::to_string(begin.line) + ":" + std::to_string(begin.column) +
                     ": syntax error: " + std::string(e.description()));
  }
  JobSpec job;
  std::error_code ec;
  job.job_file = fs::absolute(r.path(), ec);
  job.source_text = std::string(r.text());
  r.check_keys(root, "", {"name", "seed", "checkpoint_every_s", "grace_s", "objective", "policy", "workers", "schedule",
                          "early_stopping", "space", "tasks", "constraints"});
  job_file::read_top(r, root, job);
  if (const toml::table* t = r.require_table(root, "objective", "")) job_file::read_objective(r, *t, job);
  job_file::read_constraints(r, root, job);
  if (const toml::table* t = r.optional_table(root, "policy", "")) job_file::read_policy(r, *t, job);
  if (const toml::table* t = r.optional_table(root, "workers", "")) job_file::read_workers(r, *t, job);
  if (job.workers.local_slots_auto) {
    job.workers.local_slots = std::max(usable_cores() / job.workers.threads_per_trial.value_or(1), 1);
  }
  if (const toml::table* t = r.optional_table(root, "schedule", "")) job_file::read_schedule(r, *t, job);
  if (const toml::table* t = r.optional_table(root, "early_stopping", "")) job_file::read_early_stopping(r, *t, job);
  if (const toml::table* t = r.require_table(root, "space", "")) job_file::read_space(r, *t, job);
  job_file::read_tasks(r, root, job);
  job_file::read_table(r, root, job);
  job_file::check_simulation(r, root, job);
  return job;
}

}  // namespace

std::optional<std::string> interpreter_problem(const std::string& program) {
  const std::optional<fs::path> file =
      program.find('/') == std::string::npos ? job_file::find_on_path(program) : std::optional<fs::path>(program);
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
  if (!job_file::is_executable_file(interpreter)) return "its #! interpreter " + interpreter + " is not an executable file";
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
    if (!job_file::find_on_path(name)) return "its #! line runs " + name + " through env, and no " + name + " is on PATH";
  }
  return std::nullopt;
}

std::string_view to_string(StoppingRule rule) { return traits_of(rule).name; }

std::string_view to_string(StoppingMode mode) {
  switch (mode) {
    case StoppingMode::stop: return "stop";
    case StoppingMode::promotion: return "promotion";
  }
  return "?";
}

std::string_view to_string(CurveModel model) {
  switch (model) {
    case CurveModel::last: return "last";
    case CurveModel::rungs: return "rungs";
    case CurveModel::highest_rung: return "highest_rung";
    case CurveModel::forecast: return "forecast";
  }
  return "?";
}

std::vector<std::int64_t> EarlyStoppingSpec::model_steps() const {
  std::vector<std::int64_t> steps = rungs(0);
  steps.push_back(max_step);
  return steps;
}

std::int64_t EarlyStoppingSpec::target_step(int bracket, std::int64_t resume) const {
  for (const std::int64_t rung : rungs(bracket)) {
    if (rung > resume) return rung;
  }
  return max_step;
}

std::vector<std::int64_t> EarlyStoppingSpec::rungs(int bracket) const {
  std::vector<std::int64_t> steps;
  std::int64_t step = min_step;
  for (int b = 0; b < bracket && step < max_step; ++b) step *= eta;
  for (; step < max_step; step *= eta) steps.push_back(step);
  return steps;
}

std::string checkpoint_every_problem(double seconds) {
  if (seconds >= kMinCheckpointEvery_s && seconds <= kMaxSeconds) return {};
  std::ostringstream got;
  got << seconds;
  return "must be a number of seconds between 0.1 and 1e9 (got " + got.str() + ")";
}

JobSpec parse_job(std::string_view text, const fs::path& path) {
  Reader reader(path, text);
  JobSpec job = read_job(reader);
  if (!reader.errors().empty()) {
    std::string message;
    for (const std::string& e : reader.errors()) message += (message.empty() ? "" : "\n") + e;
    throw InputError(message);
  }
  return job;
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
