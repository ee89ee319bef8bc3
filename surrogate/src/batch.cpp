#include "lbo/surrogate/batch.hpp"

#include <algorithm>
#include <limits>

namespace lbo::surrogate {

BatchProposer::BatchProposer(std::shared_ptr<const TaskPosterior> posterior, const Eigen::MatrixXd& pending)
    : conditioned_(pending.rows() > 0 ? posterior->condition(pending, nullptr) : std::move(posterior)),
      believed_best_(pending.rows() > 0 ? conditioned_->predict(pending).mean.maxCoeff() : -std::numeric_limits<double>::infinity()) {}

std::vector<Maximum> BatchProposer::next(AcquisitionKind kind, const AcquisitionParams& params, const EncodedSpace& space,
                                         const MaximizerOptions& options, std::uint64_t seed,
                                         const std::vector<Eigen::VectorXd>& starts) const {
  AcquisitionParams believing = params;
  believing.incumbent = std::max(params.incumbent, believed_best_);
  auto acquisition = std::make_shared<Acquisition>(kind, believing, conditioned_);
  BoxObjective objective;
  objective.values = [acquisition](const Eigen::MatrixXd& X) { return acquisition->evaluate(X); };
  objective.gradient = [acquisition](const Eigen::VectorXd& x, Eigen::VectorXd& g) { return acquisition->evaluate(x, g); };
  return maximize(objective, space, options, seed, starts);
}

void BatchProposer::accept(const Eigen::VectorXd& x) {
  believed_best_ = std::max(believed_best_, conditioned_->predict(x.transpose()).mean(0));
  conditioned_ = conditioned_->condition(x.transpose(), nullptr);
  ++accepted_;
}

}  // namespace lbo::surrogate
