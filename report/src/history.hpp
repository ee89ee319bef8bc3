#pragma once
// A run's history from its journal's first record: every allocation and every attempt
// (private to report/). The recovered state starts from the newest checkpoint, which keeps no
// attempt history.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace lbo::report {

// One attempt of a trial, as the journal tells it: started, and (unless it still runs or a
// stop cut it off) ended.
struct Attempt {
  std::int64_t trial = 0;
  int attempt = 1;
  std::string worker;
  double start = 0, end = 0;  // 0: unknown
  std::string status;         // empty until it ends
  std::string cores, gpus;    // what its slot gave it (known once it ends)
  bool final = false;
  std::size_t allocation = 0;  // of its start; kNoAllocation before the first RunStarted
};

inline constexpr std::size_t kNoAllocation = static_cast<std::size_t>(-1);

// One invocation of the run (a RunStarted record and what followed it).
struct Allocation {
  double started = 0;
  double last_seen = 0;  // the newest record written in it
  int slots = 0;
  std::string lbo_version;
};

/// A trial's newest intermediate report that carried metrics: what a stopped trial measured
/// (its final result has none), for the report's metrics figure.
struct ReportedMetrics {
  std::int64_t step = 0;
  std::string metrics_json;
};

struct History {
  std::vector<Allocation> allocations;
  std::vector<Attempt> attempts;
  double last_activity = 0;
  std::map<std::int64_t, ReportedMetrics> reported_metrics;  ///< by trial
};

/// Reads the whole journal. Throws CorruptStateError as read_journal does.
History read_history(const std::filesystem::path& journal_file);

}  // namespace lbo::report
