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
#include <sstream>
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
#include "lbo/workers/runner.hpp"
#include "listening_clock.hpp"
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

// A send that may fail (the peer is gone: MPI_COMM_WORLD returns errors, see MpiSession).
bool try_send(const std::string& bytes, int destination, int tag) {
  return MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, destination, tag, MPI_COMM_WORLD) ==
         MPI_SUCCESS;
}

using Clock = std::chrono::steady_clock;

Clock::duration seconds(double s) { return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s)); }

// A worker rank takes the master for gone after this many rank timeouts of silence.
constexpr double kMasterTimeoutFactor = 10;

// Heartbeats go out every tenth of the timeout (at least every 50 ms, at most every 10 s).
Clock::duration heartbeat_period(double timeout_s) { return seconds(std::clamp(timeout_s / 10, 0.05, 10.0)); }

// The most one gap between two heartbeat ticks counts towards a peer's silence: longer, and
// the listener itself was not running.
Clock::duration listening_gap(double timeout_s) { return 2 * heartbeat_period(timeout_s); }

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
// flight are received and dropped, so no message is left unmatched at MPI_Finalize. A lost rank
// is not asked, and one that does not answer within the rank timeout is taken for lost.
void release_workers(MpiSession& session) {
  std::set<int> waiting;
  for (int rank = 1; rank < session.size(); ++rank) {
    if (session.lost_ranks().count(rank) != 0) continue;
    if (try_send("", rank, detail::kShutdownTag)) {
      waiting.insert(rank);
    } else {
      session.mark_lost(rank);
    }
  }
  const auto deadline = Clock::now() + seconds(session.rank_timeout_s());
  auto idle = std::chrono::microseconds(50);
  while (!waiting.empty() && Clock::now() < deadline) {
    if (std::optional<Received> r = try_receive(MPI_ANY_SOURCE)) {
      if (r->tag == detail::kByeTag) waiting.erase(r->source);
      idle = std::chrono::microseconds(50);
    } else {
      std::this_thread::sleep_for(idle);
      idle = std::min(idle * 2, std::chrono::microseconds(5000));
    }
  }
  for (int rank : waiting) {
    std::cerr << "lbo: worker rank " << rank << " did not answer its shutdown within " << session.rank_timeout_s()
              << " s: taken for lost\n";
    session.mark_lost(rank);
  }
}

class MpiTransport final : public Transport {
 public:
  MpiTransport(asio::io_context& io, MpiSession& session, CompletionHandler on_completion, WorkerSetup setup,
               std::function<void(const std::string&)> log)
      : session_(session),
        on_completion_(std::move(on_completion)),
        log_(std::move(log)),
        timeout_s_(setup.rank_timeout_s),
        capacity_(static_cast<std::size_t>(session.size()), 0),
        busy_(static_cast<std::size_t>(session.size()), 0),
        heard_at_(static_cast<std::size_t>(session.size())),
        listening_(listening_gap(timeout_s_), Clock::now()),
        poller_(io, MPI_ANY_SOURCE, [this](Received r) { on_message(std::move(r)); }),
        heartbeat_timer_(io) {
    if (session.size() < 2) throw std::logic_error("MpiTransport needs worker ranks");
    session.set_rank_timeout_s(timeout_s_);
    const std::string bytes = detail::encode(setup);
    for (int rank = 1; rank < session.size(); ++rank) {
      if (!try_send(bytes, rank, detail::kSetupTag)) session.mark_lost(rank);
    }
    collect_ready();
    // The ranks that answered were just heard: silence is counted from here.
    listening_ = detail::ListeningClock(listening_gap(timeout_s_), Clock::now());
    std::fill(heard_at_.begin(), heard_at_.end(), Clock::duration::zero());
    if (slot_count() == 0) {
      shutdown();
      std::string why = "no worker rank has a slot to run trials on";
      if (!notes_.empty()) why += ": " + notes_.front();
      throw std::runtime_error(why);
    }
    poller_.start();
    schedule_heartbeat();
  }

  ~MpiTransport() override {
    try {
      shutdown();
    } catch (const std::exception& e) {
      std::cerr << "lbo: MPI shutdown failed: " << e.what() << "\n";
    }
  }

