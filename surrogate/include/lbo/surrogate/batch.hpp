#pragma once
// Batches of points for parallel slots: the acquisition's maximizer, then the maximizer again
// with that point hallucinated at the posterior mean, and so on (GP-BUCB: Desautels, Krause &
// Burdick, "Parallelizing exploration–exploitation tradeoffs in Gaussian process bandit
// optimization", JMLR 15, 2014; the "kriging believer" of Ginsbourger, Le Riche & Carraro,
// 2010). A hallucinated point keeps the mean and shrinks the variance around it, so a batch
// spreads out over the candidates parallel slots should try, while each point is still the
// best the model sees given the others; the trials already running are hallucinated the same
// way. The posterior is conditioned once per batch, then one point at a time. As in the kriging
// believer, a hallucinated value counts as observed: EI and PI measure improvement over the best
// of the incumbent and the batch's believed values (else a point whose mean is above the
// incumbent keeps its improvement however certain it becomes, and the batch repeats it).

#include <Eigen/Core>
#include <cstdint>
#include <memory>
#include <vector>

#include "lbo/surrogate/acquisition.hpp"
#include "lbo/surrogate/maximizer.hpp"
#include "lbo/surrogate/posterior.hpp"

namespace lbo::surrogate {

class BatchProposer {
 public:
  /// `posterior`: the task's (conditioned on its results); `pending`: p × d points being
  /// evaluated now, hallucinated.
  BatchProposer(std::shared_ptr<const TaskPosterior> posterior, const Eigen::MatrixXd& pending);

  /// The maxima of acquisition `kind` over `space` given the pending points and the batch so
  /// far, best first (the caller takes the first it can use and passes it to accept()).
  /// `params.incumbent` is raised to the best believed value so far. `starts`: extra
  /// candidates, e.g. the best observations.
  std::vector<Maximum> next(AcquisitionKind kind, const AcquisitionParams& params, const EncodedSpace& space,
                            const MaximizerOptions& options, std::uint64_t seed,
                            const std::vector<Eigen::VectorXd>& starts = {}) const;
  /// x (length d) joins the batch: hallucinated at the posterior mean.
  void accept(const Eigen::VectorXd& x);
  /// The best value believed so far (the largest mean at which a point was hallucinated).
  double believed_best() const { return believed_best_; }

  /// The posterior given the pending points and the batch so far.
  const std::shared_ptr<const TaskPosterior>& conditioned() const { return conditioned_; }
  /// Points accepted so far.
  int size() const { return accepted_; }

 private:
  std::shared_ptr<const TaskPosterior> conditioned_;
  int accepted_ = 0;
  double believed_best_;
};

}  // namespace lbo::surrogate
