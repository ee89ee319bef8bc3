#pragma once
// CheckpointFolders (private to master/): in promotion mode each trial keeps its
// LBO_CHECKPOINT_DIR (<trial folder>/checkpoint) so that a paused trial can resume. Once its task
// is done no trial of it runs again, and the folders go but the task's best trial's (the model
// a user may want), unless [early_stopping] keep_checkpoints says "all" or "none": six paused
// trials of 300 MB each left 1.8 GB when every one stayed. What goes is said in the log.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "lbo/jobs/job_spec.hpp"
#include "lbo/orchestrator/run_directory.hpp"
#include "lbo/orchestrator/run_state.hpp"

namespace lbo::orchestrator {

class CheckpointFolders {
 public:
  /// `job` and `run` must outlive this. Does nothing but in promotion mode.
  CheckpointFolders(const jobs::JobSpec& job, const RunPaths& run, std::function<void(const std::string&)> log);

  /// Removes the checkpoint folders of every done task not tidied since its last trial ended
  /// (after each commit, and on resume for what a killed master left). A folder that cannot be
  /// removed is said, and the run goes on.
  void tidy(const RunState& state);

 private:
  void tidy_task(const RunState& state, int task);

  const RunPaths& run_;
  std::function<void(const std::string&)> log_;
  bool promoting_ = false;
  jobs::EarlyStoppingSpec::KeepCheckpoints keep_ = jobs::EarlyStoppingSpec::KeepCheckpoints::best;
  std::vector<int> tidied_at_;  // per task: its finished trials when last tidied (-1: never)
};

}  // namespace lbo::orchestrator