  bool remote() const override { return true; }

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
    ++busy_[rank];
    running_[order.trial] = Running{rank, order.attempt};
    if (!try_send(detail::encode(order), rank, detail::kOrderTag)) {
      // Its completion must not arrive within this call: the master is still dispatching.
      asio::post(heartbeat_timer_.get_executor(), [this, rank] { lose(rank, "an order could not be sent to it"); });
      return WorkerSlot{rank, -1};
    }
    poller_.expect_message();
    return WorkerSlot{rank, -1};  // the worker picks the slot; the completion says which
  }

  void cancel(std::int64_t trial) override {
    const auto it = running_.find(trial);
    if (shut_down_ || it == running_.end()) return;
    try_send(detail::encode(detail::CancelRequest{trial}), it->second.rank, detail::kCancelTag);
  }

  void cancel_all() override {
    if (shut_down_) return;
    const std::string bytes = detail::encode(detail::CancelRequest{-1});
    for (int rank = 1; rank < static_cast<int>(busy_.size()); ++rank) {
      if (busy_[rank] > 0 && !lost(rank)) try_send(bytes, rank, detail::kCancelTag);
    }
  }

  void on_reports(ReportHandler handler) override { on_reports_ = std::move(handler); }

  void shutdown() override {
    if (shut_down_) return;
    shut_down_ = true;
    poller_.stop();
    heartbeat_timer_.cancel();
    dismiss_mpi_workers(session_);
    std::fill(busy_.begin(), busy_.end(), 0);
    running_.clear();
  }

 private:
  // Every rank answers its setup with the slots it planned; nothing else can arrive before. A
  // rank that has not answered within the rank timeout is taken for lost.
  void collect_ready() {
    descriptions_.assign(capacity_.size(), std::string());
    std::set<int> waiting;
    for (int rank = 1; rank < session_.size(); ++rank) {
      if (!lost(rank)) waiting.insert(rank);
    }
    const auto deadline = Clock::now() + seconds(timeout_s_);
    auto idle = std::chrono::microseconds(50);
    while (!waiting.empty() && Clock::now() < deadline) {
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
      waiting.erase(r->source);
    }
    for (int rank = 1; rank < session_.size(); ++rank) {
      if (waiting.count(rank) == 0 && !lost(rank)) continue;
      session_.mark_lost(rank);
      descriptions_[rank] = "rank " + std::to_string(rank) + ": lost (no answer to its setup within " +
                            format_seconds(timeout_s_) + " s; [workers] rank_timeout_s)";
      notes_.push_back(descriptions_[rank]);
    }
  }

  void on_message(Received r) {
    // A rank taken for lost that answers after all: its trials already run elsewhere.
    if (lost(r.source)) return;
    heard_at_[r.source] = listening_.at(Clock::now());
    if (r.tag == detail::kReportsTag) {
      if (on_reports_) on_reports_(detail::decode<detail::ReportBatch>(r.bytes).reports);
      return;
    }
    if (r.tag != detail::kResultTag) return;
    auto result = detail::decode<detail::ResultMessage>(r.bytes);
    --busy_[r.source];
    running_.erase(result.trial);
    on_completion_(Completion{result.trial, result.attempt, WorkerSlot{r.source, result.slot},
                              std::move(result.outcome)});
  }

  bool lost(int rank) const { return session_.lost_ranks().count(rank) != 0; }

  static std::string format_seconds(double s) {
    std::ostringstream text;
    text << s;
    return text.str();
  }

  // Heartbeats out to every live rank, and a look at who has been silent too long. (Every
  // message counts as a heartbeat; results and orders are the usual ones.)
  void schedule_heartbeat() {
    heartbeat_timer_.expires_after(heartbeat_period(timeout_s_));
    heartbeat_timer_.async_wait([this](const boost::system::error_code& ec) {
      if (ec || shut_down_) return;
      // Silence counts only while this thread listens: a gap since the last tick (the master
      // stopped, or a --sync refit on this thread) counts as two periods at most.
      listening_.tick(Clock::now());
      // What has arrived counts first: after a long handler the ranks' heartbeats wait unread,
      // and the poller may not have run yet.
      while (std::optional<Received> message = try_receive(MPI_ANY_SOURCE)) on_message(std::move(*message));
      if (shut_down_) return;
      const Clock::duration now = listening_.at(Clock::now());
      for (int rank = 1; rank < session_.size(); ++rank) {
        if (lost(rank)) continue;
        if (now - heard_at_[rank] > seconds(timeout_s_)) {
          lose(rank, "nothing heard from it for " + format_seconds(timeout_s_) + " s ([workers] rank_timeout_s)");
        } else if (!try_send("", rank, detail::kHeartbeatTag)) {
          lose(rank, "a heartbeat could not be sent to it");
        }
      }
      schedule_heartbeat();
    });
  }

  // A rank taken for lost: its slots are gone, and each of its attempts completes as cancelled
  // (lbo's master runs a cancelled attempt again first, without using a retry). It is told to
  // stop, in case it still runs and only its messages were late.
  void lose(int rank, const std::string& why) {
    if (lost(rank) || shut_down_) return;
    session_.mark_lost(rank);
    try_send("", rank, detail::kShutdownTag);
    capacity_[rank] = 0;
    std::vector<workers::AttemptKey> trials;
    for (const auto& [trial, where] : running_) {
      if (where.rank == rank) trials.push_back({trial, where.attempt});
    }
    int live = 0;
    for (int r = 1; r < session_.size(); ++r) live += lost(r) ? 0 : 1;
    if (log_) {
      log_("worker rank " + std::to_string(rank) + " taken for lost: " + why + "; its " +
           std::to_string(trials.size()) + " running trial(s) run again on the other ranks without using a retry; " +
           std::to_string(live) + " worker rank(s) and " + std::to_string(slot_count()) + " slot(s) left");
    }
    for (const auto& [trial, attempt] : trials) {
      running_.erase(trial);
      --busy_[rank];
      workers::Outcome outcome;
      outcome.status = workers::TrialStatus::cancelled;
      outcome.reason = "worker rank " + std::to_string(rank) + " was lost";
      on_completion_(Completion{trial, attempt, WorkerSlot{rank, -1}, std::move(outcome)});
    }
  }

  struct Running {
    int rank = 0;
    int attempt = 1;
  };

  MpiSession& session_;
  CompletionHandler on_completion_;
  ReportHandler on_reports_;
  std::function<void(const std::string&)> log_;
  double timeout_s_;
  std::vector<int> capacity_;  // slots per rank; index 0 (the master) unused; 0 once lost
  std::vector<int> busy_;      // per rank; index 0 unused
  std::vector<Clock::duration> heard_at_;  // per rank: the listening time of its last message
  detail::ListeningClock listening_;
  std::vector<std::string> descriptions_;
  std::set<std::string> hosts_;
  std::vector<std::string> notes_;
  std::map<std::int64_t, Running> running_;  // by trial
  bool shut_down_ = false;
  MpiPoller poller_;
  asio::steady_timer heartbeat_timer_;
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
  if (provided < MPI_THREAD_FUNNELED) {
    MPI_Finalize();
    throw std::runtime_error("the MPI library offers no MPI_THREAD_FUNNELED (lbo's fit threads run beside rank 0's MPI "
                             "calls); use an MPI built with thread support");
  }
  // Errors are returned, not fatal: a send to a rank that has died is how a lost rank may show.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
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

