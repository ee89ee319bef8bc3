#include "lbo/surrogate/transfer.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "lbo/surrogate/linalg.hpp"

namespace lbo::surrogate {

TransferGp::TransferGp(std::unique_ptr<Surrogate> inner, Options options)
    : inner_(std::move(inner)), options_(options), gps_(options.gp) {}

std::shared_ptr<const MeanBasis> TransferGp::basis_of(const std::vector<int>& tasks) const {
  if (tasks.empty()) return nullptr;
  std::vector<std::shared_ptr<const TaskPosterior>> functions;
  for (int j : tasks) {
    auto p = inner_->posterior(j);
    if (!p) throw NumericalError("transfer: task " + std::to_string(j) + " of a basis has no posterior");
    functions.push_back(std::move(p));
  }
  return std::make_shared<MeanBasis>(std::move(functions));
}

void TransferGp::fit(const TaskData& data, std::uint64_t seed) {
  try {
    inner_->fit(data, seed);
  } catch (const NumericalError&) {
    // Each task's GP needs only its own data: a failed inner fit leaves the inner model at its
    // last good posteriors, which serve as the bases, and must not cost the task its refit.
  }
  const std::size_t tasks = data.tasks.size();
  std::vector<int> related;  // tasks with enough observations to be a basis function
  for (std::size_t j = 0; j < tasks; ++j) {
    if (data.tasks[j].y.size() >= options_.min_basis_observations && inner_->posterior(static_cast<int>(j))) {
      related.push_back(static_cast<int>(j));
    }
  }
  // A task whose observations did not change keeps its posterior and the basis it was fitted
  // with (a finished task of a lifelong run is not refitted with every result of the open one);
  // GpSurrogate refits exactly the others.
  std::vector<std::vector<int>> candidates(tasks);
  std::vector<char> refit(tasks, 0);
  GpSurrogate::Bases bases(tasks);
  for (std::size_t t = 0; t < tasks; ++t) {
    const auto n = static_cast<std::int64_t>(data.tasks[t].y.size());
    if (n == 0 || (gps_.fitted_size(static_cast<int>(t)) == n && gps_.posterior(static_cast<int>(t)))) continue;
    refit[t] = 1;
    candidates[t] = choose_basis(static_cast<int>(t), data.tasks[t], related);
    bases[t] = basis_of(candidates[t]);
  }
  gps_.fit(data, seed, bases);
  basis_.resize(std::max(basis_.size(), tasks));
  for (std::size_t t = 0; t < tasks; ++t) {
    if (refit[t] != 0) basis_[t] = std::move(candidates[t]);
  }
}

std::vector<int> TransferGp::choose_basis(int task, const Observations& data, const std::vector<int>& related) const {
  std::vector<int> others;
  std::copy_if(related.begin(), related.end(), std::back_inserter(others), [&](int j) { return j != task; });
  const auto keep = static_cast<std::size_t>(std::max(options_.max_basis, 0));
  if (others.size() > keep) {
    // Most recent first; then, with enough points to tell, by how well each mean tracks y.
    std::reverse(others.begin(), others.end());
    if (data.y.size() >= 3) {
      const Eigen::VectorXd y = data.y.array() - data.y.mean();
      std::vector<double> score(others.size());
      for (std::size_t i = 0; i < others.size(); ++i) {
        const Eigen::VectorXd g = inner_->posterior(others[i])->predict(data.X).mean;
        const Eigen::VectorXd c = g.array() - g.mean();
        const double norms = c.norm() * y.norm();
        score[i] = norms > 0 ? std::abs(c.dot(y)) / norms : 0.0;
      }
      std::vector<std::size_t> order(others.size());
      for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return score[a] > score[b]; });
      std::vector<int> ranked;
      for (std::size_t i : order) ranked.push_back(others[i]);
      others = std::move(ranked);
    }
    others.resize(keep);
    std::sort(others.begin(), others.end());
  }
  return others;
}

const std::vector<int>& TransferGp::basis_tasks(int task) const {
  static const std::vector<int> none;
  if (task < 0 || task >= static_cast<int>(basis_.size())) return none;
  return basis_[static_cast<std::size_t>(task)];
}

SurrogateState TransferGp::state() const {
  SurrogateState s = inner_->state();
  TransferState transfer;
  transfer.gp = *gps_.state().gp;
  transfer.basis = basis_;
  s.transfer = std::move(transfer);
  return s;
}

void TransferGp::restore(const SurrogateState& state, const TaskData& data) {
  if (!state.transfer) throw NumericalError("transfer: the saved state has no transfer GPs");
  inner_->restore(state, data);
  std::vector<std::vector<int>> basis = state.transfer->basis;
  GpSurrogate::Bases bases(basis.size());
  for (std::size_t t = 0; t < basis.size(); ++t) {
    for (int j : basis[t]) {
      if (j < 0 || static_cast<std::size_t>(j) >= data.tasks.size() || static_cast<std::size_t>(j) == t) {
        throw NumericalError("transfer: task " + std::to_string(t) + " has a saved basis task out of range");
      }
    }
    bases[t] = basis_of(basis[t]);
  }
  gps_.restore(state.transfer->gp, data, bases);
  basis_ = std::move(basis);
}

}  // namespace lbo::surrogate
