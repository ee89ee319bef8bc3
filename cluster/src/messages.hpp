#pragma once
// Master ⇄ worker messages: plain structs, serialized with cereal into MPI byte buffers.

#include <cstdint>
#include <sstream>
#include <string>

#include <cereal/archives/binary.hpp>
#include <cereal/types/optional.hpp>

#include "lbo/cluster/mpi.hpp"
#include "lbo/workers/serialization.hpp"

namespace lbo::cluster::detail {

/// MPI tags; each names the message struct its payload holds.
enum Tag : int {
  kSetupTag = 1,     ///< master → worker: WorkerSetup
  kOrderTag = 2,     ///< master → worker: workers::WorkOrder
  kCancelTag = 3,    ///< master → worker: CancelRequest
  kShutdownTag = 4,  ///< master → worker: empty; the worker kills its attempts and answers kByeTag
  kResultTag = 5,    ///< worker → master: ResultMessage
  kByeTag = 6,       ///< worker → master: empty, the last message a worker sends
  kReadyTag = 7,     ///< worker → master: WorkerReady, the answer to kSetupTag
  kHeartbeatTag = 8, ///< both ways, empty: "still here", every tenth of WorkerSetup::rank_timeout_s
  kReportsTag = 9,   ///< worker → master: ReportBatch, the intermediate reports read lately
};

/// A worker rank's intermediate reports, sent together (at most every kReportBatch_ms and
/// always before the result of their trial), so thousands of reporting trials cost the master
/// one message per rank and period.
struct ReportBatch {
  std::vector<workers::TrialReport> reports;

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t /*version*/) {
    archive(reports);
  }
};
inline constexpr int kReportBatch_ms = 20;

/// A worker rank's slots, planned from the setup, its cores and GPUs.
struct WorkerReady {
  int slots = 0;
  std::string host;
  std::string resources;           ///< workers::describe of its plan
  std::vector<std::string> notes;  ///< what differs from the request

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t /*version*/) {
    archive(slots, host, resources, notes);
  }
};

struct CancelRequest {
  std::int64_t trial = -1;  ///< -1: every attempt on the rank

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t /*version*/) {
    archive(trial);
  }
};

struct ResultMessage {
  std::int64_t trial = 0;
  int attempt = 1;
  int slot = 0;
  workers::Outcome outcome;

  template <class Archive>
  void serialize(Archive& archive, std::uint32_t /*version*/) {
    archive(trial, attempt, slot, outcome);
  }
};

template <class Message>
std::string encode(const Message& message) {
  std::ostringstream out(std::ios::binary);
  {
    cereal::BinaryOutputArchive archive(out);
    archive(message);
  }
  return std::move(out).str();
}

template <class Message>
Message decode(const std::string& bytes) {
  std::istringstream in(bytes, std::ios::binary);
  cereal::BinaryInputArchive archive(in);
  Message message;
  archive(message);
  return message;
}

}  // namespace lbo::cluster::detail

namespace lbo::cluster {
template <class Archive>
void serialize(Archive& archive, WorkerSetup& setup, std::uint32_t version) {
  workers::ResourceRequest& r = setup.resources;
  archive(r.slots, r.threads_per_trial, r.manage_threads, r.gpus_per_trial, r.gpus, setup.output_limit_bytes);
  if (version >= 3) archive(setup.rank_timeout_s);
}
}  // namespace lbo::cluster

CEREAL_CLASS_VERSION(lbo::cluster::WorkerSetup, 3)
CEREAL_CLASS_VERSION(lbo::cluster::detail::WorkerReady, 1)
CEREAL_CLASS_VERSION(lbo::cluster::detail::CancelRequest, 1)
CEREAL_CLASS_VERSION(lbo::cluster::detail::ResultMessage, 1)
CEREAL_CLASS_VERSION(lbo::cluster::detail::ReportBatch, 1)
