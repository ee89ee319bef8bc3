#include "lbo/orchestrator/results_csv.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>

#include <nlohmann/json.hpp>

#include "lbo/cluster/transport.hpp"

#include "lbo/jobs/error.hpp"
#include "lbo/orchestrator/files.hpp"

namespace lbo::orchestrator {

namespace {

// fopen(path, mode) for "w" or "a", but never through a symbolic link (O_NOFOLLOW): a link
// planted in the run directory would have lbo write wherever it points. nullptr and errno set.
std::FILE* open_no_link(const std::filesystem::path& path, const char* mode) {
  const bool append = mode[0] == 'a';
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | (append ? O_APPEND : O_TRUNC), 0644);
  if (fd < 0) return nullptr;
  std::FILE* f = ::fdopen(fd, mode);
  if (f == nullptr) {
    const int error_number = errno;
    ::close(fd);
    errno = error_number;
  }
  return f;
}

std::FILE* open_or_throw(const std::filesystem::path& path, const char* mode) {
  std::FILE* f = open_no_link(path, mode);
  if (f == nullptr) throw IoError(path.string() + ": cannot write: " + system_reason(errno), errno);
  return f;
}

std::string shortest(double v) {
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v);
  return std::string(buffer, end);
}

// The trial's metrics object; a damaged one (never written by lbo's own parser) reads as empty.
nlohmann::json metrics_of(const Trial& trial) {
  nlohmann::json metrics = nlohmann::json::parse(trial.outcome.metrics_json, nullptr, false);
  return metrics.is_object() ? metrics : nlohmann::json::object();
}

std::string metric_field(const nlohmann::json& value) {
  if (value.is_number()) return shortest(value.get<double>());
  if (value.is_string()) return csv_field(value.get<std::string>());
  if (value.is_null()) return "";
  return csv_field(value.dump());
}

// Whether the trial's metrics name a column `names` lacks (and adds them).
bool add_metric_names(const Trial& trial, ResultsCsv::MetricNames& names) {
  bool added = false;
  const nlohmann::json metrics = metrics_of(trial);
  for (const auto& item : metrics.items()) added |= names.insert(item.key()).second;
  return added;
}

}  // namespace

std::string iso8601_utc(double unix_time) {
  if (!(unix_time > 0) || !std::isfinite(unix_time)) return "";
  const double whole = std::floor(unix_time);
  const std::time_t seconds = static_cast<std::time_t>(whole);
  int millis = static_cast<int>(std::lround((unix_time - whole) * 1000));
  std::time_t shown = seconds;
  if (millis == 1000) millis = 0, ++shown;
  std::tm utc{};
  gmtime_r(&shown, &utc);
  char text[96];
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday,
                utc.tm_hour, utc.tm_min, utc.tm_sec, millis);
  return text;
}

std::FILE* open_for_appending(const std::filesystem::path& path, const char* header) {
  std::error_code ec;
  const bool fresh = !std::filesystem::exists(path, ec) || std::filesystem::file_size(path, ec) == 0;
  std::FILE* file = open_no_link(path, "a");
  if (file == nullptr || (fresh && std::fputs(header, file) < 0)) {
    const int error_number = errno;
    if (file != nullptr) std::fclose(file);
    throw IoError(path.string() + ": cannot write: " + system_reason(error_number), error_number);
  }
  return file;
}

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string ResultsCsv::header(const jobs::JobSpec& job, const MetricNames& metrics) {
  std::string line = "trial,task,status,objective,attempts,duration_s,worker";
  for (int s = 1; s <= job.objective.stepwise; ++s) line += ",step_" + std::to_string(s);
  for (const jobs::ParamSpec& p : job.space.params()) line += "," + csv_field(p.name);
  line += ",proposed_by,proposal_note,started,finished,rank,slot,reason,cores,gpus,last_step,clock";
  if (!job.constraints.empty()) line += ",infeasible";  // only with [[constraints]]: other jobs' files stay as they were
  // Only with several objectives: the others' values (`objective` holds the first's), then
  // whether the trial is in its task's Pareto set now.
  for (std::size_t i = 1; i < job.objective.several.size(); ++i) line += "," + csv_field("objective:" + job.objective.several[i].name());
  if (!job.objective.several.empty()) line += ",pareto";
  for (const std::string& name : metrics) line += "," + csv_field("metric:" + name);
  return line + "\n";
}