// MPI_Finalize waits for every rank: with one lost it would never return, so it is skipped (the
// launcher then reports that this rank ended without it).
MpiSession::~MpiSession() {
  if (lost_.empty()) MPI_Finalize();
}

std::unique_ptr<Transport> make_mpi_transport(asio::io_context& io, MpiSession& session,
                                              Transport::CompletionHandler on_completion, WorkerSetup setup,
                                              std::function<void(const std::string&)> log) {
  return std::make_unique<MpiTransport>(io, session, std::move(on_completion), setup, std::move(log));
}

void dismiss_mpi_workers(MpiSession& session) {
  if (session.workers_released()) return;
  release_workers(session);
  session.set_workers_released();
}

namespace {

// A worker rank: orders from the master run on a LocalPool; results go back as they end.
class MpiWorker {
 public:
  explicit MpiWorker(MpiSession& session)
      : session_(session),
        poller_(io_, 0, [this](Received r) { on_message(std::move(r)); }),
        signals_(io_, SIGTERM, SIGINT, SIGUSR1),
        heartbeat_timer_(io_),
        report_timer_(io_) {
    signals_.add(SIGHUP);
  }

  int run() {
    wait_for_signal();
    poller_.start();
    io_.run();
    pool_.reset();
    // The last attempts' escaped processes are looked for before this rank exits.
    constexpr double kWait_s = 10;
    if (const std::size_t left = workers::finish_escaped_sweeps(kWait_s); left > 0) {
      std::cerr << "lbo: warning: worker rank " << session_.rank() << ": " << left
                << " ended attempt(s) were not yet searched for processes left outside their process group after "
                << kWait_s << " s; what they left may still run\n";
    }
    return exit_code_;
  }

