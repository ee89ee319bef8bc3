// The MPI transport (master side), the worker rank's loop and the MPI session.

#include <mpi.h>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include "lbo/cluster/mpi.hpp"
#include "lbo/workers/local_pool.hpp"
#include "messages.hpp"

namespace asio = boost::asio;

namespace lbo::cluster {

namespace {

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw std::runtime_error(std::string("MPI error in ") + what);
}

void send_bytes(const std::string& bytes, int destination, int tag) {
  check(MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, destination, tag, MPI_COMM_WORLD),
        "MPI_Send");
}

struct Received {
  int source = 0;
  int tag = 0;
  std::string bytes;
};

// A waiting message from `source` (MPI_ANY_SOURCE allowed), received, or nullopt. Never blocks:
// Open MPI's blocking receive spins a core, which would starve the objectives on that node.
std::optional<Received> try_receive(int source) {
  int flag = 0;
  MPI_Status status;
  check(MPI_Iprobe(source, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status), "MPI_Iprobe");
  if (flag == 0) return std::nullopt;
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  Received r{status.MPI_SOURCE, status.MPI_TAG, std::string(static_cast<std::size_t>(count), '\0')};
  check(MPI_Recv(r.bytes.data(), count, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE),
        "MPI_Recv");
  return r;
}

// Polls MPI from the io_context, since Open MPI's blocking receive would spin a core. Right
// after traffic the poll interval backs off from 50 µs to 200 µs, so trials of a few
// milliseconds still pipeline; after a second of silence it grows to 5 ms, so an idle rank
// costs almost no CPU.
class MpiPoller {
 public:
  using Handler = std::function<void(Received)>;
  MpiPoller(asio::io_context& io, int source, Handler handler)
      : timer_(io), source_(source), handler_(std::move(handler)) {}

  void start() {
    running_ = true;
    last_traffic_ = Clock::now();
    schedule(Micros(0));
  }
  void stop() {
    running_ = false;
    timer_.cancel();
  }
  /// A reply is due soon (this side just sent a message): poll at once and back off afresh.
  void expect_message() {
    last_traffic_ = Clock::now();
    if (!running_ || interval_ == Micros(0)) return;
    interval_ = Micros(0);
    schedule(interval_);
  }

 private:
  using Clock = std::chrono::steady_clock;
  using Micros = std::chrono::microseconds;

  void schedule(Micros delay) {
    // A handler that already fired cannot be cancelled: the generation tells stale ones apart.
    const std::uint64_t generation = ++generation_;
    timer_.expires_after(delay);
    timer_.async_wait([this, generation](const boost::system::error_code& ec) {
      if (ec || !running_ || generation != generation_) return;
      bool any = false;
      while (running_) {
        std::optional<Received> message = try_receive(source_);
        if (!message) break;
        any = true;
        handler_(std::move(*message));
      }
      if (!running_ || generation != generation_) return;
      const auto now = Clock::now();
      if (any) last_traffic_ = now;
      const Micros cap = now - last_traffic_ < std::chrono::seconds(1) ? Micros(200) : Micros(5000);
      interval_ = any ? Micros(0) : std::clamp(interval_ * 2, Micros(50), cap);
      schedule(interval_);
    });
  }

  asio::steady_timer timer_;
  int source_;
  Handler handler_;
  bool running_ = false;
  std::uint64_t generation_ = 0;
  Micros interval_{0};
  Clock::time_point last_traffic_;
};

// Every worker answers a shutdown with a bye after killing its attempts; results still in
// flight are received and dropped, so no message is left unmatched at MPI_Finalize.
void release_workers(int size) {
  for (int rank = 1; rank < size; ++rank) send_bytes("", rank, detail::kShutdownTag);
  int byes = 0;
  auto idle = std::chrono::microseconds(50);
  while (byes < size - 1) {
    if (std::optional<Received> r = try_receive(MPI_ANY_SOURCE)) {
      byes += r->tag == detail::kByeTag ? 1 : 0;
      idle = std::chrono::microseconds(50);
    } else {
      std::this_thread::sleep_for(idle);
      idle = std::min(idle * 2, std::chrono::microseconds(5000));
    }
  }
}

