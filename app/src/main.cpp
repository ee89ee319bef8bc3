// lbo: rank 0 (or the only process) runs the command line; other MPI ranks are workers.

#include <signal.h>
#include <sys/resource.h>

#include <exception>
#include <iostream>
#include <optional>

#include "cli.hpp"
#include "lbo/cluster/mpi.hpp"
#include "lbo/orchestrator/stop_signals.hpp"

namespace {

// Each running trial holds about eight descriptors (two pipes, two output files, a pidfd); the
// usual soft limit of 1,024 would stop a few hundred slots. The hard limit is the machine's
// (or the batch system's) to set; lbo takes what it allows.
void raise_open_file_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return;
  limit.rlim_cur = limit.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &limit);
}

// `lbo run … | head` closes lbo's stdout early: with SIGPIPE's default action the next log line
// would kill lbo outright, with no checkpoint and its objectives left running. Ignored, a write
// fails with EPIPE instead, which the console tolerates (stdio keeps the error on the stream),
// and the run goes on to its results files. Objectives start with default dispositions
// (posix_spawnattr_setsigdefault in the runner), so their own pipes behave as usual.
void ignore_broken_pipes() { ::signal(SIGPIPE, SIG_IGN); }

}  // namespace

int main(int argc, char** argv) {
  // Before anything that takes time (MPI's start, parsing, recovery): a stop signal in those
  // first milliseconds is acted on by the master, or by a worker rank's own handler (which
  // has nothing to cancel yet), never by the default action.
  lbo::orchestrator::hold_stop_signals();
  raise_open_file_limit();
  ignore_broken_pipes();
  std::optional<lbo::cluster::MpiSession> mpi;
  try {
    // Without a launcher MPI is never initialised: one machine needs no MPI runtime at all.
    if (lbo::cluster::launched_by_mpi()) mpi.emplace(argc, argv);
    if (mpi && mpi->rank() > 0) return lbo::cluster::run_mpi_worker(*mpi);
  } catch (const std::exception& e) {
    std::cerr << "lbo: " << e.what() << "\n";
    return 1;
  }
  const int status = lbo::orchestrator::run_cli(argc, argv, mpi ? &*mpi : nullptr);
  if (mpi && mpi->size() > 1) lbo::cluster::dismiss_mpi_workers(*mpi);
  return status;
}
