#include "lbo/surrogate/surrogate.hpp"

#include <string>

#include "lbo/surrogate/linalg.hpp"

namespace lbo::surrogate {

void GpSurrogate::fit(const TaskData& data, std::uint64_t seed) {
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
    if (data.tasks[t].y.size() == fitted_sizes_[t] && t < posteriors_.size() && posteriors_[t]) {
      posteriors[t] = posteriors_[t];
      continue;
    }
    try {
      gps_[t].fit(data.tasks[t], seed + 7919 * t);
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

std::shared_ptr<const TaskPosterior> GpSurrogate::posterior(int task) const {
  if (task < 0 || task >= static_cast<int>(posteriors_.size())) return nullptr;
  return posteriors_[task];
}

Eigen::VectorXd GpSurrogate::theta(int task) const {
  if (task < 0 || task >= static_cast<int>(gps_.size())) return {};
  return gps_[task].theta();
}

}  // namespace lbo::surrogate
