#pragma once
// What every surrogate answers: a Gaussian posterior over a task's latent function on points of
// the encoded unit box, in the task's standardized output units (maximization convention).

#include <Eigen/Core>
#include <memory>
#include <vector>

namespace lbo::surrogate {

/// Observations of one task. X: n × d, rows in [0,1]^d; y: n (raw units, larger is better).
struct Observations {
  Eigen::MatrixXd X;
  Eigen::VectorXd y;
};

/// Mean and variance of the latent function at n points.
struct Posterior {
  Eigen::VectorXd mean, var;
};

/// Mean and variance at one point with their gradients w.r.t. the point (length d each).
struct PointPosterior {
  double mean = 0, var = 0;
  Eigen::VectorXd d_mean, d_var;
};

/// y_standardized = (y − offset) / scale, fixed per task at fit time. The one place this
/// arithmetic is written: refits must reproduce a checkpointed model bit for bit, so every
/// model standardizes through these (division by scale, not multiplication by its inverse).
struct Standardization {
  double offset = 0, scale = 1;
  double apply(double y) const { return (y - offset) / scale; }
  /// apply() of each entry.
  Eigen::VectorXd apply(const Eigen::VectorXd& y) const { return ((y.array() - offset) / scale).matrix(); }
  double invert(double z) const { return offset + scale * z; }
  /// invert() of each entry (a standardized mean in raw units).
  Eigen::VectorXd invert(const Eigen::VectorXd& z) const { return (offset + scale * z.array()).matrix(); }
  /// A variance (or its gradient) in standardized units, in raw units: scale² var.
  double invert_variance(double var) const { return scale * scale * var; }
  Eigen::VectorXd invert_variance(const Eigen::VectorXd& var) const { return scale * scale * var; }
  static Standardization of(const Eigen::VectorXd& y);
};

/// A posterior's mean and variance at fixed points C (n × d), kept up to date as observations
/// join it one at a time: a batch of proposals scores the same candidates after each point it
/// hallucinates. Equal to condition(points, &values)->predict(C), for less: for a GP with m
/// observations, O(m² + m n) per new point instead of O(m² n). Not thread-safe.
class TrackedPosterior {
 public:
  virtual ~TrackedPosterior() = default;
  /// Mean and variance at C given every point added so far.
  const Posterior& at_points() const { return current_; }
  /// The mean at x (length d) given every point added so far.
  virtual double mean_at(const Eigen::VectorXd& x) const = 0;
  /// x (length d) is observed with standardized value *y or, y null, believed at mean_at(x) (the
  /// kriging believer). Returns its index among the added points: 0, 1, ...
  virtual int add(const Eigen::VectorXd& x, const double* y) = 0;
  /// The value of added point `index` becomes y (a believed point's result came in).
  virtual void set_value(int index, double y) = 0;

 protected:
  Posterior current_;
};

class TaskPosterior;

/// A second posterior of the same task, in the same standardized units, that narrows where an
/// acquisition on the first is maximized (JUMBO's warm GP): only points whose acquisition under
/// `posterior` is within `threshold` of that acquisition's maximum are candidates (BatchProposer).
struct Guide {
  std::shared_ptr<const TaskPosterior> posterior;  ///< null: no guide
  double threshold = 0;
};

/// An immutable posterior of one task: safe to share between threads. Always held by a
/// shared_ptr (condition() returns one).
class TaskPosterior : public std::enable_shared_from_this<TaskPosterior> {
 public:
  virtual ~TaskPosterior() = default;

  /// d, the length of an encoded point.
  virtual int dimension() const = 0;
  /// X: n × d, rows in [0,1]^d.
  virtual Posterior predict(const Eigen::MatrixXd& X) const = 0;
  /// x: length d.
  virtual PointPosterior predict_with_gradient(const Eigen::VectorXd& x) const = 0;
  /// The posterior after also observing X (n × d) with standardized values y, hyperparameters
  /// unchanged. y == nullptr hallucinates each point at the current mean (GP-BUCB): the mean
  /// stays, the variance shrinks, so parallel proposals spread out.
  virtual std::shared_ptr<const TaskPosterior> condition(const Eigen::MatrixXd& X,
                                                         const Eigen::VectorXd* y) const = 0;

  /// Its mean and variance at C, tracked as points are added (see TrackedPosterior). The default
  /// conditions anew and predicts at every change; exact GPs and their combinations do better.
  virtual std::unique_ptr<TrackedPosterior> track(const Eigen::MatrixXd& C) const;

  /// The guide of this task's proposals (none by default; JUMBO's posterior has its warm GP).
  virtual Guide guide() const { return {}; }

  const Standardization& standardization() const { return standardization_; }

 protected:
  explicit TaskPosterior(Standardization s) : standardization_(s) {}

 private:
  Standardization standardization_;
};

}  // namespace lbo::surrogate
