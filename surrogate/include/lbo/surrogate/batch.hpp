#pragma once
// Batches of points for parallel slots: the acquisition's maximizer, then the maximizer again
// with that point hallucinated at the posterior mean, and so on (GP-BUCB: Desautels, Krause &
// Burdick, "Parallelizing exploration–exploitation tradeoffs in Gaussian process bandit
// optimization", JMLR 15, 2014; the "kriging believer" of Ginsbourger, Le Riche & Carraro,
// 2010). A hallucinated point keeps the mean and shrinks the variance around it, so a batch
// spreads out over the candidates parallel slots should try, while each point is still the
// best the model sees given the others; the trials already running are hallucinated the same
// way. The candidates are scored once per batch, and then kept up to date point by point
// (TrackedPosterior: O(m² + m n) per point rather than O(m² n)); L-BFGS-B refines the best of
// them on the conditioned posterior when the caller can afford it. As in the kriging
// believer, a hallucinated value counts as observed: EI and PI measure improvement over the best
// of the incumbent and the batch's believed values (else a point whose mean is above the
// incumbent keeps its improvement however certain it becomes, and the batch repeats it).
//
// A posterior with a guide (TaskPosterior::guide(), JUMBO's warm GP) is maximized as JUMBO's
// acquisition (Hakhamaneshi et al., "JUMBO: Scalable Multi-task Bayesian Optimization using
// Offline Data", eq. 2 and Algorithm 1): α(x) = α_main(x) where α*_guide − α_guide(x) ≤ l_α,
// α_guide(x) elsewhere. Method: the guide's acquisition is maximized first (candidates, then
// L-BFGS-B as for any acquisition), which gives α*_guide and its maximizer x*; then the main
// acquisition over the candidates inside the threshold set and x*, refined by L-BFGS-B with a
// penalty for leaving the set (a refined point that ends outside it is dropped). Points outside
// the set follow, ranked by α_guide: the paper's α there, and below every point inside as long
// as α_main there is above α*_guide − l_α. The guide tracks the batch as the main posterior
// does, each believing hallucinated points at its own mean (GP-BUCB in both GPs).
//
// Points being evaluated that the posterior is not conditioned on (the caller's choice:
// thousands of running trials would cost each next point O(m² + m n) for m of them) are
// penalized instead (LocalPenalty): the acquisition at and around them is lowered, at O(n d)
// per point. The penalty applies to the candidates' scores and to the refinement; with a
// guide, to the main acquisition.

#include <Eigen/Core>
#include <cstdint>
#include <memory>
#include <vector>

#include "lbo/surrogate/acquisition.hpp"
#include "lbo/surrogate/feasibility.hpp"
#include "lbo/surrogate/local_penalty.hpp"
#include "lbo/surrogate/maximizer.hpp"
#include "lbo/surrogate/posterior.hpp"

namespace lbo::surrogate {

class BatchProposer {
 public:
  /// `posterior`: the task's (conditioned on its results); `pending`: p × d points being
  /// evaluated now, believed at the mean (indices 0 … p−1). The candidates every next() scores
  /// are fixed here: candidate_points(space, options, seed, starts). `space` must outlive this.
  BatchProposer(std::shared_ptr<const TaskPosterior> posterior, const Eigen::MatrixXd& pending,
                const EncodedSpace& space, const MaximizerOptions& options, std::uint64_t seed,
                const std::vector<Eigen::VectorXd>& starts = {});
  /// As above on the given candidates (rows, canonical points of `space`) instead of drawn
  /// ones: a finite set of configurations, such as a table's rows (with options.refine = 0,
  /// next() ranks exactly these).
  BatchProposer(std::shared_ptr<const TaskPosterior> posterior, const Eigen::MatrixXd& pending,
                const EncodedSpace& space, const MaximizerOptions& options, Eigen::MatrixXd candidates);

