#pragma once
// What every surrogate answers: a Gaussian posterior over a task's latent function on points of
// the encoded unit box, in the task's standardized output units (maximization convention).

#include <Eigen/Core>
#include <memory>

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

/// y_standardized = (y − offset) / scale, fixed per task at fit time.
struct Standardization {
  double offset = 0, scale = 1;
  double apply(double y) const { return (y - offset) / scale; }
  double invert(double z) const { return offset + scale * z; }
  static Standardization of(const Eigen::VectorXd& y);
};

/// An immutable posterior of one task: safe to share between threads.
class TaskPosterior {
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

  const Standardization& standardization() const { return standardization_; }

 protected:
  explicit TaskPosterior(Standardization s) : standardization_(s) {}

 private:
  Standardization standardization_;
};

}  // namespace lbo::surrogate
