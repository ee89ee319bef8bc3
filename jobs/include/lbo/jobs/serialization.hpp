#pragma once
// cereal versions of persisted job types. Include only where an archive is instantiated.

#include <cereal/cereal.hpp>
#include <cereal/types/optional.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/vector.hpp>

#include "lbo/jobs/objective.hpp"
#include "lbo/jobs/space.hpp"

namespace lbo::jobs {

template <class Archive>
void serialize(Archive& archive, Condition& c, std::uint32_t /*version*/) {
  archive(c.parent, c.choices);
}

template <class Archive>
void serialize(Archive& archive, ParamSpec& p, std::uint32_t /*version*/) {
  archive(p.name, p.type, p.low, p.high, p.log, p.choices, p.when);
}

template <class Archive>
void serialize(Archive& archive, Constraint& c, std::uint32_t /*version*/) {
  archive(c.name, c.min, c.max);
}

template <class Archive>
void save(Archive& archive, const Objective& o, std::uint32_t /*version*/) {
  archive(o.name(), o.direction());
}

template <class Archive>
void load(Archive& archive, Objective& o, std::uint32_t /*version*/) {
  std::string name;
  Direction direction = Direction::maximize;
  archive(name, direction);
  o = Objective(direction, std::move(name));
}

}  // namespace lbo::jobs

CEREAL_CLASS_VERSION(lbo::jobs::Constraint, 1)
CEREAL_CLASS_VERSION(lbo::jobs::Objective, 1)
CEREAL_CLASS_VERSION(lbo::jobs::Config, 1)
CEREAL_CLASS_VERSION(lbo::jobs::Condition, 1)
CEREAL_CLASS_VERSION(lbo::jobs::ParamSpec, 1)
