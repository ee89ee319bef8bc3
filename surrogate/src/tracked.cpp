// The generic TrackedPosterior: condition anew and predict at every change. Exact, and what a
// posterior without a cheaper update (a feature model's Bayesian linear regression) uses.

#include <vector>

#include "lbo/surrogate/linalg.hpp"
#include "lbo/surrogate/posterior.hpp"

namespace lbo::surrogate {

namespace {

class Reconditioned final : public TrackedPosterior {
 public:
  Reconditioned(std::shared_ptr<const TaskPosterior> posterior, const Eigen::MatrixXd& C)
      : base_(std::move(posterior)), current_posterior_(base_), C_(C) {
    current_ = base_->predict(C_);
  }

  double mean_at(const Eigen::VectorXd& x) const override { return current_posterior_->predict(x.transpose()).mean(0); }

  int add(const Eigen::VectorXd& x, const double* y) override {
    const double value = y != nullptr ? *y : mean_at(x);
    points_.push_back(x);
    values_.push_back(value);
    update();
    return static_cast<int>(points_.size()) - 1;
  }

  void set_value(int index, double y) override {
    values_[static_cast<std::size_t>(index)] = y;
    update();
  }

 private:
  void update() {
    const Eigen::VectorXd y = Eigen::Map<const Eigen::VectorXd>(values_.data(), static_cast<Eigen::Index>(values_.size()));
    current_posterior_ = base_->condition(stack_rows(points_, static_cast<int>(C_.cols())), &y);
    current_ = current_posterior_->predict(C_);
  }

  std::shared_ptr<const TaskPosterior> base_, current_posterior_;
  Eigen::MatrixXd C_;
  std::vector<Eigen::VectorXd> points_;
  std::vector<double> values_;
};

}  // namespace

std::unique_ptr<TrackedPosterior> TaskPosterior::track(const Eigen::MatrixXd& C) const {
  // A posterior is always held by a shared_ptr (condition() returns one): share it.
  return std::make_unique<Reconditioned>(shared_from_this(), C);
}

}  // namespace lbo::surrogate
