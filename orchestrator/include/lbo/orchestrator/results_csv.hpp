#pragma once
// results.csv: one row per finished trial, kept current while the run goes on.
// Columns: trial,task,status,objective,attempts,duration_s,worker, step_1..step_T for a
// stepwise objective, then one per parameter (empty when inactive), then proposed_by and
// proposal_note (how the configuration was chosen; why, for a random fallback). RFC 4180
// quoting.

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "lbo/orchestrator/run_state.hpp"

namespace lbo::orchestrator {

class ResultsCsv {
 public:
  /// Creates (truncates) `path` and writes the header for the job's space. `job` must outlive
  /// this (its tasks may grow). Every failure is an IoError naming the file.
  ResultsCsv(std::filesystem::path path, const jobs::JobSpec& job);
  ~ResultsCsv();
  ResultsCsv(const ResultsCsv&) = delete;
  ResultsCsv& operator=(const ResultsCsv&) = delete;

  /// Appends the row of a finished trial (buffered until flush()).
  void append(const Trial& trial);
  void flush();
  /// Rewrites the whole file, one row per finished trial in id order (atomic rename).
  void rewrite(const RunState& state);

  static std::string header(const jobs::JobSpec& job);
  static std::string row(const jobs::JobSpec& job, const Trial& trial);

 private:
  std::filesystem::path path_;
  const jobs::JobSpec& job_;
  std::FILE* file_ = nullptr;
};

/// A CSV field, quoted when it holds a comma, quote or line break.
std::string csv_field(std::string_view text);


}  // namespace lbo::orchestrator
