// lbo: rank 0 (or the only process) runs the command line; other MPI ranks are workers.

#include <exception>
#include <iostream>
#include <optional>

#include "cli.hpp"
#include "lbo/cluster/mpi.hpp"

int main(int argc, char** argv) {
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
