#include "lbo/orchestrator/results_csv.hpp"

#include <cerrno>
#include <charconv>
#include <cstring>

#include "lbo/jobs/error.hpp"
#include "lbo/orchestrator/files.hpp"

namespace lbo::orchestrator {

namespace {

std::FILE* open_or_throw(const std::filesystem::path& path, const char* mode) {
  std::FILE* f = std::fopen(path.c_str(), mode);
  if (f == nullptr) throw IoError(path.string() + ": cannot write: " + std::strerror(errno), errno);
  return f;
}

std::string shortest(double v) {
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v);
  return std::string(buffer, end);
}

}  // namespace

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string ResultsCsv::header(const jobs::JobSpec& job) {
  std::string line = "trial,task,status,objective,attempts,duration_s,worker";
  for (int s = 1; s <= job.objective.stepwise; ++s) line += ",step_" + std::to_string(s);
  for (const jobs::ParamSpec& p : job.space.params()) line += "," + csv_field(p.name);
  return line + ",proposed_by,proposal_note\n";
}

std::string ResultsCsv::row(const jobs::JobSpec& job, const Trial& trial) {
  const workers::Outcome& o = trial.outcome;
  char duration[32];
  std::snprintf(duration, sizeof duration, "%.3f", o.duration_s);
  std::string line = std::to_string(trial.id) + "," + csv_field(job.tasks[trial.task].name) + "," +
                     std::string(workers::to_string(o.status)) + "," +
                     (o.status == workers::TrialStatus::ok ? shortest(o.objective) : "") + "," +
                     std::to_string(trial.attempts) + "," + duration + "," + csv_field(trial.worker);
  for (int s = 0; s < job.objective.stepwise; ++s) {
    line += ",";
    if (o.status == workers::TrialStatus::ok && s < static_cast<int>(o.steps.size())) line += shortest(o.steps[static_cast<std::size_t>(s)]);
  }
  for (int p = 0; p < job.space.size(); ++p) {
    line += ",";
    if (const auto& v = trial.config.values[p]) line += csv_field(job.space.format_value(p, *v));
  }
  return line + "," + std::string(to_string(trial.proposed_by)) + "," + csv_field(trial.proposal_note) + "\n";
}

ResultsCsv::ResultsCsv(std::filesystem::path path, const jobs::JobSpec& job)
    : path_(std::move(path)), job_(job), file_(open_or_throw(path_, "w")) {
  const std::string h = header(job);
  std::fputs(h.c_str(), file_);
  flush();
}

ResultsCsv::~ResultsCsv() {
  if (file_ != nullptr) std::fclose(file_);
}

void ResultsCsv::append(const Trial& trial) {
  const std::string line = row(job_, trial);
  std::fputs(line.c_str(), file_);
}

void ResultsCsv::flush() {
  if (std::fflush(file_) != 0) throw IoError(path_.string() + ": cannot write: " + std::strerror(errno), errno);
}

void ResultsCsv::rewrite(const RunState& state) {
  std::string text = header(job_);
  for (const Trial& t : state.trials()) {
    if (t.finished && !t.lost()) text += row(job_, t);
  }
  write_file_atomically(path_, text, Durability::cached);
  // The rename replaced the file: append to the new one (the old handle keeps the old one).
  std::FILE* appended = open_or_throw(path_, "a");
  std::fclose(file_);
  file_ = appended;
}

}  // namespace lbo::orchestrator
