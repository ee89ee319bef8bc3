#pragma once
// The acquisition maximizer over the encoded box: quasi-random (Sobol) candidates, L-BFGS-B
// refinement of the best few, integers rounded and one-hot groups handled exactly.

#include <Eigen/Core>
#include <cstdint>
#include <functional>
#include <vector>

namespace lbo::surrogate {

/// Coordinates of one parameter in the encoded vector.
struct CoordinateGroup {
  enum class Kind : std::uint8_t { continuous, integer, one_hot };
  Kind kind = Kind::continuous;
  int offset = 0;
  int width = 1;   ///< 1, or the number of categories of a one-hot group
  int levels = 0;  ///< integer groups: number of distinct values (rounding grid)
};

/// The encoded search space as the maximizer sees it. Implementations map any point of
/// [0,1]^d to the nearest valid encoding (the policy's, with conditional parameters).
class EncodedSpace {
 public:
  virtual ~EncodedSpace() = default;
  virtual int dimension() const = 0;
  virtual const std::vector<CoordinateGroup>& groups() const = 0;
  /// In place: the valid point nearest to x (integers rounded, one-hot groups exact, inactive
  /// coordinates at their fixed value).
  virtual void canonicalize(Eigen::Ref<Eigen::VectorXd> x) const = 0;
  /// Whether group g may move in a continuous refinement around the canonical point x.
  virtual bool movable(int group, const Eigen::VectorXd& x) const = 0;
};

/// Every group active, no conditions: integers on a grid of `levels`, one-hot by arg-max.
class BoxSpace final : public EncodedSpace {
 public:
  explicit BoxSpace(std::vector<CoordinateGroup> groups);
  int dimension() const override { return dimension_; }
  const std::vector<CoordinateGroup>& groups() const override { return groups_; }
  void canonicalize(Eigen::Ref<Eigen::VectorXd> x) const override;
  bool movable(int group, const Eigen::VectorXd&) const override {
    return groups_[group].kind != CoordinateGroup::Kind::one_hot;
  }

 private:
  std::vector<CoordinateGroup> groups_;
  int dimension_ = 0;
};

/// What the maximizer maximizes: batch values, and a value with gradient at one point.
struct BoxObjective {
  std::function<Eigen::VectorXd(const Eigen::MatrixXd&)> values;             ///< X: n × d → n
  std::function<double(const Eigen::VectorXd&, Eigen::VectorXd&)> gradient;  ///< x → value, ∂/∂x
};

/// The most parameters whose candidates are Sobol points (Boost's direction-number tables end
/// there); more parameters take seeded uniform candidates.
inline constexpr int kMaxSobolDimension = 3667;

struct MaximizerOptions {
  int candidates = 1024;  ///< Sobol points evaluated
  int refine = 5;         ///< best distinct candidates refined by L-BFGS-B
  int max_iterations = 50;
  /// > 0: a refinement also stops once an iteration gains less than progress · max(1, |value|)
  /// of the acquisition (LBFGSpp's delta test); 0: the projected gradient (10⁻⁶),
  /// max_iterations, a failed line search or LBFGSpp's own 10⁻¹⁰ progress test stop it.
  double progress = 0;
  /// maximize_from returns the best `keep` distinct candidates (and the refined points); 0: all.
  /// A caller that takes the first usable one of a few saves ranking all of them.
  int keep = 0;
};

/// How much a ranking of candidates is refined: not at all, briefly (options.refine starts, each
/// stopped on progress: kBriefProgress), or in full (as MaximizerOptions say).
enum class Refinement { none, brief, full };

/// The progress rule of a brief refinement: 10⁻⁴ · max(1, |value|) per iteration. Absolute below
/// a value of 1, so it ends refinements of tiny EI values early: the rule of a master too busy
/// to refine in full, not of every refinement (bench/log/2026-11-28-simulated-scale-eighth-run-*.md
/// and -ninth-run-*.md).
inline constexpr double kBriefProgress = 1e-4;

struct Maximum {
  Eigen::VectorXd x;  ///< canonical
  double value = 0;
};

/// Distinct canonical points, best first; the first is the maximum found. `starts` are extra
/// candidates (e.g. the best observations so far). Deterministic for a given seed and thread
/// count; the refinements run in parallel with OpenMP.
std::vector<Maximum> maximize(const BoxObjective& objective, const EncodedSpace& space, const MaximizerOptions& options,
                              std::uint64_t seed, const std::vector<Eigen::VectorXd>& starts = {});

/// The candidates maximize() evaluates (rows, canonical): options.candidates quasi-random points
/// of `space` drawn from `seed`, then `starts`.
Eigen::MatrixXd candidate_points(const EncodedSpace& space, const MaximizerOptions& options, std::uint64_t seed,
                                 const std::vector<Eigen::VectorXd>& starts = {});
/// maximize() once its candidates X are scored (`values`, one per row): the distinct ones
/// ranked (the best options.keep of them, unless 0), the best options.refine refined by
/// L-BFGS-B with `objective` (none when 0).
std::vector<Maximum> maximize_from(const BoxObjective& objective, const EncodedSpace& space,
                                   const MaximizerOptions& options, const Eigen::MatrixXd& X,
                                   const Eigen::VectorXd& values);

}  // namespace lbo::surrogate
