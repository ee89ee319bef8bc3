#include "lbo/surrogate/batch.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "lbo/surrogate/linalg.hpp"

namespace lbo::surrogate {

namespace {

// An acquisition as the maximizer's objective.
BoxObjective objective_of(const std::shared_ptr<const Acquisition>& acquisition) {
  BoxObjective objective;
  objective.values = [acquisition](const Eigen::MatrixXd& X) { return acquisition->evaluate(X); };
  objective.gradient = [acquisition](const Eigen::VectorXd& x, Eigen::VectorXd& g) { return acquisition->evaluate(x, g); };
  return objective;
}

}  // namespace

BatchProposer::BatchProposer(std::shared_ptr<const TaskPosterior> posterior, const Eigen::MatrixXd& pending,
                             const EncodedSpace& space, const MaximizerOptions& options, std::uint64_t seed,
                             const std::vector<Eigen::VectorXd>& starts)
    : BatchProposer(std::move(posterior), pending, space, options, candidate_points(space, options, seed, starts)) {}

BatchProposer::BatchProposer(std::shared_ptr<const TaskPosterior> posterior, const Eigen::MatrixXd& pending,
                             const EncodedSpace& space, const MaximizerOptions& options, Eigen::MatrixXd candidates)
    : posterior_(std::move(posterior)),
      space_(&space),
      options_(options),
      candidates_(std::move(candidates)),
      tracked_(posterior_->track(candidates_)),
      used_(static_cast<std::size_t>(candidates_.rows()), 0),
      left_(static_cast<int>(candidates_.rows())),
      penalty_(candidates_.rows()),
      log_feasible_(Eigen::VectorXd::Zero(candidates_.rows())) {
  base_at_candidates_ = tracked_->at_points();
  guide_.guide = posterior_->guide();
  if (guide_.guide.posterior) guide_.tracked = guide_.guide.posterior->track(candidates_);
  for (Eigen::Index i = 0; i < pending.rows(); ++i) accept(pending.row(i).transpose());
  pending_ = static_cast<int>(pending.rows());
}

std::vector<Maximum> BatchProposer::next(AcquisitionKind kind, const AcquisitionParams& params, Refinement refine,
                                         int keep) const {
  AcquisitionParams believing = params;
  believing.incumbent = std::max(params.incumbent, believed_best());
  const Posterior& at = tracked_->at_points();
  Eigen::VectorXd values(candidates_.rows());
  for (Eigen::Index i = 0; i < values.size(); ++i) {
    values(i) = used_[static_cast<std::size_t>(i)] ? -std::numeric_limits<double>::infinity()
                                                   : acquisition_value(kind, at.mean(i), at.var(i), believing).value;
  }
  if (penalty_.size() > 0 || feasibility_) {
    const Eigen::VectorXd& log_penalty = penalty_.log_at_candidates();
    for (Eigen::Index i = 0; i < values.size(); ++i) {
      values(i) = LocalPenalty::apply(values(i), log_penalty(i) + log_feasible_(i));
    }
  }
  MaximizerOptions options = options_;
  if (refine == Refinement::none) options.refine = 0;
  if (refine == Refinement::brief) options.progress = kBriefProgress;
  options.keep = keep;
  if (guide_.guide.posterior) return next_guided(kind, believing, values, options);
  BoxObjective objective;
  if (options.refine > 0) {
    objective = objective_of(std::make_shared<const Acquisition>(kind, believing, conditioned()));
  }
  return maximize_from(penalized(std::move(objective)), *space_, options, candidates_, values);
}

void BatchProposer::penalize(const Eigen::MatrixXd& X, double best) {
  if (X.rows() == 0) return;
  const double lipschitz = this->lipschitz();
  // A candidate's moments were known before any point joined (a proposal is usually one);
  // the other points are predicted, all at once.
  std::vector<Eigen::Index> candidate(static_cast<std::size_t>(X.rows())), others;
  for (Eigen::Index i = 0; i < X.rows(); ++i) {
    candidate[static_cast<std::size_t>(i)] = candidate_index(X.row(i).transpose());
    if (candidate[static_cast<std::size_t>(i)] < 0) others.push_back(i);
  }
  const Posterior predicted = others.empty() ? Posterior{} : posterior_->predict(X(others, Eigen::all));
  std::size_t next_predicted = 0;
  for (Eigen::Index i = 0; i < X.rows(); ++i) {
    const Eigen::Index c = candidate[static_cast<std::size_t>(i)];
    const Posterior& at = c >= 0 ? base_at_candidates_ : predicted;
    const Eigen::Index k = c >= 0 ? c : static_cast<Eigen::Index>(next_predicted++);
    const double radius = LocalPenalty::radius(at.mean(k), std::sqrt(at.var(k)), best, lipschitz);
    penalty_.add(candidates_, X.row(i).transpose(), radius);
    mark_used(X.row(i).transpose());
  }
}

double BatchProposer::lipschitz() const {
  if (lipschitz_ > 0) return lipschitz_;
  double largest = kMinLipschitz;
  const Eigen::Index n = std::min<Eigen::Index>(candidates_.rows(), kLipschitzPoints);
  for (Eigen::Index i = 0; i < n; ++i) {
    largest = std::max(largest, posterior_->predict_with_gradient(candidates_.row(i).transpose()).d_mean.norm());
  }
  return lipschitz_ = largest;
}

void BatchProposer::weigh_feasibility(std::shared_ptr<const FeasibilityModel> feasibility, int task) {
  if (feasibility == feasibility_ && task == feasibility_task_) return;
  feasibility_ = std::move(feasibility);
  feasibility_task_ = task;
  log_feasible_ = feasibility_ ? feasibility_->log_weights(candidates_, task)
                               : Eigen::VectorXd(Eigen::VectorXd::Zero(candidates_.rows()));
}

double BatchProposer::log_weight_at(const Eigen::VectorXd& x, Eigen::VectorXd* gradient) const {
  double log = penalty_.log_at(x, gradient);
  if (!feasibility_) return log;
  Eigen::VectorXd g_feasible;
  log += feasibility_->log_weight(x, feasibility_task_, gradient != nullptr ? &g_feasible : nullptr);
  if (gradient != nullptr) *gradient += g_feasible;
  return log;
}

BoxObjective BatchProposer::penalized(BoxObjective objective) const {
  if ((penalty_.size() == 0 && !feasibility_) || !objective.values) return objective;
  const BatchProposer* self = this;
  BoxObjective result;
  result.values = [self, values = objective.values](const Eigen::MatrixXd& X) {
    Eigen::VectorXd v = values(X);
    for (Eigen::Index i = 0; i < X.rows(); ++i) v(i) = LocalPenalty::apply(v(i), self->log_weight_at(X.row(i).transpose()));
    return v;
  };
  // d(v P) = P dv + v P d log P; d(v / P) = dv / P − (v / P) d log P.
  result.gradient = [self, gradient = objective.gradient](const Eigen::VectorXd& x, Eigen::VectorXd& g) {
    const double v = gradient(x, g);
    Eigen::VectorXd g_log;
    const double log = self->log_weight_at(x, &g_log);
    const double penalized = LocalPenalty::apply(v, log);
    if (!std::isfinite(log)) {
      g.setZero();
      return penalized;
    }
    const double p = std::exp(log);
    g = v >= 0 ? Eigen::VectorXd(p * g + penalized * g_log) : Eigen::VectorXd(g / p - penalized * g_log);
    return penalized;
  };
  return result;
}

int BatchProposer::accept(const Eigen::VectorXd& x) {
  const double mean = tracked_->mean_at(x);
  const int index = tracked_->add(x, &mean);
  if (guide_.tracked) {
    const double guide_mean = guide_.tracked->mean_at(x);
    guide_.tracked->add(x, &guide_mean);
    guide_.values.push_back(guide_mean);
    guide_.conditioned.reset();
  }
  points_.push_back(x);
  values_.push_back(mean);
  believed_.push_back(true);
  conditioned_.reset();
  mark_used(x);
  return index;
}

Eigen::Index BatchProposer::candidate_index(const Eigen::VectorXd& x) const {
  for (Eigen::Index i = 0; i < candidates_.rows(); ++i) {
    if (candidates_.row(i) == x.transpose()) return i;
  }
  return -1;
}

void BatchProposer::mark_used(const Eigen::VectorXd& x) {
  for (Eigen::Index i = 0; i < candidates_.rows(); ++i) {
    if (!used_[static_cast<std::size_t>(i)] && candidates_.row(i) == x.transpose()) {
      used_[static_cast<std::size_t>(i)] = 1;
      --left_;
    }
  }
}

void BatchProposer::observe(int index, double y) {
  const auto i = static_cast<std::size_t>(index);
  tracked_->set_value(index, y);
  if (guide_.tracked) {
    guide_.tracked->set_value(index, y);
    guide_.values[i] = y;
    guide_.conditioned.reset();
  }
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

namespace lbo::surrogate {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// JUMBO's refinement: the main acquisition's loss per unit of the guide's acquisition below the
// threshold set's cut-off.
constexpr double kPenalty = 1e3;

// The main acquisition, less a steep penalty for leaving the threshold set (L-BFGS-B needs a
// continuous objective; the set's indicator is not).
BoxObjective inside_objective(const std::shared_ptr<const Acquisition>& main,
                              const std::shared_ptr<const Acquisition>& guide, double cutoff) {
  BoxObjective objective;
  objective.values = [main, guide, cutoff](const Eigen::MatrixXd& P) {
    Eigen::VectorXd v = main->evaluate(P);
    if (std::isfinite(cutoff)) v.array() -= kPenalty * (cutoff - guide->evaluate(P).array()).max(0.0);
    return v;
  };
  objective.gradient = [main, guide, cutoff](const Eigen::VectorXd& x, Eigen::VectorXd& g) {
    double v = main->evaluate(x, g);
    if (!std::isfinite(cutoff)) return v;
    Eigen::VectorXd gg;
    const double shortfall = cutoff - guide->evaluate(x, gg);
    if (shortfall > 0) {
      v -= kPenalty * shortfall;
      g += kPenalty * gg;
    }
    return v;
  };
  return objective;
}

}  // namespace

std::shared_ptr<const TaskPosterior> BatchProposer::guide_conditioned() const {
  if (guide_.conditioned) return guide_.conditioned;
  if (points_.empty()) return guide_.conditioned = guide_.guide.posterior;
  const Eigen::VectorXd y =
      Eigen::Map<const Eigen::VectorXd>(guide_.values.data(), static_cast<Eigen::Index>(guide_.values.size()));
  return guide_.conditioned =
             guide_.guide.posterior->condition(stack_rows(points_, static_cast<int>(candidates_.cols())), &y);
}

// The guide's acquisition, with the guide's own believed values as its incumbent: its value at
// every candidate and its maxima (refined as options say); `acquisition` set when refining.
std::vector<Maximum> BatchProposer::guide_maxima(AcquisitionKind kind, const AcquisitionParams& main,
                                                 const MaximizerOptions& options, Eigen::VectorXd& values,
                                                 std::shared_ptr<const Acquisition>& acquisition) const {
  AcquisitionParams params = main;
  for (std::size_t i = 0; i < guide_.values.size(); ++i) {
    if (believed_[i]) params.incumbent = std::max(params.incumbent, guide_.values[i]);
  }
  const Posterior& at = guide_.tracked->at_points();
  values.resize(candidates_.rows());
  for (Eigen::Index i = 0; i < values.size(); ++i) {
    values(i) = used_[static_cast<std::size_t>(i)] ? -kInf : acquisition_value(kind, at.mean(i), at.var(i), params).value;
  }
  BoxObjective objective;
  if (options.refine > 0) {
    acquisition = std::make_shared<const Acquisition>(kind, params, guide_conditioned());
    objective = objective_of(acquisition);
  }
  return maximize_from(objective, *space_, options, candidates_, values);
}

std::vector<Maximum> BatchProposer::next_guided(AcquisitionKind kind, const AcquisitionParams& main,
                                                const Eigen::VectorXd& values, const MaximizerOptions& options) const {
  Eigen::VectorXd guide_values;
  std::shared_ptr<const Acquisition> guide_acquisition;
  const std::vector<Maximum> guided = guide_maxima(kind, main, options, guide_values, guide_acquisition);
  if (guided.empty() || !std::isfinite(guided.front().value)) return guided;
  const Maximum& best = guided.front();
  const double cutoff = best.value - guide_.guide.threshold;  // −∞ for an infinite threshold

  // The threshold set: its candidates and the guide's maximizer, scored by the main acquisition.
  std::vector<Eigen::Index> inside;
  for (Eigen::Index i = 0; i < guide_values.size(); ++i) {
    if (std::isfinite(guide_values(i)) && guide_values(i) >= cutoff) inside.push_back(i);
  }
  const auto scored = std::count_if(guide_values.begin(), guide_values.end(), [](double v) { return std::isfinite(v); });
  // Every candidate inside: the main acquisition's own maximization (l_α → ∞ is the main GP's
  // choice exactly). Otherwise x* joins: the one point known to be inside.
  const bool with_best = static_cast<Eigen::Index>(inside.size()) < scored;
  Eigen::MatrixXd X(static_cast<Eigen::Index>(inside.size()) + (with_best ? 1 : 0), candidates_.cols());
  Eigen::VectorXd main_values(X.rows());
  for (std::size_t k = 0; k < inside.size(); ++k) {
    X.row(static_cast<Eigen::Index>(k)) = candidates_.row(inside[k]);
    main_values(static_cast<Eigen::Index>(k)) = values(inside[k]);
  }
  std::shared_ptr<const Acquisition> main_acquisition;
  if (options.refine > 0 || with_best) main_acquisition = std::make_shared<const Acquisition>(kind, main, conditioned());
  if (with_best) {
    X.row(X.rows() - 1) = best.x.transpose();
    main_values(X.rows() - 1) = LocalPenalty::apply(main_acquisition->evaluate(Eigen::MatrixXd(best.x.transpose()))(0),
                                                    log_weight_at(best.x));
  }
  BoxObjective objective;
  if (options.refine > 0) objective = inside_objective(main_acquisition, guide_acquisition, cutoff);
  // The rows of X are inside by construction; a refined point may have left the set by the
  // penalty's slack: those are dropped.
  const auto lexicographic = [](const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
    return std::lexicographical_compare(a.data(), a.data() + a.size(), b.data(), b.data() + b.size());
  };
  std::set<Eigen::VectorXd, decltype(lexicographic)> rows(lexicographic);
  if (options.refine > 0 && std::isfinite(cutoff)) {
    for (Eigen::Index i = 0; i < X.rows(); ++i) rows.insert(X.row(i).transpose());
  }
  std::vector<Maximum> result;
  for (Maximum& m : maximize_from(penalized(std::move(objective)), *space_, options, X, main_values)) {
    if (!std::isfinite(m.value)) continue;
    if (options.refine > 0 && std::isfinite(cutoff) && rows.count(m.x) == 0 &&
        guide_acquisition->evaluate(Eigen::MatrixXd(m.x.transpose()))(0) < cutoff) {
      continue;
    }
    result.push_back(std::move(m));
  }
  // Then the points outside, by the guide's acquisition.
  for (const Maximum& m : guided) {
    if (std::isfinite(m.value) && m.value < cutoff) result.push_back(m);
  }
  return result;
}

}  // namespace lbo::surrogate