class MpiTransport final : public Transport {
 public:
  MpiTransport(asio::io_context& io, MpiSession& session, CompletionHandler on_completion, WorkerSetup setup)
      : session_(session),
        on_completion_(std::move(on_completion)),
        slots_per_rank_(setup.slots_per_rank),
        busy_(static_cast<std::size_t>(session.size()), 0),
        poller_(io, MPI_ANY_SOURCE, [this](Received r) { on_message(std::move(r)); }) {
    if (session.size() < 2) throw std::logic_error("MpiTransport needs worker ranks");
    const std::string bytes = detail::encode(setup);
    for (int rank = 1; rank < session.size(); ++rank) send_bytes(bytes, rank, detail::kSetupTag);
    poller_.start();
  }

  ~MpiTransport() override {
    try {
      shutdown();
    } catch (const std::exception& e) {
      std::cerr << "lbo: MPI shutdown failed: " << e.what() << "\n";
    }
  }

  int slot_count() const override { return (static_cast<int>(busy_.size()) - 1) * slots_per_rank_; }

  int busy_count() const override {
    int total = 0;
    for (int b : busy_) total += b;
    return total;
  }

  // The least busy rank: spreads attempts over nodes rather than filling one first.
  WorkerSlot next_slot() const override {
    if (shut_down_) throw std::logic_error("MpiTransport::next_slot after shutdown");
    int rank = 0;
    for (int r = 1; r < static_cast<int>(busy_.size()); ++r) {
      if (busy_[r] < slots_per_rank_ && (rank == 0 || busy_[r] < busy_[rank])) rank = r;
    }
    if (rank == 0) throw std::logic_error("MpiTransport: every slot is busy");
    return WorkerSlot{rank, -1};  // the worker picks the slot; the completion says which
  }

  WorkerSlot submit(workers::WorkOrder order) override {
    const int rank = next_slot().rank;
    send_bytes(detail::encode(order), rank, detail::kOrderTag);
    poller_.expect_message();
    ++busy_[rank];
    rank_of_trial_[order.trial] = rank;
    return WorkerSlot{rank, -1};  // the worker picks the slot; the completion says which
  }

  void cancel(std::int64_t trial) override {
    const auto it = rank_of_trial_.find(trial);
    if (shut_down_ || it == rank_of_trial_.end()) return;
    send_bytes(detail::encode(detail::CancelRequest{trial}), it->second, detail::kCancelTag);
  }

  void cancel_all() override {
    if (shut_down_) return;
    const std::string bytes = detail::encode(detail::CancelRequest{-1});
    for (int rank = 1; rank < static_cast<int>(busy_.size()); ++rank) {
      if (busy_[rank] > 0) send_bytes(bytes, rank, detail::kCancelTag);
    }
  }

  void shutdown() override {
    if (shut_down_) return;
    shut_down_ = true;
    poller_.stop();
    dismiss_mpi_workers(session_);
    std::fill(busy_.begin(), busy_.end(), 0);
    rank_of_trial_.clear();
  }

 private:
  void on_message(Received r) {
    if (r.tag != detail::kResultTag) return;
    auto result = detail::decode<detail::ResultMessage>(r.bytes);
    --busy_[r.source];
    rank_of_trial_.erase(result.trial);
    on_completion_(Completion{result.trial, result.attempt, WorkerSlot{r.source, result.slot},
                              std::move(result.outcome)});
  }

  MpiSession& session_;
  CompletionHandler on_completion_;
  int slots_per_rank_;
  std::vector<int> busy_;  // per rank; index 0 (the master) unused
  std::map<std::int64_t, int> rank_of_trial_;
  bool shut_down_ = false;
  MpiPoller poller_;
};

}  // namespace

bool launched_by_mpi() {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK", "PMIX_RANK",
                               "MV2_COMM_WORLD_SIZE", "MPI_LOCALNRANKS"}) {
    if (std::getenv(variable) != nullptr) return true;
  }
  return false;
}

