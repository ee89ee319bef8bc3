#include "lbo/surrogate/residual.hpp"

#include <utility>

namespace lbo::surrogate {

ResidualPosterior::ResidualPosterior(std::shared_ptr<const TaskPosterior> base,
                                     std::shared_ptr<const TaskPosterior> residual)
    : TaskPosterior(base->standardization()), base_(std::move(base)), residual_(std::move(residual)) {}

Posterior ResidualPosterior::predict(const Eigen::MatrixXd& X) const {
  Posterior b = base_->predict(X);
  const Posterior r = residual_->predict(X);
  const Standardization& s = residual_->standardization();
  b.mean += s.invert(r.mean);
  b.var += s.invert_variance(r.var);
  return b;
}

PointPosterior ResidualPosterior::predict_with_gradient(const Eigen::VectorXd& x) const {
  PointPosterior b = base_->predict_with_gradient(x);
  const PointPosterior r = residual_->predict_with_gradient(x);
  const Standardization& s = residual_->standardization();
  b.mean += s.invert(r.mean);
  b.var += s.invert_variance(r.var);
  b.d_mean += s.scale * r.d_mean;
  b.d_var += s.invert_variance(r.d_var);
  return b;
}

std::shared_ptr<const TaskPosterior> ResidualPosterior::condition(const Eigen::MatrixXd& X, const Eigen::VectorXd* y) const {
  if (y == nullptr) return std::make_shared<ResidualPosterior>(base_, residual_->condition(X, nullptr));
  const Standardization& s = residual_->standardization();
  const Eigen::VectorXd r = s.apply(*y - base_->predict(X).mean);
  return std::make_shared<ResidualPosterior>(base_, residual_->condition(X, &r));
}

namespace {

class ResidualTracked final : public TrackedPosterior {
 public:
  ResidualTracked(std::shared_ptr<const TaskPosterior> base, const TaskPosterior& residual, const Eigen::MatrixXd& C)
      : base_(std::move(base)), residual_(residual.track(C)), s_(residual.standardization()), at_C_(base_->predict(C)) {
    combine();
  }

  // The means here sum as (base + offset) + scale·r, not base + s_.invert(r): the rounding
  // differs, and a batch's hallucinated values (so its proposals) must stay as they were.
  double mean_at(const Eigen::VectorXd& x) const override {
    return base_->predict(x.transpose()).mean(0) + s_.offset + s_.scale * residual_->mean_at(x);
  }

  int add(const Eigen::VectorXd& x, const double* y) override {
    const double base = base_->predict(x.transpose()).mean(0);
    base_means_.push_back(base);
    double r = 0;
    if (y != nullptr) r = s_.apply(*y - base);
    const int index = residual_->add(x, y != nullptr ? &r : nullptr);
    combine();
    return index;
  }

  void set_value(int index, double y) override {
    residual_->set_value(index, s_.apply(y - base_means_[static_cast<std::size_t>(index)]));
    combine();
  }

 private:
  void combine() {
    const Posterior& r = residual_->at_points();
    current_.mean = (at_C_.mean.array() + s_.offset + s_.scale * r.mean.array()).matrix();
    current_.var = at_C_.var + s_.invert_variance(r.var);
  }

  std::shared_ptr<const TaskPosterior> base_;
  std::unique_ptr<TrackedPosterior> residual_;
  Standardization s_;
  Posterior at_C_;
  std::vector<double> base_means_;  // the base's mean at each added point
};

}  // namespace

std::unique_ptr<TrackedPosterior> ResidualPosterior::track(const Eigen::MatrixXd& C) const {
  return std::make_unique<ResidualTracked>(base_, *residual_, C);
}

namespace {

// Residuals stay in the task's standardized units: standardized by their own spread (small,
// as the features fit their data closely), the GP's amplitude would shrink with them and it
// would again be sure of itself away from the data.
GaussianProcess::Options unstandardized(GaussianProcess::Options options) {
  options.standardize = false;
  return options;
}

}  // namespace

ResidualGp::ResidualGp(std::unique_ptr<Surrogate> base, GaussianProcess::Options options)
    : base_(std::move(base)), residual_(unstandardized(options)) {}

TaskData ResidualGp::residuals(const TaskData& data) const {
  TaskData r;
  for (std::size_t t = 0; t < data.tasks.size(); ++t) {
    const Observations& o = data.tasks[t];
    const auto p = base_->posterior(static_cast<int>(t));
    if (!p || o.y.size() == 0) {
      r.tasks.push_back({Eigen::MatrixXd(0, o.X.cols()), Eigen::VectorXd()});
      continue;
    }
    const Standardization& s = p->standardization();
    const Eigen::VectorXd z = s.apply(o.y);
    r.tasks.push_back({o.X, z - p->predict(o.X).mean});
  }
  return r;
}

// A task whose base and residual posteriors are the ones combined last keeps its combined
// posterior, the same object: TransferGp tells by identity whether a basis function changed.
void ResidualGp::combine(std::size_t tasks) {
  posteriors_.resize(tasks);
  parts_.resize(tasks);
  for (std::size_t t = 0; t < tasks; ++t) {
    auto base = base_->posterior(static_cast<int>(t));
    auto residual = residual_.posterior(static_cast<int>(t));
    if (posteriors_[t] && parts_[t].first == base && parts_[t].second == residual) continue;
    if (base && residual) {
      posteriors_[t] = std::make_shared<ResidualPosterior>(base, residual);
    } else {
      posteriors_[t] = base;
    }
    parts_[t] = {std::move(base), std::move(residual)};
  }
}

void ResidualGp::fit(const TaskData& data, std::uint64_t seed) {
  base_->fit(data, seed);
  residual_.fit(residuals(data), seed ^ 0x9e51du);
  combine(data.tasks.size());
}

std::shared_ptr<const TaskPosterior> ResidualGp::posterior(int task) const { return task_posterior(posteriors_, task); }

SurrogateState ResidualGp::state() const {
  SurrogateState s = base_->state();
  s.gp = residual_.state().gp;
  return s;
}

void ResidualGp::restore(const SurrogateState& state, const TaskData& data) {
  base_->restore(state, data);
  const TaskData r = residuals(data);
  if (state.gp) {
    SurrogateState gp;
    gp.gp = state.gp;
    residual_.restore(gp, r);
  } else {
    residual_.fit(r, 0);  // a checkpoint of the bare model: fit the residuals now (cheap)
  }
  combine(data.tasks.size());
}

}  // namespace lbo::surrogate
