#include "lbo/surrogate/surrogate.hpp"

#include <omp.h>

#include <algorithm>
#include <limits>
#include <string>

#include "lbo/surrogate/linalg.hpp"

namespace lbo::surrogate {

void use_threads(int threads) { omp_set_num_threads(std::max(threads, 1)); }

namespace {

std::shared_ptr<const MeanBasis> basis_at(const GpSurrogate::Bases& bases, std::size_t task) {
  return task < bases.size() ? bases[task] : nullptr;
}

}  // namespace

void GpSurrogate::fit(const TaskData& data, std::uint64_t seed, const Bases& bases, const std::vector<char>& rebase) {
  const auto tasks = data.tasks.size();
  for (std::size_t t = 0; t < tasks; ++t) {
    if (!data.tasks[t].y.allFinite() || !data.tasks[t].X.allFinite()) {
      throw NumericalError("gp: task " + std::to_string(t) + " has a non-finite observation");
    }
  }
  if (gps_.size() < tasks) gps_.resize(tasks, GaussianProcess(options_));
  if (fitted_sizes_.size() < tasks) fitted_sizes_.resize(tasks, -1);
  std::vector<std::shared_ptr<const TaskPosterior>> posteriors(tasks);
  std::vector<char> failed(tasks, 0);
  // Tasks are independent; each GP's own fit is sequential, so the result does not depend on
  // the thread count. Exceptions must not leave an OpenMP region: they are collected.
#pragma omp parallel for schedule(dynamic)
  for (std::size_t t = 0; t < tasks; ++t) {
    if (data.tasks[t].y.size() == 0) continue;
    // Observations only accumulate: a task with as many as at its last fit has not changed
    // (a finished task of a lifelong run is not refitted again and again).
    const bool kept = data.tasks[t].y.size() == fitted_sizes_[t] && t < posteriors_.size() && posteriors_[t];
    if (kept && !(t < rebase.size() && rebase[t] != 0)) {
      posteriors[t] = posteriors_[t];
      continue;
    }
    try {
      if (kept) {
        gps_[t].set(data.tasks[t], gps_[t].theta(), basis_at(bases, t));
      } else {
        gps_[t].fit(data.tasks[t], seed + 7919 * t, basis_at(bases, t));
      }
      posteriors[t] = gps_[t].posterior();
      fitted_sizes_[t] = data.tasks[t].y.size();
    } catch (const std::exception&) {
      failed[t] = 1;
    }
  }
  for (std::size_t t = 0; t < tasks; ++t) {
    if (failed[t] != 0) throw NumericalError("gp: no usable fit for task " + std::to_string(t));
  }
  posteriors_ = std::move(posteriors);
}

std::shared_ptr<const TaskPosterior> GpSurrogate::posterior(int task) const { return task_posterior(posteriors_, task); }

SurrogateState GpSurrogate::state() const {
  GpState gp;
  for (const GaussianProcess& g : gps_) gp.theta.emplace_back(g.theta().data(), g.theta().data() + g.theta().size());
  gp.fitted_sizes.assign(fitted_sizes_.begin(), fitted_sizes_.end());
  SurrogateState state;
  state.gp = std::move(gp);
  return state;
}

void GpSurrogate::restore(const SurrogateState& state, const TaskData& data) {
  if (!state.gp) throw NumericalError("gp: the saved state is not a GP's");
  restore(*state.gp, data, Bases{});
}

void GpSurrogate::restore(const GpState& saved, const TaskData& data, const Bases& bases) {
  const auto tasks = std::max(data.tasks.size(), saved.theta.size());
  std::vector<GaussianProcess> gps(tasks, GaussianProcess(options_));
  std::vector<Eigen::Index> sizes(tasks, -1);
  std::vector<std::shared_ptr<const TaskPosterior>> posteriors(data.tasks.size());
  for (std::size_t t = 0; t < tasks; ++t) {
    if (t >= saved.theta.size() || saved.theta[t].empty()) continue;
    const Eigen::VectorXd theta = Eigen::Map<const Eigen::VectorXd>(saved.theta[t].data(),
                                                                     static_cast<Eigen::Index>(saved.theta[t].size()));
    if (t < data.tasks.size() && data.tasks[t].y.size() > 0) {
      gps[t].set(data.tasks[t], theta, basis_at(bases, t));
      posteriors[t] = gps[t].posterior();
    } else {
      gps[t].warm_start(theta);
    }
    if (t < saved.fitted_sizes.size()) sizes[t] = saved.fitted_sizes[t];
  }
  gps_ = std::move(gps);
  fitted_sizes_ = std::move(sizes);
  posteriors_ = std::move(posteriors);
}

std::int64_t GpSurrogate::fitted_size(int task) const {
  if (task < 0 || task >= static_cast<int>(fitted_sizes_.size())) return -1;
  return fitted_sizes_[static_cast<std::size_t>(task)];
}

double GpSurrogate::log_evidence(int task) const {
  if (task < 0 || task >= static_cast<int>(gps_.size())) return std::numeric_limits<double>::quiet_NaN();
  return gps_[static_cast<std::size_t>(task)].log_evidence();
}

Eigen::VectorXd GpSurrogate::theta(int task) const {
  if (task < 0 || task >= static_cast<int>(gps_.size())) return {};
  return gps_[task].theta();
}

}  // namespace lbo::surrogate
