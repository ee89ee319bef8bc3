#include "lbo/surrogate/transfer.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "lbo/surrogate/linalg.hpp"

namespace lbo::surrogate {

ModelAverage::ModelAverage(std::shared_ptr<const TaskPosterior> first, std::shared_ptr<const TaskPosterior> second,
                           double weight)
    : TaskPosterior(first->standardization()), first_(std::move(first)), second_(std::move(second)), weight_(weight) {}

Posterior ModelAverage::predict(const Eigen::MatrixXd& X) const {
  const Posterior a = first_->predict(X), b = second_->predict(X);
  const double w = weight_;
  Posterior p;
  p.mean = w * a.mean + (1 - w) * b.mean;
  const Eigen::ArrayXd second_moment =
      w * (a.var.array() + a.mean.array().square()) + (1 - w) * (b.var.array() + b.mean.array().square());
  p.var = (second_moment - p.mean.array().square()).cwiseMax(1e-12).matrix();
  return p;
}

PointPosterior ModelAverage::predict_with_gradient(const Eigen::VectorXd& x) const {
  const PointPosterior a = first_->predict_with_gradient(x), b = second_->predict_with_gradient(x);
  const double w = weight_;
  PointPosterior p;
  p.mean = w * a.mean + (1 - w) * b.mean;
  p.d_mean = w * a.d_mean + (1 - w) * b.d_mean;
  const double second_moment = w * (a.var + a.mean * a.mean) + (1 - w) * (b.var + b.mean * b.mean);
  p.var = std::max(second_moment - p.mean * p.mean, 1e-12);
  p.d_var = w * (a.d_var + 2 * a.mean * a.d_mean) + (1 - w) * (b.d_var + 2 * b.mean * b.d_mean) - 2 * p.mean * p.d_mean;
  return p;
}

std::shared_ptr<const TaskPosterior> ModelAverage::condition(const Eigen::MatrixXd& X, const Eigen::VectorXd* y) const {
  // Hallucinated points (y null) stay at each model's own mean, so the average's mean stays too.
  return std::make_shared<ModelAverage>(first_->condition(X, y), second_->condition(X, y), weight_);
}

namespace {

class AverageTracked final : public TrackedPosterior {
 public:
  AverageTracked(std::unique_ptr<TrackedPosterior> first, std::unique_ptr<TrackedPosterior> second, double weight)
      : first_(std::move(first)), second_(std::move(second)), weight_(weight) {
    combine();
  }

  double mean_at(const Eigen::VectorXd& x) const override {
    return weight_ * first_->mean_at(x) + (1 - weight_) * second_->mean_at(x);
  }

  int add(const Eigen::VectorXd& x, const double* y) override {
    const double value = y != nullptr ? *y : mean_at(x);
    const int index = first_->add(x, &value);
    second_->add(x, &value);
    combine();
    return index;
  }

  void set_value(int index, double y) override {
    first_->set_value(index, y);
    second_->set_value(index, y);
    combine();
  }

 private:
  // As ModelAverage::predict.
  void combine() {
    const Posterior& a = first_->at_points();
    const Posterior& b = second_->at_points();
    const double w = weight_;
    current_.mean = w * a.mean + (1 - w) * b.mean;
    const Eigen::ArrayXd second_moment =
        w * (a.var.array() + a.mean.array().square()) + (1 - w) * (b.var.array() + b.mean.array().square());
    current_.var = (second_moment - current_.mean.array().square()).cwiseMax(1e-12).matrix();
  }

