#pragma once
// Config ⇄ unit-box encoding: the contract between the search space and the surrogate.
//
// Reals and integers map linearly (in log space for log parameters) onto one coordinate in
// [0, 1]; a categorical maps onto one one-hot coordinate per choice. Coordinates of inactive
// parameters are 0. Decoding rounds integers, takes the arg-max of a one-hot group and
// decides activity from the decoded parents, so decode(x) is valid for any x in [0,1]^d.

#include <cstdint>
#include <span>
#include <vector>

#include "lbo/jobs/space.hpp"

namespace lbo::jobs {

/// The coordinates one parameter occupies in the encoded vector.
struct EncodedGroup {
  enum class Kind : std::uint8_t { continuous, integer, one_hot };
  Kind kind = Kind::continuous;
  int param = 0;   ///< index into Space::params()
  int offset = 0;  ///< first coordinate
  int width = 1;   ///< 1, or the number of choices for one_hot
};

class Encoder {
 public:
  explicit Encoder(const Space& space);

  /// d, the length of an encoded vector.
  int dimension() const { return dimension_; }
  /// Parameters in space order, with the coordinates each occupies.
  const std::vector<EncodedGroup>& groups() const { return groups_; }

  /// A point of [0,1]^d (length dimension()).
  std::vector<double> encode(const Config& config) const;
  /// The configuration nearest to x (length dimension(), entries clamped to [0,1]).
  Config decode(std::span<const double> x) const;

 private:
  Space space_;
  std::vector<EncodedGroup> groups_;
  int dimension_ = 0;
};

}  // namespace lbo::jobs
