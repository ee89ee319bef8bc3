#pragma once
// hedge.csv: every Hedge draw of the run's proposals, one row per option: trial, over
// ("acquisition": GP-Hedge's arms for task; "tasks"/"steps": Hedge across open tasks or a task's
// steps), task, option, probability, chosen (1 for the option drawn). Appended as proposals are
// handed out, kept across resumes; a report, not state (the report reads it; nothing else does).
// A proposal lost to a crash before its trial started may leave rows for a trial id that a
// later proposal takes again: readers keep the last draw of a trial.

#include <cstdio>
#include <filesystem>

#include "lbo/orchestrator/policy.hpp"

namespace lbo::orchestrator {

class HedgeCsv {
 public:
  /// Opens `path` for appending when the first draw comes (no file for a run without Hedge).
  explicit HedgeCsv(std::filesystem::path path) : path_(std::move(path)) {}
  ~HedgeCsv();
  HedgeCsv(const HedgeCsv&) = delete;
  HedgeCsv& operator=(const HedgeCsv&) = delete;

  /// Appends (buffered until flush()). Throws IoError naming the file.
  void append(const HedgeDraw& draw);
  void flush();

  static constexpr const char* kHeader = "trial,over,task,option,probability,chosen\n";

 private:
  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
};

}  // namespace lbo::orchestrator
