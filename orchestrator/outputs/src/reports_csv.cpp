#include "lbo/orchestrator/reports_csv.hpp"

#include <cerrno>
#include <cstring>
#include <string>
#include <variant>

#include "lbo/jobs/error.hpp"
#include "lbo/orchestrator/files.hpp"
#include "lbo/orchestrator/results_csv.hpp"

namespace lbo::orchestrator {

namespace {

std::string rows(const RunState& state, const TrialsReported& record) {
  std::string text;
  const std::string time = iso8601_utc(record.unix_time);
  for (const ReportedStep& r : record.reports) {
    const bool known = r.trial >= 0 && r.trial < state.next_trial_id() && !state.trial(r.trial).lost();
    const std::string task =
        known ? state.job().tasks[static_cast<std::size_t>(state.trial(r.trial).task)].name : std::string();
    char numbers[96];
    std::snprintf(numbers, sizeof numbers, "%.17g,%.3f", r.value, r.elapsed_s);
    text += std::to_string(r.trial) + "," + std::to_string(r.attempt) + "," + csv_field(task) + "," +
            std::to_string(r.step) + "," + numbers + "," + time + "," + csv_field(r.metrics_json) + "\n";
  }
  return text;
}

[[noreturn]] void fail(const std::filesystem::path& path) {
  throw IoError(path.string() + ": cannot write: " + std::strerror(errno), errno);
}

}  // namespace

ReportsCsv::~ReportsCsv() {
  if (file_ != nullptr) std::fclose(file_);
}

void ReportsCsv::append(const RunState& state, const TrialsReported& record) {
  if (file_ == nullptr) file_ = open_for_appending(path_, kHeader);
  const std::string text = rows(state, record);
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size() || std::fflush(file_) != 0) fail(path_);
}

void ReportsCsv::rewrite(const RunState& state, const std::filesystem::path& journal) {
  if (file_ != nullptr) {
    std::fclose(file_);
    file_ = nullptr;
  }
  std::string text = kHeader;
  bool any = false;
  for (const JournalRecord& record : read_journal(journal).records) {
    if (const auto* reported = std::get_if<TrialsReported>(&record)) {
      text += rows(state, *reported);
      any = true;
    }
  }
  if (any) write_file_atomically(path_, text, Durability::cached);
}

}  // namespace lbo::orchestrator
