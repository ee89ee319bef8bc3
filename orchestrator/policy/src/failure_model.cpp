#include "failure_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace lbo::orchestrator {

FailureModel::FailureModel(const jobs::JobSpec& job, const ModelData& data, std::function<void(const std::string&)> log)
    : job_(job), data_(data), log_(std::move(log)) {}

int FailureModel::label(const Trial& t) {
  using workers::TrialStatus;
  if (t.lost()) return -1;
  if (t.paused()) return 1;
  if (!t.finished) return -1;
  switch (t.outcome.status) {
    case TrialStatus::ok:
    case TrialStatus::stopped: return 1;
    case TrialStatus::failed:
    case TrialStatus::timeout:
    case TrialStatus::crashed: return 0;
    default: return -1;
  }
}

std::shared_ptr<const surrogate::Feasibility> FailureModel::current(const RunState& state) {
  if (job_.objective.failures == jobs::FailureLearning::ignore) return nullptr;
  // This runs at every proposal: a run without a failure costs one scan, no allocation.
  const auto& trials = state.trials();
  if (std::none_of(trials.begin(), trials.end(), [](const Trial& t) { return label(t) == 0; })) {
    learned_.clear();
    model_.reset();
    return nullptr;
  }
  std::vector<std::pair<std::int64_t, int>> learned;
  for (const Trial& t : trials) {
    if (const int l = label(t); l >= 0) learned.emplace_back(t.id, l);
  }
  if (learned == learned_) return model_;
  surrogate::FeasibilityData d;
  std::vector<Eigen::VectorXd> x;
  for (const auto& [id, l] : learned) {
    const Trial& t = state.trial(id);
    x.push_back(data_.encode(t.config));
    d.task.push_back(t.task);
    d.ok.push_back(static_cast<char>(l));
  }
  d.x.resize(static_cast<Eigen::Index>(x.size()), data_.encoder().dimension());
  for (std::size_t i = 0; i < x.size(); ++i) d.x.row(static_cast<Eigen::Index>(i)) = x[i].transpose();
  model_ = surrogate::Feasibility::fit(d);
  learned_ = std::move(learned);
  const int failures = static_cast<int>(std::count_if(learned_.begin(), learned_.end(), [](const auto& p) { return p.second == 0; }));
  // Told when it starts, and each time the failures it learns from have doubled.
  if (log_ && failures >= 2 * logged_failures_) {
    log_(std::string(logged_failures_ == 0 ? "failures teach the model: " : "the failure model now learns from ") +
         std::to_string(failures) + " failed of " + std::to_string(learned_.size()) +
         " ended trials (a non-zero exit or bad result, a signal or a timeout); proposals weigh each configuration's "
         "estimated probability of success ([objective] failures = \"ignore\" to not): " +
         model_->describe());
    logged_failures_ = failures;
  }
  return model_;
}

double FailureModel::probability(const surrogate::Feasibility* model, int task, const jobs::Config& config) const {
  return model != nullptr ? std::exp(model->log_probability(data_.encode(config), task)) : 1.0;
}

std::string FailureModel::note(double probability) {
  char text[64];
  std::snprintf(text, sizeof text, "estimated probability of success %.2f", probability);
  return text;
}

}  // namespace lbo::orchestrator