std::string ResultsCsv::row(const jobs::JobSpec& job, const RunState& state, const Trial& trial, const MetricNames& metrics) {
  const workers::Outcome& o = trial.outcome;
  // A stopped trial's value is its last report's: of [early_stopping] objective, in its column.
  const bool stopped = o.status == workers::TrialStatus::stopped;
  const std::size_t reported = stopped && job.early_stopping && !job.objective.several.empty() ? job.early_stopping->objective : 0;
  char duration[32];
  std::snprintf(duration, sizeof duration, "%.3f", o.duration_s);
  std::string line = std::to_string(trial.id) + "," + csv_field(state.job().tasks[static_cast<std::size_t>(trial.task)].name) + "," +
                     std::string(workers::to_string(o.status)) + "," +
                     (o.status == workers::TrialStatus::ok || (stopped && reported == 0) ? shortest(o.objective) : "") +
                     "," +
                     std::to_string(trial.attempts) + "," + duration + "," + csv_field(trial.worker);
  for (int s = 0; s < job.objective.stepwise; ++s) {
    line += ",";
    if (o.status == workers::TrialStatus::ok && s < static_cast<int>(o.steps.size())) line += shortest(o.steps[static_cast<std::size_t>(s)]);
  }
  for (int p = 0; p < job.space.size(); ++p) {
    line += ",";
    if (const auto& v = trial.config.values[p]) line += csv_field(job.space.format_value(p, *v));
  }
  line += "," + std::string(to_string(trial.proposed_by)) + "," + csv_field(trial.proposal_note);
  line += "," + iso8601_utc(trial.started_unix) + "," + iso8601_utc(trial.finished_unix) + ",";
  if (const auto where = cluster::parse_worker_slot(trial.worker)) {
    line += std::to_string(where->rank) + "," + (where->slot >= 0 ? std::to_string(where->slot) : std::string());
  } else {
    line += ",";
  }
  line += "," + (o.status == workers::TrialStatus::ok ? std::string() : csv_field(o.reason));
  const std::int64_t steps = trial.steps_run();
  line += "," + csv_field(o.cores) + "," + csv_field(o.gpus) + "," + (steps > 0 ? std::to_string(steps) : "");
  line += state.job().virtual_clock ? ",virtual" : ",real";  // what started and finished are
  if (!job.constraints.empty()) line += o.status == workers::TrialStatus::ok ? (trial.infeasible ? ",1" : ",0") : ",";
  if (!job.objective.several.empty()) {
    const bool ok = o.status == workers::TrialStatus::ok && o.values.size() == job.objective.several.size();
    for (std::size_t i = 1; i < job.objective.several.size(); ++i) {
      line += "," + (ok ? shortest(o.values[i]) : stopped && reported == i ? shortest(o.objective) : std::string());
    }
    line += o.status == workers::TrialStatus::ok ? (state.on_pareto_front(trial) ? ",1" : ",0") : ",";
  }
  if (!metrics.empty()) {
    const nlohmann::json values = metrics_of(trial);
    for (const std::string& name : metrics) {
      const auto value = values.find(name);
      line += "," + (value == values.end() ? std::string() : metric_field(*value));
    }
  }
  return line + "\n";
}

ResultsCsv::ResultsCsv(std::filesystem::path path, const jobs::JobSpec& job) : path_(std::move(path)), job_(job) {
  // Whether the file can be written, before anything runs, but leaving what it holds.
  std::fclose(open_or_throw(path_, "a"));
}

ResultsCsv::~ResultsCsv() {
  if (file_ != nullptr) std::fclose(file_);
}

void ResultsCsv::append(const RunState& state, const std::vector<const Trial*>& trials) {
  bool new_column = false;
  for (const Trial* t : trials) new_column |= add_metric_names(*t, metrics_);
  // With several objectives a result that dominates earlier members takes them off the Pareto
  // set: their rows' `pareto` changes, so the file is written whole. A result on no front, or
  // one that only joins it, leaves every written row true.
  if (new_column || file_ == nullptr || pareto_shrank(state)) {
    rewrite(state);
    return;
  }
  for (const Trial* t : trials) {
    const std::string line = row(job_, state, *t, metrics_);
    std::fputs(line.c_str(), file_);
  }
  note_pareto(state);
}

bool ResultsCsv::pareto_shrank(const RunState& state) const {
  if (job_.objective.several.empty()) return false;
  for (std::size_t task = 0; task < pareto_written_.size(); ++task) {
    const std::vector<std::int64_t>& now = state.tasks()[task].pareto;  // ascending, as written
    if (!std::includes(now.begin(), now.end(), pareto_written_[task].begin(), pareto_written_[task].end())) return true;
  }
  return false;
}

void ResultsCsv::note_pareto(const RunState& state) {
  if (job_.objective.several.empty()) return;
  pareto_written_.resize(state.tasks().size());
  for (std::size_t task = 0; task < state.tasks().size(); ++task) pareto_written_[task] = state.tasks()[task].pareto;
}

void ResultsCsv::flush() {
  if (file_ != nullptr && std::fflush(file_) != 0) throw IoError(path_.string() + ": cannot write: " + std::strerror(errno), errno);
}

void ResultsCsv::rewrite(const RunState& state) {
  for (const Trial& t : state.trials()) {
    if (t.finished && !t.lost()) add_metric_names(t, metrics_);
  }
  std::string text = header(job_, metrics_);
  for (const Trial& t : state.trials()) {
    if (t.finished && !t.lost()) text += row(job_, state, t, metrics_);
  }
  // The rename would replace a link planted at the file, not write through it; still a run
  // directory with a link in it is not lbo's own: the run stops and says so, as for every file.
  std::error_code ec;
  if (std::filesystem::is_symlink(path_, ec)) {
    throw IoError(path_.string() + ": cannot write: " + system_reason(ELOOP), ELOOP);
  }
  write_file_atomically(path_, text, Durability::cached);
  note_pareto(state);
  // The rename replaced the file: append to the new one (the old handle keeps the old one).
  std::FILE* appended = open_or_throw(path_, "a");
  if (file_ != nullptr) std::fclose(file_);
  file_ = appended;
}

}  // namespace lbo::orchestrator
