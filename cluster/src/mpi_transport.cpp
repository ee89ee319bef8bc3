// The MPI transport (master side), the worker rank's loop and the MPI session.

#include <mpi.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
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

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "?";
  return name;
}

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
        capacity_(static_cast<std::size_t>(session.size()), 0),
        busy_(static_cast<std::size_t>(session.size()), 0),
        poller_(io, MPI_ANY_SOURCE, [this](Received r) { on_message(std::move(r)); }) {
    if (session.size() < 2) throw std::logic_error("MpiTransport needs worker ranks");
    const std::string bytes = detail::encode(setup);
    for (int rank = 1; rank < session.size(); ++rank) send_bytes(bytes, rank, detail::kSetupTag);
    collect_ready();
    if (slot_count() == 0) {
      shutdown();
      std::string why = "no worker rank has a slot to run trials on";
      if (!notes_.empty()) why += ": " + notes_.front();
      throw std::runtime_error(why);
    }
    poller_.start();
  }

  ~MpiTransport() override {
    try {
      shutdown();
    } catch (const std::exception& e) {
      std::cerr << "lbo: MPI shutdown failed: " << e.what() << "\n";
    }
  }

  int slot_count() const override {
    int total = 0;
    for (int c : capacity_) total += c;
    return total;
  }

  // One line per rank up to 16 ranks, else a summary; then what differs from the request.
  std::vector<std::string> resources() const override {
    std::vector<std::string> lines;
    const int workers = static_cast<int>(capacity_.size()) - 1;
    if (workers <= 16) {
      for (int rank = 1; rank <= workers; ++rank) lines.push_back(descriptions_[rank]);
    } else {
      lines.push_back(std::to_string(workers) + " worker ranks on " + std::to_string(hosts_.size()) + " host(s), " +
                      std::to_string(slot_count()) + " slot(s) in all (rank 1: " + descriptions_[1] + ")");
    }
    const std::size_t shown = std::min<std::size_t>(notes_.size(), 10);
    lines.insert(lines.end(), notes_.begin(), notes_.begin() + static_cast<std::ptrdiff_t>(shown));
    if (notes_.size() > shown) lines.push_back("and " + std::to_string(notes_.size() - shown) + " more such note(s)");
    return lines;
  }

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
      if (busy_[r] < capacity_[r] && (rank == 0 || busy_[r] < busy_[rank])) rank = r;
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
  // Every rank answers its setup with the slots it planned; nothing else can arrive before.
  void collect_ready() {
    descriptions_.assign(capacity_.size(), std::string());
    int ready = 0;
    auto idle = std::chrono::microseconds(50);
    while (ready < session_.size() - 1) {
      std::optional<Received> r = try_receive(MPI_ANY_SOURCE);
      if (!r) {
        std::this_thread::sleep_for(idle);
        idle = std::min(idle * 2, std::chrono::microseconds(5000));
        continue;
      }
      if (r->tag != detail::kReadyTag) continue;
      const auto answer = detail::decode<detail::WorkerReady>(r->bytes);
      capacity_[r->source] = answer.slots;
      descriptions_[r->source] = "rank " + std::to_string(r->source) + " on " + answer.host + ": " + answer.resources;
      hosts_.insert(answer.host);
      notes_.insert(notes_.end(), answer.notes.begin(), answer.notes.end());
      ++ready;
    }
  }

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
  std::vector<int> capacity_;  // slots per rank; index 0 (the master) unused
  std::vector<int> busy_;      // per rank; index 0 unused
  std::vector<std::string> descriptions_;
  std::set<std::string> hosts_;
  std::vector<std::string> notes_;
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
  find_node_shares();
}

