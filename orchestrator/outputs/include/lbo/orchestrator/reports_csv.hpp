#pragma once
// reports.csv: every intermediate report the master accepted, one row each (long format):
// trial,attempt,task,step,value,elapsed_s,time,metrics. elapsed_s is since the attempt started
// (the worker's clock), time when the master journaled it (ISO-8601 UTC), metrics the report's
// "metrics" object as JSON text. Appended as reports are journaled; rebuilt from the journal
// when a run resumes (rows an lbo killed outright had not written yet come back).

#include <cstdio>
#include <filesystem>

#include "lbo/orchestrator/journal.hpp"
#include "lbo/orchestrator/run_state.hpp"

namespace lbo::orchestrator {

class ReportsCsv {
 public:
  /// Opens `path` for appending when the first report comes (no file for a run without any).
  explicit ReportsCsv(std::filesystem::path path) : path_(std::move(path)) {}
  ~ReportsCsv();
  ReportsCsv(const ReportsCsv&) = delete;
  ReportsCsv& operator=(const ReportsCsv&) = delete;

  /// Appends the record's rows and flushes them. Throws IoError naming the file.
  void append(const RunState& state, const TrialsReported& record);
  /// Rewrites the file from every TrialsReported record of `journal` (atomic rename); no file
  /// when it holds none. Throws IoError, or CorruptStateError for an unreadable journal.
  void rewrite(const RunState& state, const std::filesystem::path& journal);

  static constexpr const char* kHeader = "trial,attempt,task,step,value,elapsed_s,time,metrics\n";

 private:
  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
};

}  // namespace lbo::orchestrator
