#pragma once
// cereal versions of everything the master persists (journal records, checkpoints), in one
// place. Included only by the .cpp files that instantiate archives.

#include <cereal/cereal.hpp>
#include <cereal/types/optional.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/variant.hpp>
#include <cereal/types/vector.hpp>

#include "lbo/jobs/serialization.hpp"
#include "lbo/orchestrator/checkpoint.hpp"
#include "lbo/orchestrator/journal.hpp"
#include "lbo/workers/serialization.hpp"

CEREAL_CLASS_VERSION(lbo::orchestrator::TaskIdentity, 2)
CEREAL_CLASS_VERSION(lbo::orchestrator::JobIdentity, 1)
CEREAL_CLASS_VERSION(lbo::orchestrator::RunStarted, 1)
CEREAL_CLASS_VERSION(lbo::orchestrator::TrialStarted, 2)
CEREAL_CLASS_VERSION(lbo::orchestrator::TrialFinished, 2)
CEREAL_CLASS_VERSION(lbo::orchestrator::TaskAdded, 1)
CEREAL_CLASS_VERSION(lbo::orchestrator::Trial, 3)
CEREAL_CLASS_VERSION(lbo::orchestrator::HedgeState, 2)
CEREAL_CLASS_VERSION(lbo::orchestrator::PolicyState, 3)
CEREAL_CLASS_VERSION(lbo::orchestrator::Checkpoint, 1)
CEREAL_CLASS_VERSION(lbo::surrogate::SurrogateState, 5)
CEREAL_CLASS_VERSION(lbo::surrogate::JumboState, 1)
CEREAL_CLASS_VERSION(lbo::surrogate::LiboState, 1)
CEREAL_CLASS_VERSION(lbo::surrogate::TransferState, 2)
CEREAL_CLASS_VERSION(lbo::surrogate::GpState, 1)
CEREAL_CLASS_VERSION(lbo::surrogate::AblrState, 1)
CEREAL_CLASS_VERSION(lbo::surrogate::LboState, 1)
CEREAL_CLASS_VERSION(lbo::surrogate::LboTaskState, 1)
