#pragma once
// run_captured: a short helper command's answer (the deadline's question to the batch system:
// squeue, scontrol), through the workers' spawn (child_process.hpp): without a shell, in its
// own process group, stdin from /dev/null, its other descriptors closed.

#include <chrono>
#include <string>
#include <vector>

namespace lbo::workers {

struct CommandOutput {
  std::string output;  ///< its standard output and error, the first 64 KiB
  std::string error;   ///< empty when it exited with status 0 within the time given
};

/// Runs `argv` (argv[0] found on PATH) with this process's environment and captures what it
/// writes; when `timeout` passes first, its process group (whatever it started too) is killed.
CommandOutput run_captured(const std::vector<std::string>& argv, std::chrono::milliseconds timeout);

}  // namespace lbo::workers