  std::unique_ptr<TrackedPosterior> first_, second_;
  double weight_;
};

}  // namespace

std::unique_ptr<TrackedPosterior> ModelAverage::track(const Eigen::MatrixXd& C) const {
  return std::make_unique<AverageTracked>(first_->track(C), second_->track(C), weight_);
}

TransferGp::TransferGp(std::unique_ptr<Surrogate> inner, Options options)
    : inner_(std::move(inner)), options_(options), plain_(options.gp), gps_(options.gp) {}

std::shared_ptr<const TaskPosterior> TransferGp::mean_of(const Function& f) const {
  return f.gp ? plain_.posterior(f.task) : inner_->posterior(f.task);
}

std::shared_ptr<const TaskPosterior> TransferGp::function(const Function& f) const {
  auto p = mean_of(f);
  if (!p) throw NumericalError("transfer: task " + std::to_string(f.task) + " of a basis has no posterior");
  return p;
}

std::shared_ptr<const MeanBasis> TransferGp::basis_of(const std::vector<Function>& functions) const {
  if (functions.empty()) return nullptr;
  std::vector<std::shared_ptr<const TaskPosterior>> means = means_of(functions);
  for (std::size_t i = 0; i < means.size(); ++i) {
    if (!means[i]) function(functions[i]);  // throws: a basis function must have a posterior
  }
  return std::make_shared<MeanBasis>(std::move(means));
}

void TransferGp::fit(const TaskData& data, std::uint64_t seed) {
  try {
    inner_->fit(data, seed);
  } catch (const NumericalError&) {
    // Each task's GPs need only its own data: a failed inner fit leaves the inner model at its
    // last good posteriors, which serve as bases, and must not cost the task its refit.
  }
  plain_.fit(data, seed);
  const std::size_t tasks = data.tasks.size();
  std::vector<int> related;  // tasks with enough observations for their means to be basis functions
  std::vector<int> finished_related;  // of those, the finished ones: a finished task's basis
  const auto finished = [&](std::size_t j) { return j < data.finished.size() && data.finished[j]; };
  for (std::size_t j = 0; j < tasks; ++j) {
    if (data.tasks[j].y.size() < options_.min_basis_observations) continue;
    related.push_back(static_cast<int>(j));
    if (finished(j)) finished_related.push_back(static_cast<int>(j));
  }
  // A task whose observations did not change keeps its θ and the tasks of its basis (a finished
  // task of a lifelong run is not refitted with every result of the open one); GpSurrogate
  // refits exactly the others. Its posterior is rebuilt on its basis tasks' current means when
  // one of them changed (a Cholesky, no optimization): so it is always a function of the saved
  // state and the data, and a run resumed from a checkpoint proposes as the uninterrupted one.
  std::vector<std::vector<Function>> candidates(tasks);
  std::vector<char> refit(tasks, 0), rebase(tasks, 0);
  GpSurrogate::Bases bases(tasks);
  for (std::size_t t = 0; t < tasks; ++t) {
    const auto n = static_cast<std::int64_t>(data.tasks[t].y.size());
    if (n == 0) continue;
    if (gps_.fitted_size(static_cast<int>(t)) == n && gps_.posterior(static_cast<int>(t))) {
      if (t < basis_.size() && !basis_[t].empty() && means_changed(t)) {
        rebase[t] = 1;
        bases[t] = basis_of(basis_[t]);
      }
      continue;
    }
    refit[t] = 1;
    // A finished task (a warm-start one: thousands of results) leans on finished tasks only,
    // whose means do not move: else it would be rebuilt at every fit of an open one.
    candidates[t] = choose_basis(static_cast<int>(t), data.tasks[t], finished(t) ? finished_related : related);
    bases[t] = basis_of(candidates[t]);
  }
  // A task without a basis is its plain GP alone: gps_ does not fit that again (such a task is
  // looked at anew at every fit, and gets a basis once a related task has enough trials).
  TaskData with_basis;
  with_basis.tasks.reserve(tasks);
  for (std::size_t t = 0; t < tasks; ++t) {
    with_basis.tasks.push_back(refit[t] != 0 && candidates[t].empty() ? Observations{} : data.tasks[t]);
  }
  gps_.fit(with_basis, seed, bases, rebase);
  basis_.resize(std::max(basis_.size(), tasks));
  means_.resize(basis_.size());
  for (std::size_t t = 0; t < tasks; ++t) {
    if (refit[t] != 0) basis_[t] = std::move(candidates[t]);
    if (refit[t] != 0 || rebase[t] != 0) {
      means_[t] = means_of(basis_[t]);
      refit[t] = 1;
    }
  }
  average(refit);
}

std::vector<std::shared_ptr<const TaskPosterior>> TransferGp::means_of(const std::vector<Function>& functions) const {
  std::vector<std::shared_ptr<const TaskPosterior>> means;
  for (const Function& f : functions) means.push_back(mean_of(f));
  return means;
}

// A changed function that has no posterior (a failed inner fit drops none, but a restored
// state may lack one) leaves the task as it was.
bool TransferGp::means_changed(std::size_t task) const {
  const std::vector<std::shared_ptr<const TaskPosterior>> now = means_of(basis_[task]);
  if (std::any_of(now.begin(), now.end(), [](const auto& p) { return p == nullptr; })) return false;
  return task >= means_.size() || now != means_[task];
}

std::vector<TransferGp::Function> TransferGp::choose_basis(int task, const Observations& data,
                                                          const std::vector<int>& related) const {
  // Most recent task first, its plain-GP mean before its inner one.
  std::vector<Function> pool;
  for (auto j = related.rbegin(); j != related.rend(); ++j) {
    if (*j == task) continue;
    pool.push_back({*j, true});
    if (inner_->posterior(*j)) pool.push_back({*j, false});
  }
  const auto keep = static_cast<std::size_t>(std::max(options_.max_basis, 0));
  if (pool.size() > keep) {
    if (data.y.size() >= 3) {
      // With enough points to tell: by how well each mean tracks y.
      const Eigen::VectorXd y = data.y.array() - data.y.mean();
      std::vector<double> score(pool.size());
      for (std::size_t i = 0; i < pool.size(); ++i) {
        const Eigen::VectorXd g = function(pool[i])->predict(data.X).mean;
        const Eigen::VectorXd c = g.array() - g.mean();
        const double norms = c.norm() * y.norm();
        score[i] = norms > 0 ? std::abs(c.dot(y)) / norms : 0.0;
      }
      std::vector<std::size_t> order(pool.size());
      for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return score[a] > score[b]; });
      std::vector<Function> ranked;
      for (std::size_t i : order) ranked.push_back(pool[i]);
      pool = std::move(ranked);
    }
    pool.resize(keep);
  }
  std::sort(pool.begin(), pool.end());
  return pool;
}

