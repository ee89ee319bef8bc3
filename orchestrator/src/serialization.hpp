#pragma once
// cereal versions of everything the master persists (journal records, checkpoints), in one
// place. Included only by the .cpp files that instantiate archives.

#include <cstdint>
#include <string>

#include <cereal/archives/portable_binary.hpp>
#include <cereal/cereal.hpp>
#include <cereal/types/optional.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/variant.hpp>
#include <cereal/types/vector.hpp>

#include "lbo/jobs/serialization.hpp"
#include "lbo/orchestrator/checkpoint.hpp"
#include "lbo/orchestrator/journal.hpp"
#include "lbo/workers/serialization.hpp"

namespace cereal {

// cereal reads a bool as the raw byte it wrote (0 or 1); any other byte in a damaged or foreign
// record would make a bool that is neither true nor false (undefined behaviour; found by
// fuzz_journal and fuzz_checkpoint in std::optional's flag): such a byte does not decode. This
// overload is preferred to cereal's template for arithmetic types, so every bool the journal and
// the checkpoints read (fields, std::optional's and std::vector<bool>'s) comes here.
inline void CEREAL_LOAD_FUNCTION_NAME(PortableBinaryInputArchive& archive, bool& value) {
  std::uint8_t byte = 0;
  archive(byte);
  if (byte > 1) throw Exception("a bool holds the byte " + std::to_string(byte));
  value = byte == 1;
}

}  // namespace cereal

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
