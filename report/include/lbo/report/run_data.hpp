#pragma once
// What a run's report shows, read from its run directory alone (job.toml, journal.lbo, the
// newest checkpoint, tasks.csv, hedge.csv), so `lbo report` works on a copy of a run
// directory. The document's shape is described in report/README.md.

#include <filesystem>
#include <optional>

#include <nlohmann/json_fwd.hpp>

namespace lbo::report {

/// The run in `dir` as one JSON document (report/README.md, "The data"). Read-only; safe while the
/// run is active. `ended_with`: the exit status the run ends with, when its own master writes
/// the report as it ends (it still holds the lock, so the run would read as running).
/// Throws lbo::InputError when `dir` is not a run directory, and CorruptStateError when
/// neither its checkpoints nor its journal can be read.
nlohmann::json run_data(const std::filesystem::path& dir, std::optional<int> ended_with = std::nullopt);

}  // namespace lbo::report