MpiSession::MpiSession(int& argc, char**& argv) {
  int provided = 0;
  check(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiSession::~MpiSession() { MPI_Finalize(); }

std::unique_ptr<Transport> make_mpi_transport(asio::io_context& io, MpiSession& session,
                                              Transport::CompletionHandler on_completion, WorkerSetup setup) {
  return std::make_unique<MpiTransport>(io, session, std::move(on_completion), setup);
}

void dismiss_mpi_workers(MpiSession& session) {
  if (session.workers_released()) return;
  release_workers(session.size());
  session.set_workers_released();
}

namespace {

// A worker rank: orders from the master run on a LocalPool; results go back as they end.
class MpiWorker {
 public:
  explicit MpiWorker(MpiSession& session)
      : session_(session),
        poller_(io_, 0, [this](Received r) { on_message(std::move(r)); }),
        signals_(io_, SIGTERM, SIGINT, SIGUSR1) {}

  int run() {
    wait_for_signal();
    poller_.start();
    io_.run();
    return 0;
  }

 private:
  void on_message(Received r) {
    switch (r.tag) {
      case detail::kSetupTag: {
        const auto setup = detail::decode<WorkerSetup>(r.bytes);
        workers::RunnerOptions options;
        options.rank = session_.rank();
        options.output_limit_bytes = setup.output_limit_bytes;
        pool_ = std::make_unique<workers::LocalPool>(io_, setup.slots_per_rank, options);
        break;
      }
      case detail::kOrderTag: start(detail::decode<workers::WorkOrder>(r.bytes)); break;
      case detail::kCancelTag: {
        const auto request = detail::decode<detail::CancelRequest>(r.bytes);
        if (pool_ && request.trial < 0) pool_->cancel_all();
        if (pool_ && request.trial >= 0) pool_->cancel(request.trial);
        break;
      }
      case detail::kShutdownTag:
        pool_.reset();  // kills and reaps running attempts; their handlers never run
        poller_.stop();
        signals_.cancel();
        send_bytes("", 0, detail::kByeTag);
        break;
      default: break;
    }
  }

  void start(workers::WorkOrder order) {
    const std::int64_t trial = order.trial;
    const int attempt = order.attempt;
    if (!pool_ || pool_->busy_count() == pool_->slot_count()) {
      workers::Outcome refused;
      refused.reason = "worker rank " + std::to_string(session_.rank()) + " had no free slot";
      send_result(trial, attempt, -1, std::move(refused));
      return;
    }
    pool_->submit(std::move(order), [this, trial, attempt](int slot, workers::Outcome outcome) {
      send_result(trial, attempt, slot, std::move(outcome));
    });
  }

  // The master answers a result with the next order at once: be there to take it.
  void send_result(std::int64_t trial, int attempt, int slot, workers::Outcome outcome) {
    send_bytes(detail::encode(detail::ResultMessage{trial, attempt, slot, std::move(outcome)}), 0,
               detail::kResultTag);
    poller_.expect_message();
  }

  // mpirun forwards SIGTERM/SIGINT to every rank and SIGKILLs them about a second later: kill
  // the objectives now (the master hears of them as cancelled) and wait for its shutdown.
  // SIGUSR1 (a batch system's walltime warning, forwarded by mpirun to every rank) is the
  // master's to act on: its grace period lets the trials here finish.
  void wait_for_signal() {
    signals_.async_wait([this](const boost::system::error_code& ec, int signal_number) {
      if (ec) return;
      if (signal_number != SIGUSR1 && pool_) pool_->kill_all();
      wait_for_signal();
    });
  }

  MpiSession& session_;
  asio::io_context io_;
  std::unique_ptr<workers::LocalPool> pool_;
  MpiPoller poller_;
  asio::signal_set signals_;
};

}  // namespace

int run_mpi_worker(MpiSession& session) { return MpiWorker(session).run(); }

}  // namespace lbo::cluster
