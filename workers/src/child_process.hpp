#pragma once
// posix_spawn of an objective in its own process group (private to workers/).

#include <sys/types.h>

#include <string>
#include <vector>

namespace lbo::workers::detail {

struct SpawnRequest {
  std::vector<std::string> argv;
  std::vector<std::string> env;  ///< "NAME=value" entries, the child's whole environment
  std::string workdir;
  int stdout_fd = -1;  ///< becomes the child's fd 1
  int stderr_fd = -1;  ///< becomes the child's fd 2
  std::vector<int> cores;  ///< the CPUs the child (and all it starts) may run on; empty: ours
};

struct SpawnResult {
  pid_t pid = -1;  ///< also the child's process group id; -1 on failure
  std::string error;
  int error_number = 0;  ///< the failure's errno
  /// The failure is this host's (out of processes, memory or descriptors), not the command's:
  /// a missing or unusable program is the objective's failure, a process limit is lbo's.
  bool host_limit() const;
};

/// Starts the child with stdin from /dev/null, default signal dispositions, an empty signal
/// mask, every other descriptor closed, in a new process group (so that a timeout can kill its
/// whole tree with killpg). posix_spawn, not fork: forking an MPI process is unsafe with RDMA
/// interconnects, and posix_spawn reports exec failures to the caller.
SpawnResult spawn_child(const SpawnRequest& request);

/// A pidfd for `pid` (readable once the process exits), or -1 where the kernel lacks pidfd_open.
int open_pidfd(pid_t pid);

/// "SIGSEGV" etc.
std::string signal_name(int signal_number);

/// The current environment minus variables that would tie the child to this MPI job
/// (so an objective may itself call mpirun) and minus `overridden` names.
std::vector<std::string> inherited_environment(const std::vector<std::string>& overridden);

}  // namespace lbo::workers::detail
