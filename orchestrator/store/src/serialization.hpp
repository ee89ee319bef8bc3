#pragma once
// cereal versions of everything the master persists (journal records, checkpoints), in one
// place. Included only by the .cpp files that instantiate archives.

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>

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

namespace lbo::orchestrator::detail {

/// A portable-binary input archive over a payload in memory, which knows how many bytes of it
/// are left (for the size check below).
class PayloadArchive : public cereal::PortableBinaryInputArchive {
 public:
  explicit PayloadArchive(std::istringstream& stream) : PortableBinaryInputArchive(stream), stream_(stream) {}
  std::uint64_t bytes_left() const { return static_cast<std::uint64_t>(std::max<std::streamsize>(stream_.rdbuf()->in_avail(), 0)); }

 private:
  std::istringstream& stream_;
};

/// Decodes `value` from `payload` (cereal portable binary), every size in it checked against the
/// bytes left. Throws cereal::Exception, or another std::exception, when it does not decode.
template <class T>
void decode_payload(std::string_view payload, T& value) {
  std::istringstream stream(std::string(payload), std::ios::binary);
  PayloadArchive archive(stream);
  archive(value);
}

}  // namespace lbo::orchestrator::detail

namespace cereal {

// A container's or string's size is checked against the bytes left in the payload before cereal
// allocates for it: each element takes at least one byte, so a larger size is damage. A damaged
// size (found by fuzz_journal and fuzz_checkpoint: 2^49 strings) made cereal allocate what it
// said, gigabytes zero-filled before the read past the end failed. More specialized than
// cereal's SizeTag serialize for portable binary, so it replaces it on input; the archive must
// be decode_payload's.
template <class T>
void CEREAL_SERIALIZE_FUNCTION_NAME(PortableBinaryInputArchive& archive, SizeTag<T>& tag) {
  archive(tag.size);
  const auto* payload = dynamic_cast<const lbo::orchestrator::detail::PayloadArchive*>(&archive);
  if (payload == nullptr) throw Exception("lbo decodes portable binary through detail::decode_payload only");
  const auto size = static_cast<std::uint64_t>(tag.size);
  if (size > payload->bytes_left()) {
    throw Exception("a size of " + std::to_string(size) + " where only " + std::to_string(payload->bytes_left()) +
                    " bytes are left");
  }
}

}  // namespace cereal

CEREAL_CLASS_VERSION(lbo::orchestrator::TaskIdentity, 3)
CEREAL_CLASS_VERSION(lbo::orchestrator::JobIdentity, 4)
CEREAL_CLASS_VERSION(lbo::orchestrator::RunStarted, 1)
CEREAL_CLASS_VERSION(lbo::orchestrator::TrialStarted, 2)
CEREAL_CLASS_VERSION(lbo::orchestrator::TrialFinished, 2)
CEREAL_CLASS_VERSION(lbo::orchestrator::TaskAdded, 1)
CEREAL_CLASS_VERSION(lbo::orchestrator::ReportedStep, 2)
CEREAL_CLASS_VERSION(lbo::orchestrator::TrialsReported, 1)
CEREAL_CLASS_VERSION(lbo::orchestrator::StepReport, 1)
CEREAL_CLASS_VERSION(lbo::orchestrator::Trial, 5)
CEREAL_CLASS_VERSION(lbo::orchestrator::HedgeState, 2)
CEREAL_CLASS_VERSION(lbo::orchestrator::PolicyState, 4)
CEREAL_CLASS_VERSION(lbo::orchestrator::FittedTask, 1)
CEREAL_CLASS_VERSION(lbo::orchestrator::Checkpoint, 2)
CEREAL_CLASS_VERSION(lbo::surrogate::SurrogateState, 5)
CEREAL_CLASS_VERSION(lbo::surrogate::JumboState, 2)
CEREAL_CLASS_VERSION(lbo::surrogate::LiboState, 2)
CEREAL_CLASS_VERSION(lbo::surrogate::TransferState, 2)
CEREAL_CLASS_VERSION(lbo::surrogate::GpState, 1)
CEREAL_CLASS_VERSION(lbo::surrogate::AblrState, 1)
CEREAL_CLASS_VERSION(lbo::surrogate::LboState, 1)
CEREAL_CLASS_VERSION(lbo::surrogate::LboTaskState, 1)
