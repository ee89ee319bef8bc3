#pragma once
// `lbo status RUN_DIR`: what a run directory holds, read without disturbing a run in progress.

#include <filesystem>
#include <string>

namespace lbo::orchestrator {

/// A report for people: whether a run holds the folder, the last checkpoint, per task done/budget,
/// ok, failed, running and best, and failures by reason. Throws CorruptStateError when nothing
/// can be recovered, InputError when `run_dir` is not a run directory.
std::string status_report(const std::filesystem::path& run_dir);

}  // namespace lbo::orchestrator