  /// The maxima of acquisition `kind` given the pending points, the batch so far and the
  /// results that came in for them, best first (the caller takes the first it can use and passes
  /// it to accept()). The candidates are scored from the tracked posterior; unless `refine` is
  /// none, the best options.refine of them are refined by L-BFGS-B on the conditioned posterior
  /// (a brief refinement stops on progress, kBriefProgress).
  /// `params.incumbent` is raised to the best value still believed. With a guide: the maxima of
  /// JUMBO's acquisition (above), the threshold set's first.
  /// `keep` > 0: only the best `keep` distinct candidates are ranked and returned (MaximizerOptions::keep).
  std::vector<Maximum> next(AcquisitionKind kind, const AcquisitionParams& params, Refinement refine = Refinement::full,
                           int keep = 0) const;
  /// x (length d) joins the batch, believed at the posterior mean. Returns its index.
  int accept(const Eigen::VectorXd& x);
  /// The result of point `index` came in: y (standardized) replaces its believed value. The
  /// other believed values stay as they were believed (the kriging believer).
  void observe(int index, double y);
  /// The best value still believed (−∞ when none is).
  double believed_best() const;
  /// X (p × d): points being evaluated that the posterior is not conditioned on keep later
  /// maxima out of their neighbourhood (LocalPenalty), at the posterior's mean and standard
  /// deviation there. `best`: the best value so far (M).
  void penalize(const Eigen::MatrixXd& X, double best);
  /// Points penalized so far.
  int penalized() const { return penalty_.size(); }
  /// From now on the acquisition is weighed by the model's weight for `task` (a FeasibilityModel:
  /// failures, limits, or both; its log_weight, the probability of success unless it says
  /// otherwise): a value v becomes v·p where v ≥ 0, v/p below (LocalPenalty::apply), as
  /// constrained EI weighs EI by the probability of feasibility (Gardner et al. 2014). The same
  /// model and task again: nothing to do; null: no weight.
  void weigh_feasibility(std::shared_ptr<const FeasibilityModel> feasibility, int task);
  /// The log weight at each candidate (zeros without a feasibility model).
  const Eigen::VectorXd& log_feasibility_at_candidates() const { return log_feasible_; }
  /// The Lipschitz constant of the posterior mean the penalties use: the largest ‖∇μ‖ at the
  /// first kLipschitzPoints candidates (quasi-random: spread over the box), as González et al.
  /// estimate it from the mean's gradient; at least kMinLipschitz.
  double lipschitz() const;
  static constexpr int kLipschitzPoints = 64;
  static constexpr double kMinLipschitz = 1e-3;

  /// The posterior given the pending points and the batch so far, at their values.
  std::shared_ptr<const TaskPosterior> conditioned() const;
  /// Points accepted so far (not counting the pending ones it started with).
  int size() const { return static_cast<int>(points_.size()) - pending_; }
  /// Every point the posterior is conditioned on beyond its own: pending, accepted (m of the
  /// O(m² + m n) an accept() costs).
  int points() const { return static_cast<int>(points_.size()); }
  /// Candidates not yet accepted or penalized (such a candidate ranks last in next()).
  int candidates_left() const { return left_; }

 private:
  std::shared_ptr<const TaskPosterior> posterior_;
  const EncodedSpace* space_;
  MaximizerOptions options_;
  Eigen::MatrixXd candidates_;
  std::unique_ptr<TrackedPosterior> tracked_;  // the posterior at candidates_, given points_
  Posterior base_at_candidates_;  // the posterior at candidates_ before any point (penalize's moments)
  std::vector<Eigen::VectorXd> points_;
  std::vector<double> values_;
  std::vector<bool> believed_;
  std::vector<char> used_;  // per candidate: accepted
  int left_ = 0;
  int pending_ = 0;
  LocalPenalty penalty_;       // at candidates_
  std::shared_ptr<const FeasibilityModel> feasibility_;  // null: no weight
  int feasibility_task_ = 0;
  Eigen::VectorXd log_feasible_;  // at candidates_
  // The log of what multiplies the acquisition at x: the penalty's and the feasibility's, with
  // its gradient when asked.
  double log_weight_at(const Eigen::VectorXd& x, Eigen::VectorXd* gradient = nullptr) const;
  mutable double lipschitz_ = 0;  // 0: not yet estimated
  void mark_used(const Eigen::VectorXd& x);  // a candidate equal to x ranks last from now on
  Eigen::Index candidate_index(const Eigen::VectorXd& x) const;  // the first candidate equal to x; -1: none
  // `objective` with the penalty applied (itself when nothing is penalized).
  BoxObjective penalized(BoxObjective objective) const;
  mutable std::shared_ptr<const TaskPosterior> conditioned_;  // materialized on demand

  // The guide (none: guide.posterior is null), tracked at candidates_ as the main posterior is.
  struct GuideTrack {
    Guide guide;
    std::unique_ptr<TrackedPosterior> tracked;
    std::vector<double> values;  // per point, as values_ (its own believed means)
    mutable std::shared_ptr<const TaskPosterior> conditioned;
  };
  GuideTrack guide_;
  std::shared_ptr<const TaskPosterior> guide_conditioned() const;
  std::vector<Maximum> guide_maxima(AcquisitionKind kind, const AcquisitionParams& main, const MaximizerOptions& options,
                                    Eigen::VectorXd& values, std::shared_ptr<const Acquisition>& acquisition) const;
  std::vector<Maximum> next_guided(AcquisitionKind kind, const AcquisitionParams& main, const Eigen::VectorXd& values,
                                   const MaximizerOptions& options) const;
};

}  // namespace lbo::surrogate