 private:
  void on_message(Received r) {
    heard_at_ = listening_.at(Clock::now());
    switch (r.tag) {
      case detail::kSetupTag: {
        const auto setup = detail::decode<WorkerSetup>(r.bytes);
        set_up(setup);
        // Before its setup the master may take its time (recovering a long journal); after
        // it, its silence means it is gone.
        timeout_s_ = setup.rank_timeout_s;
        session_.set_rank_timeout_s(timeout_s_);
        listening_ = detail::ListeningClock(listening_gap(timeout_s_), Clock::now());
        heard_at_ = Clock::duration::zero();
        schedule_heartbeat();
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
        heartbeat_timer_.cancel();
        report_timer_.cancel();
        try_send("", 0, detail::kByeTag);
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
      // The master's count and this rank's disagree: not the trial's fault, so it runs again
      // without using a retry.
      workers::Outcome refused;
      refused.status = workers::TrialStatus::cancelled;
      refused.reason = "worker rank " + std::to_string(session_.rank()) + " had no free slot";
      send_result(trial, attempt, -1, std::move(refused));
      return;
    }
    pool_->submit(
        std::move(order),
        [this, trial, attempt](int slot, workers::Outcome outcome) { send_result(trial, attempt, slot, std::move(outcome)); },
        [this](workers::TrialReport report) { add_report(std::move(report)); });
  }

  // Reports go to the master together, kReportBatch_ms after the first one of a batch.
  void add_report(workers::TrialReport report) {
    if (reports_.reports.empty()) {
      report_timer_.expires_after(std::chrono::milliseconds(detail::kReportBatch_ms));
      report_timer_.async_wait([this](const boost::system::error_code& ec) {
        if (!ec) send_reports();
      });
    }
    reports_.reports.push_back(std::move(report));
  }

  void send_reports() {
    if (reports_.reports.empty() || master_gone_) return;
    report_timer_.cancel();
    const std::string bytes = detail::encode(reports_);
    reports_.reports.clear();
    if (!try_send(bytes, 0, detail::kReportsTag)) master_lost("reports could not be sent to it");
  }

  // The master answers a result with the next order at once: be there to take it. The trial's
  // reports go first.
  void send_result(std::int64_t trial, int attempt, int slot, workers::Outcome outcome) {
    send_reports();
    if (master_gone_) return;
    if (!try_send(detail::encode(detail::ResultMessage{trial, attempt, slot, std::move(outcome)}), 0,
                  detail::kResultTag)) {
      master_lost("a result could not be sent to it");
      return;
    }
    poller_.expect_message();
  }

  void schedule_heartbeat() {
    heartbeat_timer_.expires_after(heartbeat_period(timeout_s_));
    heartbeat_timer_.async_wait([this](const boost::system::error_code& ec) {
      if (ec) return;
      // The master's thread may be busy for long (a --sync refit runs on it): it is given ten
      // times the timeout it gives its workers before it is taken for gone, counted while this
      // rank itself runs (a stopped rank cannot tell the master silent).
      listening_.tick(Clock::now());
      if (listening_.at(Clock::now()) - heard_at_ > seconds(kMasterTimeoutFactor * timeout_s_)) {
        master_lost("nothing heard from it for " + std::to_string(static_cast<long>(kMasterTimeoutFactor * timeout_s_)) +
                    " s (10 × [workers] rank_timeout_s)");
        return;
      }
      if (!try_send("", 0, detail::kHeartbeatTag)) {
        master_lost("a heartbeat could not be sent to it");
        return;
      }
      schedule_heartbeat();
    });
  }

  // The master is gone (an MPI launcher that does not end the job when a rank dies): kill the
  // attempts here and end this rank, rather than idle until the allocation ends.
  // Called from a pool's completion handler too (a result that cannot be sent), so the pool is
  // destroyed from a handler of its own, not under its caller.
  void master_lost(const std::string& why) {
    if (master_gone_) return;
    master_gone_ = true;
    const int running = pool_ ? pool_->busy_count() : 0;
    std::cerr << "lbo: worker rank " << session_.rank() << ": the master (rank 0) is taken for lost: " << why
              << "; killing " << running << " running trial(s) and exiting\n";
    asio::post(io_, [this] { pool_.reset(); });
    poller_.stop();
    signals_.cancel();
    heartbeat_timer_.cancel();
    report_timer_.cancel();
    session_.mark_lost(0);
    // 0, not 1: Open MPI's mpirun (with orte_abort_on_non_zero_status 0) ends the job when a
    // rank ends without MPI_Finalize and status 0, and waits on forever after a non-zero one.
    // The run's status is the master's (LBO_STATUS_FILE), not this rank's.
    exit_code_ = 0;
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
  asio::steady_timer heartbeat_timer_;
  asio::steady_timer report_timer_;
  detail::ReportBatch reports_;  // read since the last batch went out
  double timeout_s_ = 120;
  detail::ListeningClock listening_{listening_gap(timeout_s_), Clock::now()};
  Clock::duration heard_at_{};  // the listening time of the master's last message
  bool master_gone_ = false;
  int exit_code_ = 0;
};

}  // namespace

int run_mpi_worker(MpiSession& session) { return MpiWorker(session).run(); }

}  // namespace lbo::cluster
