#include "failure_model.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <system_error>

#include <nlohmann/json.hpp>

#include "lbo/surrogate/surrogate.hpp"

namespace lbo::orchestrator {

FailureModel::FailureModel(const jobs::JobSpec& job, const ModelData& data, std::function<void(const std::string&)> log, bool sync)
    : job_(job), data_(data), log_(std::move(log)), sync_(sync) {}

bool FailureModel::failed(const Trial& t) {
  return !t.lost() && t.finished && workers::is_failure(t.outcome.status);
}

int FailureModel::label(const Trial& t, bool failures_teach) {
  using workers::TrialStatus;
  if (t.lost()) return -1;
  if (t.paused()) return 1;
  if (!t.finished) return -1;
  if (failed(t)) return failures_teach ? 0 : -1;
  switch (t.outcome.status) {
    case TrialStatus::ok:  // infeasible ones too: they ran, and their values teach the limits
    case TrialStatus::stopped: return 1;
    default: return -1;
  }
}

std::shared_ptr<const surrogate::FeasibilityModel> FailureModel::current(const RunState& state) {
  std::vector<std::shared_ptr<const surrogate::FeasibilityModel>> parts;
  std::vector<double> weights;
  if (auto failures = failure_classifier(state)) {
    parts.push_back(std::move(failures));
    weights.push_back(1);
  }
  for (std::size_t c = 0; c < job_.constraints.size(); ++c) {
    if (auto limit = limit_model(state, c)) {
      parts.push_back(std::move(limit));
      weights.push_back(kLimitSharpness);
    }
  }
  if (parts == parts_) return model_;
  parts_ = parts;
  // Alone, the classifier is its own weight; a limit always goes through the joint model's weights.
  model_ = parts.empty() ? nullptr
           : parts.size() == 1 && job_.constraints.empty()
               ? parts.front()
               : std::make_shared<const surrogate::JointFeasibility>(std::move(parts), std::move(weights));
  return model_;
}

std::shared_ptr<const surrogate::Feasibility> FailureModel::failure_classifier(const RunState& state) {
  if (job_.objective.failures == jobs::FailureLearning::ignore) return nullptr;
  // This runs at every proposal: a run without a failure costs one scan, no allocation.
  const auto& trials = state.trials();
  if (std::none_of(trials.begin(), trials.end(), [](const Trial& t) { return label(t) == 0; })) {
    learned_.clear();
    classifier_.reset();
    return nullptr;
  }
  std::vector<std::pair<std::int64_t, int>> learned;
  for (const Trial& t : trials) {
    if (const int l = label(t); l >= 0) learned.emplace_back(t.id, l);
  }
  if (learned == learned_) return classifier_;
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
  classifier_ = surrogate::Feasibility::fit(d);
  learned_ = std::move(learned);
  const int failures = static_cast<int>(std::count_if(learned_.begin(), learned_.end(), [](const auto& p) { return p.second == 0; }));
  // Told when it starts, and each time the failures it learns from have doubled.
  if (log_ && failures >= 2 * logged_failures_) {
    log_(std::string(logged_failures_ == 0 ? "failures teach the model: " : "the failure model now learns from ") +
         std::to_string(failures) + " failed of " + std::to_string(learned_.size()) +
         " ended trials (a non-zero exit or bad result, a signal or a timeout); proposals weigh each configuration's "
         "estimated probability of success ([objective] failures = \"ignore\" to not): " +
         classifier_->describe());
    logged_failures_ = failures;
  }
  return classifier_;
}

std::shared_ptr<const surrogate::LimitModel> FailureModel::limit_model(const RunState& state, std::size_t c) {
  if (limits_.size() < job_.constraints.size()) limits_.resize(job_.constraints.size());
  Limit& limit = limits_[c];
  const jobs::Constraint& constraint = job_.constraints[c];
  // Every ok trial reported the value (the master fails those that do not): the ids say it all.
  std::vector<std::int64_t> ids;
  for (const Trial& t : state.trials()) {
    if (!t.lost() && t.finished && t.outcome.status == workers::TrialStatus::ok) ids.push_back(t.id);
  }
  if (ids.empty()) {
    limit = Limit{};
    return nullptr;
  }
  if (ids == limit.ids) return limit.model;
  std::vector<std::int64_t> valued;  // the trials that reported the value, ascending ids
  std::vector<double> values;
  for (std::int64_t id : ids) {
    // A finished trial's metrics never change: each is read once (a proposal after every new
    // result would parse every trial's again).
    auto [at, added] = limit.reported.try_emplace(id, std::numeric_limits<double>::quiet_NaN());
    if (added) {
      const nlohmann::json metrics = nlohmann::json::parse(state.trial(id).outcome.metrics_json, nullptr, false);
      const auto value = metrics.is_object() ? metrics.find(constraint.name) : metrics.end();
      if (metrics.is_object() && value != metrics.end() && value->is_number()) at->second = value->get<double>();
    }
    // A trial of the run before this limit was added may lack the value: it teaches the limit nothing.
    if (!std::isfinite(at->second)) continue;
    valued.push_back(id);
    values.push_back(at->second);
  }
  limit.ids = std::move(ids);
  if (valued.empty()) {
    limit.model.reset();
    return nullptr;
  }
  const auto data_of = [&](std::size_t n) {
    surrogate::LimitData d;
    d.x.resize(static_cast<Eigen::Index>(n), data_.encoder().dimension());
    for (std::size_t i = 0; i < n; ++i) d.x.row(static_cast<Eigen::Index>(i)) = data_.encode(state.trial(valued[i]).config).transpose();
    d.value = Eigen::Map<const Eigen::VectorXd>(values.data(), static_cast<Eigen::Index>(n));
    return d;
  };
  const double low = constraint.min.value_or(-surrogate::LimitModel::kNone);
  const double high = constraint.max.value_or(surrogate::LimitModel::kNone);
  // The hyperparameters are fitted on the first n_k values of a fixed schedule (every n to
  // kEveryFit, then each time n grew by a quarter) and kept for the values in between, which
  // only condition on them: a fit per trial cost the master a GP fit per result at many slots.
  // θ is a function of the trials alone (no warm start), so a resumed --sync run fits the same;
  // without --sync it is fitted beside the master (refit_theta).
  std::size_t fitted = valued.size();
  if (fitted > kEveryFit) {
    fitted = kEveryFit;
    while (static_cast<std::size_t>(std::ceil(1.25 * static_cast<double>(fitted))) <= valued.size()) {
      fitted = static_cast<std::size_t>(std::ceil(1.25 * static_cast<double>(fitted)));
    }
  }
  const std::vector<std::int64_t> key(valued.begin(), valued.begin() + static_cast<std::ptrdiff_t>(fitted));
  if (key != limit.theta_ids) refit_theta(limit, key, data_of(fitted), low, high, constraint.name);
  limit.model = surrogate::LimitModel::fit(data_of(valued.size()), low, high, constraint.name, &limit.theta);
  // Told when it starts, and each time the values it learns from have doubled.
  if (log_ && limit.model->points() >= 2 * limit.logged_points) {
    log_(std::string(limit.logged_points == 0 ? "limits teach the model: " : "the limit model now learns from ") +
         constraint.describe() + " by a " + limit.model->describe() +
         "; proposals weigh each configuration's estimated probability of keeping it");
    limit.logged_points = limit.model->points();
  }
  return limit.model;
}

void FailureModel::refit_theta(Limit& limit, std::vector<std::int64_t> key, surrogate::LimitData data, double low, double high,
                               const std::string& name) {
  using namespace std::chrono_literals;
  if (limit.pending.valid() && limit.pending.wait_for(0s) == std::future_status::ready) {
    limit.theta = limit.pending.get();  // a failed fit throws here, on the master's thread, as a fit made here would
    limit.theta_ids = std::move(limit.pending_ids);
  }
  if (key == limit.theta_ids) return;
  // With --sync, and for the first θ (nothing to propose with before it), on this thread. At 64
  // slots of 1 s trials a limit's 18 fits of up to 200 values held the master 1.3 s of a 9 s
  // run (its utilization 0.89 against 0.93 without the limit;
  // bench/log/2026-12-02-scale-limits-at-64-slots.md).
  if (sync_ || limit.theta.size() == 0) {
    limit.theta = surrogate::LimitModel::fit(data, low, high, name)->theta();
    limit.theta_ids = std::move(key);
    return;
  }
  if (limit.pending.valid()) return;  // one at a time: the newest values wait for its end
  try {
    limit.pending = std::async(std::launch::async, [data, low, high, name] {
      surrogate::use_threads(1);  // beside the master's proposals, on a core of its own at most
      return surrogate::LimitModel::fit(data, low, high, name)->theta();
    });
    limit.pending_ids = std::move(key);
  } catch (const std::system_error&) {  // no thread to be had (a process limit): here, as with --sync
    limit.theta = surrogate::LimitModel::fit(data, low, high, name)->theta();
    limit.theta_ids = std::move(key);
  }
}

double FailureModel::probability(const surrogate::FeasibilityModel* model, int task, const jobs::Config& config) const {
  return model != nullptr ? std::exp(model->log_probability(data_.encode(config), task)) : 1.0;
}

double FailureModel::weight(const surrogate::FeasibilityModel* model, int task, const jobs::Config& config) const {
  return model != nullptr ? std::exp(model->log_weight(data_.encode(config), task)) : 1.0;
}

std::string FailureModel::note(double probability) {
  char text[64];
  std::snprintf(text, sizeof text, "estimated probability of success %.2f", probability);
  return text;
}

}  // namespace lbo::orchestrator
