#include "fit_service.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace lbo::orchestrator {

namespace {

// The background fits' nice value.
constexpr int kFitNice = 10;

std::vector<double> best_of(const surrogate::TaskData& data) {
  std::vector<double> best;
  for (const surrogate::Observations& o : data.tasks) best.push_back(o.y.size() > 0 ? o.y.maxCoeff() : NAN);
  return best;
}

// What a checkpoint keeps of `request`'s data to rebuild the fit's posteriors on (Snapshot::fitted).
std::vector<FittedTask> fitted_of(const FitRequest& request) {
  std::vector<FittedTask> fitted;
  if (request.rows.size() != request.data.tasks.size()) return fitted;
  for (std::size_t k = 0; k < request.rows.size(); ++k) {
    const Eigen::VectorXd& y = request.data.tasks[k].y;
    FittedTask& task = fitted.emplace_back();
    task.rows = request.rows[k];
    task.values.assign(y.data(), y.data() + y.size());  // `usable` is the snapshot's trials[k]
    task.finished = k < request.data.finished.size() && request.data.finished[k];
  }
  return fitted;
}

}  // namespace

FitService::FitService(std::unique_ptr<surrogate::Surrogate> surrogate, FitThread thread, int threads,
                       std::function<void()> published)
    : shared_(std::make_shared<Shared>()) {
  shared_->surrogate = std::move(surrogate);
  shared_->published_hook = std::move(published);
  if (thread != FitThread::none) {
    thread_ = std::thread([shared = shared_, threads, nice = thread == FitThread::background] {
      // Below the master thread and the local objectives: a fit is throughput work, a free slot
      // waiting for a proposal is latency (Linux: the nice value is per thread, and the OpenMP
      // threads this thread starts inherit it). A --sync run has nothing else to do meanwhile.
      if (nice) setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), kFitNice);
      surrogate::use_threads(threads);
      shared->loop();
    });
  }
}

FitService::~FitService() {
  bool fitting = false;
  {
    std::lock_guard lock(shared_->mutex);
    shared_->stopping = true;
    shared_->published_hook = nullptr;  // whoever it tells may be gone next
    fitting = shared_->fitting;
  }
  shared_->cv.notify_all();
  if (!thread_.joinable()) return;
  if (fitting) {
    thread_.detach();  // it holds the shared state, finishes the fit, sees `stopping` and ends
  } else {
    thread_.join();
  }
}

void FitService::request(FitRequest request) {
  {
    std::lock_guard lock(shared_->mutex);
    if (shared_->fitting || shared_->request) {
      shared_->stale = true;
      return;
    }
    shared_->request = std::move(request);
    shared_->fitting = true;
    shared_->stale = false;
  }
  shared_->cv.notify_all();
}

bool FitService::defer() {
  std::lock_guard lock(shared_->mutex);
  if (!shared_->fitting && !shared_->request) return false;
  shared_->stale = true;
  return true;
}

bool FitService::stale() const {
  std::lock_guard lock(shared_->mutex);
  return shared_->stale && !shared_->fitting && !shared_->request;
}

bool FitService::busy() const {
  std::lock_guard lock(shared_->mutex);
  return shared_->fitting || shared_->request.has_value();
}

void FitService::fit_now(FitRequest request) { shared_->fit(std::move(request)); }

void FitService::restore(const surrogate::SurrogateState& saved, FitRequest request) {
  auto snapshot = std::make_shared<Snapshot>();
  shared_->surrogate->restore(saved, request.data);
  for (std::size_t t = 0; t < request.data.tasks.size(); ++t) {
    snapshot->posteriors.push_back(shared_->surrogate->posterior(static_cast<int>(t)));
  }
  snapshot->fitted = fitted_of(request);
  snapshot->trials = std::move(request.trials);
  snapshot->best = best_of(request.data);
  snapshot->state = saved;
  std::lock_guard lock(shared_->mutex);
  shared_->published = std::move(snapshot);  // version 0: the first real fit (version 1) replaces it
}

std::shared_ptr<const Snapshot> FitService::latest() const {
  std::lock_guard lock(shared_->mutex);
  return shared_->published;
}

std::uint64_t FitService::fits_completed() const {
  std::lock_guard lock(shared_->mutex);
  return shared_->fits;
}

void FitService::wait_for_fits(std::uint64_t count) const {
  std::unique_lock lock(shared_->mutex);
  shared_->cv.wait(lock, [&] { return shared_->fits >= count; });
}

void FitService::wait_idle() const {
  std::unique_lock lock(shared_->mutex);
  shared_->cv.wait(lock, [&] { return !shared_->fitting && !shared_->request; });
}

void FitService::Shared::fit(FitRequest work) {
  auto snapshot = std::make_shared<Snapshot>();
  snapshot->fitted = fitted_of(work);
  snapshot->trials = std::move(work.trials);
  snapshot->best = best_of(work.data);
  try {
    surrogate->fit(work.data, work.seed);
    for (std::size_t t = 0; t < work.data.tasks.size(); ++t) {
      snapshot->posteriors.push_back(surrogate->posterior(static_cast<int>(t)));
    }
    snapshot->state = surrogate->state();
  } catch (const std::exception& e) {
    snapshot->error = e.what();
  }
  {
    std::lock_guard lock(mutex);
    snapshot->version = ++fits;
    published = std::move(snapshot);
    fitting = false;
    if (published_hook) published_hook();
  }
  cv.notify_all();
}

void FitService::Shared::loop() {
  for (;;) {
    FitRequest next;
    {
      std::unique_lock lock(mutex);
      cv.wait(lock, [&] { return stopping || request.has_value(); });
      if (stopping) return;
      next = std::move(*request);
      request.reset();
    }
    fit(std::move(next));
  }
}

}  // namespace lbo::orchestrator
