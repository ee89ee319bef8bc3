#include "fit_service.hpp"

#include <algorithm>
#include <cmath>

#include "lbo/surrogate/ablr.hpp"
#include "lbo/surrogate/lbo.hpp"
#include "lbo/surrogate/residual.hpp"
#include "lbo/surrogate/transfer.hpp"

namespace lbo::orchestrator {

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
    default: return std::make_unique<surrogate::GpSurrogate>();
  }
}

FitService::FitService(std::unique_ptr<surrogate::Surrogate> surrogate, bool background, int threads)
    : surrogate_(std::move(surrogate)) {
  if (background) {
    thread_ = std::thread([this, threads] {
      surrogate::use_threads(threads);
      loop();
    });
  }
}

FitService::~FitService() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void FitService::request(FitRequest request) {
  {
    std::lock_guard lock(mutex_);
    if (fitting_ || request_) {
      stale_ = true;
      return;
    }
    request_ = std::move(request);
    fitting_ = true;
    stale_ = false;
  }
  cv_.notify_all();
}

bool FitService::stale() const {
  std::lock_guard lock(mutex_);
  return stale_ && !fitting_ && !request_;
}

bool FitService::busy() const {
  std::lock_guard lock(mutex_);
  return fitting_ || request_.has_value();
}

void FitService::fit_now(FitRequest request) { fit(std::move(request)); }

void FitService::restore(const surrogate::SurrogateState& saved, FitRequest request) {
  auto snapshot = std::make_shared<Snapshot>();
  surrogate_->restore(saved, request.data);
  for (std::size_t t = 0; t < request.data.tasks.size(); ++t) {
    snapshot->posteriors.push_back(surrogate_->posterior(static_cast<int>(t)));
  }
  snapshot->trials = std::move(request.trials);
  snapshot->best = best_of(request.data);
  snapshot->state = saved;
  std::lock_guard lock(mutex_);
  published_ = std::move(snapshot);  // version 0: the first real fit (version 1) replaces it
}

std::shared_ptr<const Snapshot> FitService::latest() const {
  std::lock_guard lock(mutex_);
  return published_;
}

std::uint64_t FitService::fits_completed() const {
  std::lock_guard lock(mutex_);
  return fits_;
}

void FitService::wait_for_fits(std::uint64_t count) const {
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [&] { return fits_ >= count; });
}

void FitService::fit(FitRequest request) {
  auto snapshot = std::make_shared<Snapshot>();
  snapshot->trials = std::move(request.trials);
  snapshot->best = best_of(request.data);
  try {
    surrogate_->fit(request.data, request.seed);
    for (std::size_t t = 0; t < request.data.tasks.size(); ++t) {
      snapshot->posteriors.push_back(surrogate_->posterior(static_cast<int>(t)));
    }
    snapshot->state = surrogate_->state();
  } catch (const std::exception& e) {
    snapshot->error = e.what();
  }
  {
    std::lock_guard lock(mutex_);
    snapshot->version = ++fits_;
    published_ = std::move(snapshot);
    fitting_ = false;
  }
  cv_.notify_all();
}

void FitService::loop() {
  for (;;) {
    FitRequest request;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] { return stopping_ || request_.has_value(); });
      if (stopping_) return;
      request = std::move(*request_);
      request_.reset();
    }
    fit(std::move(request));
  }
}

}  // namespace lbo::orchestrator