double TransferGp::basis_weight(int task) const {
  if (task < 0 || task >= static_cast<int>(basis_.size()) || basis_[static_cast<std::size_t>(task)].empty()) return 0.0;
  // The evidences are each model's maximized log marginal likelihood plus log prior; equal prior
  // odds. The basis model's extra hyperparameter carries its own prior, a mild Occam penalty.
  const double with = gps_.log_evidence(task), without = plain_.log_evidence(task);
  if (!std::isfinite(with)) return 0.0;
  if (!std::isfinite(without)) return 1.0;
  return 1.0 / (1.0 + std::exp(std::clamp(without - with, -700.0, 700.0)));
}

void TransferGp::average(const std::vector<char>& changed) {
  posteriors_.resize(std::max(posteriors_.size(), changed.size()));
  for (std::size_t t = 0; t < changed.size(); ++t) {
    if (changed[t] == 0) continue;
    const int task = static_cast<int>(t);
    auto plain = plain_.posterior(task), with = gps_.posterior(task);
    const double w = basis_weight(task);
    // A weight this close to 0 or 1 changes no proposal; one model is then half the work.
    if (!with || w < 1e-6) {
      posteriors_[t] = std::move(plain);
    } else if (!plain || w > 1 - 1e-6) {
      posteriors_[t] = std::move(with);
    } else {
      posteriors_[t] = std::make_shared<ModelAverage>(std::move(with), std::move(plain), w);
    }
  }
}

std::shared_ptr<const TaskPosterior> TransferGp::posterior(int task) const { return task_posterior(posteriors_, task); }

std::vector<int> TransferGp::basis_tasks(int task) const {
  std::vector<int> out;
  if (task < 0 || task >= static_cast<int>(basis_.size())) return out;
  for (const Function& f : basis_[static_cast<std::size_t>(task)]) out.push_back(f.task);
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

SurrogateState TransferGp::state() const {
  SurrogateState s = inner_->state();
  TransferState transfer;
  transfer.gp = *gps_.state().gp;
  transfer.plain = *plain_.state().gp;
  for (const auto& functions : basis_) {
    transfer.basis.emplace_back();
    transfer.gp_basis.emplace_back();
    for (const Function& f : functions) (f.gp ? transfer.gp_basis : transfer.basis).back().push_back(f.task);
  }
  s.transfer = std::move(transfer);
  return s;
}

void TransferGp::restore(const SurrogateState& state, const TaskData& data) {
  if (!state.transfer) throw NumericalError("transfer: the saved state has no transfer GPs");
  if (!state.transfer->plain) throw NumericalError("transfer: the saved state predates model averaging");
  const TransferState& saved = *state.transfer;
  inner_->restore(state, data);
  plain_.restore(*saved.plain, data, {});
  std::vector<std::vector<Function>> basis(std::max({saved.basis.size(), saved.gp_basis.size(), data.tasks.size()}));
  for (std::size_t t = 0; t < basis.size(); ++t) {
    for (const bool gp : {false, true}) {
      const auto& tasks = gp ? saved.gp_basis : saved.basis;
      if (t >= tasks.size()) continue;
      for (int j : tasks[t]) {
        if (j < 0 || static_cast<std::size_t>(j) >= data.tasks.size() || static_cast<std::size_t>(j) == t) {
          throw NumericalError("transfer: task " + std::to_string(t) + " has a saved basis task out of range");
        }
        basis[t].push_back({j, gp});
      }
    }
    std::sort(basis[t].begin(), basis[t].end());
  }
  GpSurrogate::Bases bases(basis.size());
  for (std::size_t t = 0; t < basis.size(); ++t) bases[t] = basis_of(basis[t]);
  gps_.restore(saved.gp, data, bases);
  basis_ = std::move(basis);
  means_.clear();
  for (const std::vector<Function>& functions : basis_) means_.push_back(means_of(functions));
  posteriors_.clear();
  average(std::vector<char>(basis_.size(), 1));
}

}  // namespace lbo::surrogate
