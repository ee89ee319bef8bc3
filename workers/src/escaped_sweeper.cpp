#include "escaped_sweeper.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <iterator>
#include <mutex>
#include <thread>
#include <vector>

#include "lbo/workers/runner.hpp"

namespace lbo::workers {

namespace {

// Ended attempts whose escaped processes are still to be looked for (kill_escaped), on a
// thread of its own: one look reads every /proc/<pid>/environ, about 0.2 ms with 80 processes
// and 2 ms with 570 on the machine of bench/README.md, which the event loop that refills the
// slots should not wait for. The attempts that ended meanwhile share one look. An attempt's
// processes carry an id of their own (LBO_ATTEMPT_ID: lbo's pid and a count), so a retry that
// starts meanwhile in the same folder is never taken for its predecessor's leftovers (a retry
// itself first kills what any earlier attempt left, synchronously: kill_leftovers). A kill is
// said on stderr, where lbo logs. The thread lives as long as the process (never joined);
// finish_escaped_sweeps waits for the looks asked for before lbo exits.
class EscapedSweeper {
 public:
  static EscapedSweeper& instance() {
    static EscapedSweeper* sweeper = new EscapedSweeper();  // never destroyed: see above
    return *sweeper;
  }

  void add(std::string attempt_id, std::string what) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      pending_.push_back({std::move(attempt_id), std::move(what)});
    }
    wake_.notify_one();
  }

  // Waits until every look asked for so far is done, at most `timeout`; how many are not.
  std::size_t finish(std::chrono::steady_clock::duration timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait_for(lock, timeout, [this] { return pending_.empty() && looking_ == 0; });
    return pending_.size() + looking_;
  }

 private:
  struct Ended {
    std::string attempt_id;
    std::string what;
  };

  EscapedSweeper() { std::thread([this] { run(); }).detach(); }

  void run() {
    for (;;) {
      std::vector<Ended> batch;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [this] { return !pending_.empty(); });
        batch.assign(std::make_move_iterator(pending_.begin()), std::make_move_iterator(pending_.end()));
        pending_.clear();
        looking_ = batch.size();
      }
      std::vector<std::string> ids;
      for (const Ended& e : batch) ids.push_back(e.attempt_id);
      const std::vector<int> killed = kill_escaped(ids);
      for (std::size_t i = 0; i < batch.size(); ++i) {
        if (killed[i] > 0) {
          std::fprintf(stderr, "lbo: killed %d process group(s) that %s left running outside its own\n", killed[i],
                       batch[i].what.c_str());
        }
      }
      {
        const std::lock_guard<std::mutex> lock(mutex_);
        looking_ = 0;
      }
      done_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::deque<Ended> pending_;
  std::size_t looking_ = 0;  // attempts of the look under way
};

}  // namespace

std::size_t finish_escaped_sweeps(double timeout_s) {
  return EscapedSweeper::instance().finish(
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(timeout_s)));
}

namespace detail {

std::string new_attempt_id() {
  static std::atomic<std::uint64_t> count{0};
  return std::to_string(::getpid()) + "-" + std::to_string(++count);
}

void sweep_escaped_later(std::string attempt_id, std::string what) {
  EscapedSweeper::instance().add(std::move(attempt_id), std::move(what));
}

}  // namespace detail

}  // namespace lbo::workers
