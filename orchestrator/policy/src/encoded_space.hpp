#pragma once
// The job's search space as the acquisition maximizer sees it: canonical points are
// encode(decode(x)), so conditions, integer rounding and one-hot groups follow the job file.
// Private to policy/.

#include <vector>

#include "lbo/jobs/encoding.hpp"
#include "lbo/jobs/space.hpp"
#include "lbo/surrogate/maximizer.hpp"

namespace lbo::orchestrator {

class JobEncodedSpace final : public surrogate::EncodedSpace {
 public:
  JobEncodedSpace(const jobs::Space& space, const jobs::Encoder& encoder);

  int dimension() const override { return encoder_.dimension(); }
  const std::vector<surrogate::CoordinateGroup>& groups() const override { return groups_; }
  void canonicalize(Eigen::Ref<Eigen::VectorXd> x) const override;
  bool movable(int group, const Eigen::VectorXd& x) const override;

 private:
  const jobs::Space& space_;
  const jobs::Encoder& encoder_;
  std::vector<surrogate::CoordinateGroup> groups_;
};

}  // namespace lbo::orchestrator
