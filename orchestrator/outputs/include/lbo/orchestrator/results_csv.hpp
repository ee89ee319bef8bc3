#pragma once
// results.csv: one row per finished trial, kept current while the run goes on.
// Columns: trial,task,status,objective,attempts,duration_s,worker, step_1..step_T for a
// stepwise objective, then one per parameter (empty when inactive), then proposed_by and
// proposal_note (how the configuration was chosen; why, for a random fallback), then started
// and finished (the last attempt's, ISO-8601 UTC with milliseconds), rank and slot (where it
// ran; slot empty when unknown), reason (why it is not ok; empty when ok), cores and gpus (the
// CPUs its slot was pinned to, the devices it was given; empty when none), last_step (the last
// step its final attempt reported, Trial::steps_run: a stopped trial may have reported past the
// step it was judged at before the stop reached it, and its reason names that step; empty
// without intermediate reports), then metric:<name> for every key of the objectives' "metrics" objects seen so far, in name order
// (a new name rewrites the file with the new column). RFC 4180 quoting.

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "lbo/orchestrator/run_state.hpp"

namespace lbo::orchestrator {

class ResultsCsv {
 public:
  /// Writes `path` for the job's space, but not before the first rewrite() or append() (which
  /// rewrites): a resumed run's file stays whole until the journal's trials replace it in one
  /// rename, whenever the master is killed. Throws here already when `path` cannot be written
  /// (a symbolic link, no permission). `job` must outlive this (its tasks may grow). Every
  /// failure is an IoError naming the file.
  ResultsCsv(std::filesystem::path path, const jobs::JobSpec& job);
  ~ResultsCsv();
  ResultsCsv(const ResultsCsv&) = delete;
  ResultsCsv& operator=(const ResultsCsv&) = delete;

  /// Appends the rows of the finished trials of one commit (buffered until flush()), all of
  /// them already in `state`; rewrites the file instead when their metrics bring a new column,
  /// nothing was written yet (the rewrite holds them: appending them too would write them
  /// twice), or, with several objectives, a written row left its task's Pareto set.
  void append(const RunState& state, const std::vector<const Trial*>& trials);
  void append(const RunState& state, const Trial& trial) { append(state, std::vector<const Trial*>{&trial}); }
  void flush();
  /// Rewrites the whole file, one row per finished trial in id order (atomic rename).
  void rewrite(const RunState& state);

  using MetricNames = std::set<std::string>;
  static std::string header(const jobs::JobSpec& job, const MetricNames& metrics = {});
  /// `trial`'s row; its task's name as `state` records it.
  static std::string row(const jobs::JobSpec& job, const RunState& state, const Trial& trial,
                         const MetricNames& metrics = {});

 private:
  std::filesystem::path path_;
  const jobs::JobSpec& job_;
  std::FILE* file_ = nullptr;
  MetricNames metrics_;
  /// With several objectives: each task's Pareto set as the file says it.
  std::vector<std::vector<std::int64_t>> pareto_written_;

  // Whether a row written says a trial is in its task's Pareto set that is no longer.
  bool pareto_shrank(const RunState& state) const;
  void note_pareto(const RunState& state);
};

/// "2026-11-24T07:01:02.345Z"; empty for 0 (unknown).
std::string iso8601_utc(double unix_time);

/// `path` opened for appending, with `header` written first when the file is new or empty (the
/// report files kept across resumes: hedge.csv, reports.csv). Throws IoError naming the file.
std::FILE* open_for_appending(const std::filesystem::path& path, const char* header);

/// A CSV field, quoted when it holds a comma, quote or line break.
std::string csv_field(std::string_view text);


}  // namespace lbo::orchestrator
