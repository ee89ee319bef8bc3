#pragma once
// FitService: the model fits of a ModelPolicy. It owns the surrogate and a thread that fits it
// on the newest data while the master goes on (handling signals, results and timers); each
// finished fit is published as an immutable Snapshot that the master adopts when it next
// proposes. A --sync run waits for each fit before it proposes, and is told when it is
// published. Private to orchestrator/.

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "lbo/jobs/job_spec.hpp"
#include "lbo/orchestrator/policy_state.hpp"
#include "lbo/surrogate/surrogate.hpp"

namespace lbo::orchestrator {

/// What a fit produced: a posterior per model task and the trials each was fitted on.
struct Snapshot {
  std::uint64_t version = 0;  ///< 1, 2, … per published fit; 0 for a model rebuilt from a checkpoint
  std::vector<std::shared_ptr<const surrogate::TaskPosterior>> posteriors;  ///< null: no data
  std::vector<std::vector<std::int64_t>> trials;  ///< per model task, ascending
  std::vector<double> best;                       ///< per model task: its best value fitted (NaN: none)
  surrogate::SurrogateState state;                ///< what the next fit starts from
  /// Per model task, its data as the fit saw them (what a checkpoint rebuilds the posteriors
  /// on; each one's `usable` is left to `trials`); empty for a request that named no rows (an
  /// interim GP's).
  std::vector<FittedTask> fitted;
  std::string error;                              ///< a failed fit: the previous posteriors stay
};

/// The data of one fit: every model task's observations and the trials behind them.
struct FitRequest {
  surrogate::TaskData data;
  std::vector<std::vector<std::int64_t>> trials;
  /// Per model task, the trial of each row of data.tasks (empty for a warm-start task); empty
  /// when the caller does not name them.
  std::vector<std::vector<std::int64_t>> rows;
  std::uint64_t seed = 0;
};

/// Where a FitService fits.
enum class FitThread {
  none,        ///< fit_now() only, on the caller's thread and thread count
  background,  ///< a thread of its own, below the master's priority: proposals go on meanwhile
  awaited,     ///< a thread of its own at the master's priority: the master waits for each fit
               ///< (--sync) and is told when it is published
};

class FitService {
 public:
  /// Fits on `thread` with `threads` OpenMP threads. `published` (FitThread::awaited) is called
  /// on the fit's thread after each fit is published; it must only hand the news on (post it to
  /// the master's loop): it is called under the service's lock, and never once the service is
  /// destroyed.
  FitService(std::unique_ptr<surrogate::Surrogate> surrogate, FitThread thread, int threads = 1,
             std::function<void()> published = {});
  /// Does not wait for a fit in progress (minutes, for a large model): its thread is left to
  /// finish it and its result is dropped. A finished run exits at once.
  ~FitService();
  FitService(const FitService&) = delete;
  FitService& operator=(const FitService&) = delete;

  /// Hands `request` to the thread unless a fit is under way; then remembers that a newer one
  /// is due (stale()). Returns at once.
  void request(FitRequest request);
  /// New data came in: while a fit is queued or under way, remembers that a newer one is due
  /// (as request() would) and returns true, so the caller need not build the request; false
  /// when the thread is idle (the caller requests).
  bool defer();
  /// Whether results came in while the last fit ran, so another is due.
  bool stale() const;
  /// Whether a fit is queued or under way.
  bool busy() const;
  /// Fits on this thread and publishes: FitThread::none, or a first fit made before the thread
  /// has one (an interim GP's, on a subset).
  void fit_now(FitRequest request);
  /// Rebuilds the model from a checkpoint's state on `request`'s data without fitting and
  /// publishes it as version 0. Throws NumericalError when it cannot.
  void restore(const surrogate::SurrogateState& saved, FitRequest request);

  /// The newest published fit, or null before the first.
  std::shared_ptr<const Snapshot> latest() const;
  /// Fits published so far (tests wait on it).
  std::uint64_t fits_completed() const;
  /// Blocks until at least `count` fits are published (tests; not used by the master).
  void wait_for_fits(std::uint64_t count) const;
  /// Blocks until no fit is queued or under way.
  void wait_idle() const;

 private:
  // Everything the thread touches: shared with it, so that it can outlive this object.
  struct Shared {
    std::unique_ptr<surrogate::Surrogate> surrogate;  // only fit() touches it
    mutable std::mutex mutex;
    mutable std::condition_variable cv;
    std::shared_ptr<const Snapshot> published;  // guarded by mutex
    std::optional<FitRequest> request;          // guarded
    bool fitting = false;                       // guarded: a request is queued or being fitted
    bool stale = false;                         // guarded: data came while fitting
    bool stopping = false;                      // guarded
    std::function<void()> published_hook;       // guarded: called under the lock after each fit
    std::uint64_t fits = 0;                     // guarded

    void fit(FitRequest work);  // the thread's, or fit_now's
    void loop();
  };

  std::shared_ptr<Shared> shared_;
  std::thread thread_;
};

}  // namespace lbo::orchestrator
