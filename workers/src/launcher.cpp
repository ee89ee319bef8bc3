#include "launcher.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <deque>
#include <thread>

#include "child_process.hpp"
#include "trial_folder.hpp"

namespace lbo::workers::detail {

std::optional<Launch> PendingLaunch::take() {
  const std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(result_, std::nullopt);
}

void PendingLaunch::deliver(Launch made, const std::function<void()>& ready) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    result_ = std::move(made);
  }
  ready();
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    delivered_ = true;
  }
  done_.notify_all();
}

std::optional<Launch> PendingLaunch::wait_and_take() {
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [this] { return delivered_; });
  return std::exchange(result_, std::nullopt);
}

namespace {

// The folder, the pipes and the spawn, as Runner's attempt did them on its own thread before.
Launch launch(const WorkOrder& order, const RunnerOptions& options, const std::string& attempt_id) {
  Launch made;
  made.began = std::chrono::steady_clock::now();
  if (const auto failure = prepare_trial_folder(order, made.stdout_file, made.stderr_file)) {
    made.error = failure->reason;
    made.error_number = failure->error_number;
    made.path = failure->path;
    return made;
  }
  made.folder_ready = true;
  std::array<int, 2> out{-1, -1}, err{-1, -1};
  if (::pipe2(out.data(), O_CLOEXEC) != 0 || ::pipe2(err.data(), O_CLOEXEC) != 0) {
    made.error_number = errno;
    made.error = std::string("pipe: ") + std::strerror(made.error_number);
    ::close(out[0]), ::close(out[1]);
    return made;
  }
  made.stdout_read.reset(out[0]);
  made.stderr_read.reset(err[0]);
  const UniqueFd out_write(out[1]), err_write(err[1]);  // closed here once the child holds them
  SpawnRequest request;
  request.argv = order.argv;
  request.workdir = order.workdir;
  request.stdout_fd = out_write.get();
  request.stderr_fd = err_write.get();
  request.env = attempt_environment(order, options, attempt_id);
  request.cores = options.resources.cores;
  const SpawnResult spawned = spawn_child(request);
  if (spawned.pid < 0) {
    made.error = spawned.error;
    made.error_number = spawned.host_limit() ? spawned.error_number : 0;
    return made;
  }
  made.pid = spawned.pid;
  return made;
}

class Launcher {
 public:
  static Launcher& instance() {
    static Launcher* launcher = new Launcher();  // never destroyed: its threads live as long as the process
    return *launcher;
  }

  std::shared_ptr<PendingLaunch> add(WorkOrder order, RunnerOptions options, std::string attempt_id,
                                     std::function<void()> ready) {
    auto pending = std::make_shared<PendingLaunch>();
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back({std::move(order), std::move(options), std::move(attempt_id), std::move(ready), pending});
    }
    wake_.notify_one();
    return pending;
  }

 private:
  struct Job {
    WorkOrder order;
    RunnerOptions options;
    std::string attempt_id;
    std::function<void()> ready;
    std::shared_ptr<PendingLaunch> pending;
  };

  // Two threads: a spawn blocks its thread until the child has exec'd (posix_spawn's vfork), so
  // a second one overlaps the next; at 256 local slots on 2 cores one thread left a free slot
  // waiting ~300 ms (median) for its spawn, two ~50 ms (bench/README.md, Scale).
  Launcher() {
    for (int i = 0; i < kThreads; ++i) std::thread([this] { run(); }).detach();
  }
  static constexpr int kThreads = 2;

  void run() {
    for (;;) {
      Job job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [this] { return !queue_.empty(); });
        job = std::move(queue_.front());
        queue_.pop_front();
      }
      job.pending->deliver(launch(job.order, job.options, job.attempt_id), job.ready);
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> queue_;
};

}  // namespace

std::shared_ptr<PendingLaunch> launch_later(WorkOrder order, RunnerOptions options, std::string attempt_id,
                                            std::function<void()> ready) {
  return Launcher::instance().add(std::move(order), std::move(options), std::move(attempt_id), std::move(ready));
}

}  // namespace lbo::workers::detail
