#pragma once
// `lbo status RUN_DIR`: what a run directory holds, read without disturbing a run in progress.

#include <filesystem>
#include <string>

#include "lbo/orchestrator/run_directory.hpp"

namespace lbo::orchestrator {

/// A report for people: whether a run holds the folder, the last checkpoint, per task done/budget,
/// ok, failed, running and best, and failures by reason. Throws CorruptStateError when nothing
/// can be recovered, InputError when `run_dir` is not a run directory. Where the folder's lock
/// cannot tell (a filesystem without file locks, a run with --no-lock), the state is "unknown".
/// `locking`: how the lock is probed (tests).
std::string status_report(const std::filesystem::path& run_dir, const LockOptions& locking = {});

}  // namespace lbo::orchestrator
