#pragma once
// An attempt's trial folder and environment (private to workers/).

#include <optional>
#include <string>
#include <vector>

#include "lbo/workers/runner.hpp"
#include "unique_fd.hpp"

namespace lbo::workers::detail {

/// lbo could not make the trial's folder or files ready: its own error, never the objective's.
struct FolderFailure {
  std::string reason;
  int error_number = 0;
  std::string path;  ///< the file or folder of the trial the reason is about
};

/// Makes `order`'s folder ready for its attempt: created, an earlier attempt's leftovers killed
/// and its output kept as stdout.<k> (stderr, result.json likewise), params.json written with
/// every byte checked, and stdout and stderr opened (into `stdout_file`, `stderr_file`). A
/// failure (a full disk, a read-only remount, a quota) is returned, and the objective must not
/// be started.
std::optional<FolderFailure> prepare_trial_folder(const WorkOrder& order, UniqueFd& stdout_file, UniqueFd& stderr_file);

/// The objective's whole environment: lbo's own, minus a launcher's variables, plus the
/// order's and the protocol's (LBO_PARAMS_FILE, LBO_RESULT_FILE, LBO_WORKDIR, LBO_ATTEMPT,
/// LBO_ATTEMPT_ID, LBO_RANK, LBO_SLOT, LBO_THREADS, LBO_GPUS) and the slot's thread and GPU
/// variables.
std::vector<std::string> attempt_environment(const WorkOrder& order, const RunnerOptions& options,
                                             const std::string& attempt_id);

}  // namespace lbo::workers::detail
