#pragma once
// MPI: rank 0 is the master, ranks 1..N-1 run attempts. Only cluster/ includes mpi.h; this
// header keeps it out of everyone else's way.

#include <cstddef>
#include <memory>

#include "lbo/cluster/transport.hpp"

namespace boost::asio {
class io_context;
}

namespace lbo::cluster {

/// Whether an MPI launcher (mpirun, mpiexec, srun with PMI/PMIx) started this process. Without
/// one, lbo never initialises MPI and runs on local slots.
bool launched_by_mpi();

/// MPI_Init_thread(FUNNELED) … MPI_Finalize for the process's lifetime.
class MpiSession {
 public:
  MpiSession(int& argc, char**& argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  /// Whether the worker ranks have been told to exit (by a transport's shutdown or dismissal).
  bool workers_released() const { return workers_released_; }
  void set_workers_released() { workers_released_ = true; }

 private:
  int rank_ = 0;
  int size_ = 1;
  bool workers_released_ = false;
};

/// What every worker rank learns from the master before its first order.
struct WorkerSetup {
  int slots_per_rank = 1;
  std::size_t output_limit_bytes = 10u << 20;
};

/// The master's view of ranks 1..size-1, each with setup.slots_per_rank slots. Polls MPI on
/// `io` (rank 0's main thread, as MPI_THREAD_FUNNELED requires).
std::unique_ptr<Transport> make_mpi_transport(boost::asio::io_context& io, MpiSession& session,
                                              Transport::CompletionHandler on_completion,
                                              WorkerSetup setup);

/// Tells every worker rank to exit, unless that has happened already (for a master that ends
/// without having made a transport, e.g. on a bad job file).
void dismiss_mpi_workers(MpiSession& session);

/// The life of a worker rank: wait for setup, run orders on a LocalPool until told to stop
/// (or SIGTERM/SIGINT). Returns the process exit status.
int run_mpi_worker(MpiSession& session);

}  // namespace lbo::cluster
