#include "lbo/surrogate/batch.hpp"

#include <algorithm>
#include <limits>

#include "lbo/surrogate/linalg.hpp"

namespace lbo::surrogate {

BatchProposer::BatchProposer(std::shared_ptr<const TaskPosterior> posterior, const Eigen::MatrixXd& pending,
                             const EncodedSpace& space, const MaximizerOptions& options, std::uint64_t seed,
                             const std::vector<Eigen::VectorXd>& starts)
    : posterior_(std::move(posterior)),
      space_(&space),
      options_(options),
      candidates_(candidate_points(space, options, seed, starts)),
      tracked_(posterior_->track(candidates_)),
      used_(static_cast<std::size_t>(candidates_.rows()), 0),
      left_(static_cast<int>(candidates_.rows())) {
  for (Eigen::Index i = 0; i < pending.rows(); ++i) accept(pending.row(i).transpose());
  pending_ = static_cast<int>(pending.rows());
}

std::vector<Maximum> BatchProposer::next(AcquisitionKind kind, const AcquisitionParams& params, bool refine) const {
  AcquisitionParams believing = params;
  believing.incumbent = std::max(params.incumbent, believed_best());
  const Posterior& at = tracked_->at_points();
  Eigen::VectorXd values(candidates_.rows());
  for (Eigen::Index i = 0; i < values.size(); ++i) {
    values(i) = used_[static_cast<std::size_t>(i)] ? -std::numeric_limits<double>::infinity()
                                                   : acquisition_value(kind, at.mean(i), at.var(i), believing).value;
  }
  MaximizerOptions options = options_;
  if (!refine) options.refine = 0;
  BoxObjective objective;
  if (options.refine > 0) {
    auto acquisition = std::make_shared<Acquisition>(kind, believing, conditioned());
    objective.values = [acquisition](const Eigen::MatrixXd& X) { return acquisition->evaluate(X); };
    objective.gradient = [acquisition](const Eigen::VectorXd& x, Eigen::VectorXd& g) { return acquisition->evaluate(x, g); };
  }
  return maximize_from(objective, *space_, options, candidates_, values);
}

int BatchProposer::accept(const Eigen::VectorXd& x) {
  const double mean = tracked_->mean_at(x);
  const int index = tracked_->add(x, &mean);
  points_.push_back(x);
  values_.push_back(mean);
  believed_.push_back(true);
  conditioned_.reset();
  for (Eigen::Index i = 0; i < candidates_.rows(); ++i) {
    if (!used_[static_cast<std::size_t>(i)] && candidates_.row(i) == x.transpose()) {
      used_[static_cast<std::size_t>(i)] = 1;
      --left_;
    }
  }
  return index;
}

void BatchProposer::observe(int index, double y) {
  const auto i = static_cast<std::size_t>(index);
  tracked_->set_value(index, y);
  values_[i] = y;
  believed_[i] = false;
  conditioned_.reset();
}

double BatchProposer::believed_best() const {
  double best = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < values_.size(); ++i) {
    if (believed_[i]) best = std::max(best, values_[i]);
  }
  return best;
}

std::shared_ptr<const TaskPosterior> BatchProposer::conditioned() const {
  if (conditioned_) return conditioned_;
  if (points_.empty()) return conditioned_ = posterior_;
  const Eigen::VectorXd y = Eigen::Map<const Eigen::VectorXd>(values_.data(), static_cast<Eigen::Index>(values_.size()));
  return conditioned_ = posterior_->condition(stack_rows(points_, static_cast<int>(candidates_.cols())), &y);
}

}  // namespace lbo::surrogate
