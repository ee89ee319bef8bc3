#pragma once
// cereal versions of the persisted and transmitted worker types. Include only in .cpp files
// that instantiate an archive (cluster messages, the journal), not in widely included headers.

#include <cereal/cereal.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/vector.hpp>

#include "lbo/workers/work_order.hpp"

CEREAL_CLASS_VERSION(lbo::workers::EnvVar, 1)
CEREAL_CLASS_VERSION(lbo::workers::WorkOrder, 2)
CEREAL_CLASS_VERSION(lbo::workers::Outcome, 7)
CEREAL_CLASS_VERSION(lbo::workers::TrialReport, 2)