// Worker ranks on one node may see the same cores (mpirun --bind-to none, or several ranks bound
// to one socket) or the same GPUs (mpirun copies CUDA_VISIBLE_DEVICES to every rank): each takes
// its own part, so two ranks never pin trials to the same core or hand out the same device.
// Every rank calls this collectively right after MPI_Init.
void MpiSession::find_node_shares() {
  MPI_Comm node;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
  int node_size = 1;
  MPI_Comm_size(node, &node_size);
  const workers::VisibleGpus gpus = workers::visible_gpus({});
  const std::array<std::uint64_t, 3> mine{static_cast<std::uint64_t>(rank_),
                                          std::hash<std::string>{}(workers::cpu_list(workers::affinity_cores())),
                                          std::hash<std::string>{}(gpus.source + "=" + workers::device_list(gpus.devices))};
  std::vector<std::uint64_t> all(3 * static_cast<std::size_t>(node_size));
  check(MPI_Allgather(mine.data(), 3, MPI_UINT64_T, all.data(), 3, MPI_UINT64_T, node), "MPI_Allgather");
  MPI_Comm_free(&node);
  const auto share = [&](int field) {
    workers::Share s{0, 0};
    for (int i = 0; i < node_size; ++i) {
      const std::uint64_t* peer = &all[3 * static_cast<std::size_t>(i)];
      if (peer[0] == 0 || (field > 0 && peer[field] != mine[static_cast<std::size_t>(field)])) continue;  // rank 0 runs no trials
      if (peer[0] < mine[0]) ++s.index;
      ++s.count;
    }
    return s.count == 0 ? workers::Share{} : s;
  };
  node_share_ = share(0);
  core_share_ = share(1);
  gpu_share_ = share(2);
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
        signals_(io_, SIGTERM, SIGINT, SIGUSR1) {
    signals_.add(SIGHUP);
  }

  int run() {
    wait_for_signal();
    poller_.start();
    io_.run();
    return 0;
  }

 private:
  void on_message(Received r) {
    switch (r.tag) {
      case detail::kSetupTag: set_up(detail::decode<WorkerSetup>(r.bytes)); break;
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

  // Plans this rank's slots from its share of the node's cores and GPUs, and tells the master.
  void set_up(const WorkerSetup& setup) {
    const std::string who = "rank " + std::to_string(session_.rank());
    const std::vector<int> cores = workers::share_of(workers::affinity_cores(), session_.core_share());
    const workers::VisibleGpus visible = workers::visible_gpus(setup.resources);
    const workers::Share gpu_share = setup.resources.gpus.empty() ? session_.gpu_share() : session_.node_share();
    const std::vector<std::string> gpus = workers::share_of(visible.devices, gpu_share);
    const workers::SlotPlan plan = workers::plan_slots(setup.resources, cores, gpus, who);
    workers::RunnerOptions options;
    options.rank = session_.rank();
    options.output_limit_bytes = setup.output_limit_bytes;
    if (!plan.slots.empty()) pool_ = std::make_unique<workers::LocalPool>(io_, plan.slots, options);
    detail::WorkerReady ready{static_cast<int>(plan.slots.size()), host_name(), workers::describe(plan), plan.notes};
    if (setup.resources.gpus_per_trial > 0 && !visible.source.empty()) ready.resources += " from " + visible.source;
    if (setup.resources.gpus_per_trial > 0 && visible.source.empty()) {
      ready.notes.push_back(who + ": no GPU visible (CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES, SLURM_STEP_GPUS and "
                                  "SLURM_JOB_GPUS are unset, and [workers] gpus is empty)");
    }
    send_bytes(detail::encode(ready), 0, detail::kReadyTag);
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
  // SIGUSR1 (a batch system's walltime warning, forwarded by mpirun to every rank) and SIGHUP
  // (a closed terminal) are the master's to act on: its grace period lets the trials here
  // finish, and its shutdown ends this rank.
  void wait_for_signal() {
    signals_.async_wait([this](const boost::system::error_code& ec, int signal_number) {
      if (ec) return;
      if (signal_number != SIGUSR1 && signal_number != SIGHUP && pool_) pool_->kill_all();
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
