#pragma once
// cereal versions of persisted job types. Include only where an archive is instantiated.

#include <cereal/cereal.hpp>
#include <cereal/types/optional.hpp>
#include <cereal/types/vector.hpp>

#include "lbo/jobs/space.hpp"

CEREAL_CLASS_VERSION(lbo::jobs::Config, 1)
