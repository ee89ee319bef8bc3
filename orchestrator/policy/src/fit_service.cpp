#include "fit_service.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "lbo/surrogate/ablr.hpp"
#include "lbo/surrogate/jumbo.hpp"
#include "lbo/surrogate/lbo.hpp"
#include "lbo/surrogate/libo.hpp"
#include "lbo/surrogate/residual.hpp"
#include "lbo/surrogate/transfer.hpp"

namespace lbo::orchestrator {

namespace {

// The background fits' nice value.
constexpr int kFitNice = 10;

}  // namespace

namespace {

std::vector<double> best_of(const surrogate::TaskData& data) {
  std::vector<double> best;
  for (const surrogate::Observations& o : data.tasks) best.push_back(o.y.size() > 0 ? o.y.maxCoeff() : NAN);
  return best;
}

std::unique_ptr<surrogate::Surrogate> make_feature_model(const jobs::JobSpec& job, int dimension) {
  const std::vector<int> hidden(static_cast<std::size_t>(job.policy.network_depth), job.policy.network_width);
  if (job.policy.surrogate == jobs::SurrogateKind::ablr) {
    surrogate::AblrOptions options;
    options.hidden = hidden;
    return std::make_unique<surrogate::Ablr>(dimension, options);
  }
  surrogate::LboOptions options;
  options.hidden = hidden;
  options.networks = job.policy.networks;
  options.ibp_alpha = job.policy.ibp_alpha;
  return std::make_unique<surrogate::Lbo>(dimension, options);
}

}  // namespace

std::unique_ptr<surrogate::Surrogate> make_surrogate(const jobs::JobSpec& job, int dimension) {
  switch (job.policy.surrogate) {
    case jobs::SurrogateKind::ablr:
    case jobs::SurrogateKind::lbo: {
      const bool lbo = job.policy.surrogate == jobs::SurrogateKind::lbo;
      std::unique_ptr<surrogate::Surrogate> model = make_feature_model(job, dimension);
      if (job.policy.residual_gp.value_or(lbo)) model = std::make_unique<surrogate::ResidualGp>(std::move(model));
      if (job.policy.transfer_gp.value_or(lbo)) model = std::make_unique<surrogate::TransferGp>(std::move(model));
      return model;
    }
    case jobs::SurrogateKind::libo: {
      surrogate::LiboOptions options;
      options.full_share = job.policy.libo_full_share;
      options.gp_switch = job.policy.libo_gp_switch;
      return std::make_unique<surrogate::Libo>(dimension, options);
    }
    case jobs::SurrogateKind::jumbo: {
      surrogate::JumboOptions options;
      options.hidden.assign(static_cast<std::size_t>(std::max(job.policy.network_depth - 1, 0)), job.policy.network_width);
      options.threshold = job.policy.jumbo_threshold;
      options.cold_switch = job.policy.jumbo_cold_switch;
      return std::make_unique<surrogate::Jumbo>(dimension, options);
    }
    default: return std::make_unique<surrogate::GpSurrogate>();
  }
}

FitService::FitService(std::unique_ptr<surrogate::Surrogate> surrogate, bool background, int threads)
    : shared_(std::make_shared<Shared>()) {
  shared_->surrogate = std::move(surrogate);
  if (background) {
    thread_ = std::thread([shared = shared_, threads] {
      // Below the master thread and the local objectives: a fit is throughput work, a free slot
      // waiting for a proposal is latency (Linux: the nice value is per thread, and the OpenMP
      // threads this thread starts inherit it).
      setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), kFitNice);
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

void FitService::Shared::fit(FitRequest work) {
  auto snapshot = std::make_shared<Snapshot>();
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
