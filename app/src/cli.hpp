#pragma once
// The `lbo` command line (CLI11): run, status, report, add-task, validate.

namespace lbo::cluster {
class MpiSession;
}

namespace lbo::orchestrator {

/// The master's side of `lbo`: parses the command line and runs the command. `mpi` is the
/// session when an MPI launcher started lbo (rank 0 here), else null. Returns the exit status.
int run_cli(int argc, char** argv, cluster::MpiSession* mpi);

}  // namespace lbo::orchestrator
