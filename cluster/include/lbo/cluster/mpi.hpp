#pragma once
// MPI: rank 0 is the master, ranks 1..N-1 run attempts. Only cluster/ includes mpi.h; this
// header keeps it out of everyone else's way.

#include <cstddef>
#include <functional>
#include <memory>
#include <set>
#include <string>

#include "lbo/cluster/transport.hpp"
#include "lbo/workers/resources.hpp"

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
  /// Ranks taken for lost (silent past rank_timeout_s): never waited for again. With any lost,
  /// MPI_Finalize is skipped: it would wait for them.
  const std::set<int>& lost_ranks() const { return lost_; }
  void mark_lost(int rank) { lost_.insert(rank); }
  /// How long a rank may be silent ([workers] rank_timeout_s), for the transport, the worker
  /// loop and the release of the workers.
  double rank_timeout_s() const { return rank_timeout_s_; }
  void set_rank_timeout_s(double seconds) { rank_timeout_s_ = seconds; }

  /// This rank's part of its node, among the worker ranks (not rank 0) on the same node: of
  /// those with the same CPU affinity mask (an unbound or socket-bound rank shares its cores
  /// with such peers), of those that see the same GPUs in their environment, and of all.
  workers::Share core_share() const { return core_share_; }
  workers::Share gpu_share() const { return gpu_share_; }
  workers::Share node_share() const { return node_share_; }

 private:
  void find_node_shares();

  int rank_ = 0;
  int size_ = 1;
  bool workers_released_ = false;
  std::set<int> lost_;
  double rank_timeout_s_ = 120;
  workers::Share core_share_, gpu_share_, node_share_;
};

/// What every worker rank learns from the master before its first order.
struct WorkerSetup {
  /// The job's [workers] keys: each rank plans its own slots from them, its cores and GPUs.
  workers::ResourceRequest resources;
  std::size_t output_limit_bytes = 10u << 20;
  /// [workers] rank_timeout_s: the master takes a worker rank it has not heard from for this
  /// long for lost, and a worker rank exits when it has not heard from the master for ten times
  /// this long (a --sync refit runs on the master's thread).
  /// Each side sends a heartbeat every tenth of it.
  double rank_timeout_s = 120;
};

/// The master's view of ranks 1..size-1: sends each its setup and waits for the slots it
/// planned (a rank that has not answered within rank_timeout_s is taken for lost). Polls MPI on
/// `io` (rank 0's main thread, as MPI_THREAD_FUNNELED requires). Throws std::runtime_error when
/// no rank has a slot (e.g. GPUs asked for and none seen). A rank silent for rank_timeout_s is
/// lost: its attempts complete as `cancelled` (they run again elsewhere, without using a retry),
/// its slots are gone, and `log` says so.
std::unique_ptr<Transport> make_mpi_transport(boost::asio::io_context& io, MpiSession& session,
                                              Transport::CompletionHandler on_completion,
                                              WorkerSetup setup,
                                              std::function<void(const std::string&)> log = {});

/// Tells every worker rank to exit, unless that has happened already (for a master that ends
/// without having made a transport, e.g. on a bad job file).
void dismiss_mpi_workers(MpiSession& session);

/// The life of a worker rank: wait for setup, run orders on a LocalPool until told to stop
/// (or SIGTERM/SIGINT). Returns the process exit status.
int run_mpi_worker(MpiSession& session);

}  // namespace lbo::cluster
