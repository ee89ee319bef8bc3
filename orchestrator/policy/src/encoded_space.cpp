#include "encoded_space.hpp"

#include <span>

namespace lbo::orchestrator {

JobEncodedSpace::JobEncodedSpace(const jobs::Space& space, const jobs::Encoder& encoder) : space_(space), encoder_(encoder) {
  for (const jobs::EncodedGroup& g : encoder.groups()) {
    surrogate::CoordinateGroup c;
    c.offset = g.offset;
    c.width = g.width;
    switch (g.kind) {
      case jobs::EncodedGroup::Kind::continuous: c.kind = surrogate::CoordinateGroup::Kind::continuous; break;
      case jobs::EncodedGroup::Kind::integer: c.kind = surrogate::CoordinateGroup::Kind::integer; break;
      case jobs::EncodedGroup::Kind::one_hot: c.kind = surrogate::CoordinateGroup::Kind::one_hot; break;
    }
    groups_.push_back(c);
  }
}

void JobEncodedSpace::canonicalize(Eigen::Ref<Eigen::VectorXd> x) const {
  const jobs::Config config = encoder_.decode(std::span<const double>(x.data(), static_cast<std::size_t>(x.size())));
  const std::vector<double> canonical = encoder_.encode(config);
  x = Eigen::Map<const Eigen::VectorXd>(canonical.data(), static_cast<Eigen::Index>(canonical.size()));
}

bool JobEncodedSpace::movable(int group, const Eigen::VectorXd& x) const {
  if (groups_[group].kind == surrogate::CoordinateGroup::Kind::one_hot) return false;
  const jobs::Config config = encoder_.decode(std::span<const double>(x.data(), static_cast<std::size_t>(x.size())));
  return space_.is_active(encoder_.groups()[group].param, config);
}

}  // namespace lbo::orchestrator
