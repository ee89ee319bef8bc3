#pragma once
// Slots whose attempts are evaluated in this process by a function instead of a command (a
// tabulated objective: workers/tabulated.hpp): no process, no trial folder. Each completion
// arrives on the master's io_context in a later turn of its event loop than its submit, as a
// process's would.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lbo/cluster/transport.hpp"

namespace boost::asio {
class io_context;
}

namespace lbo::cluster {

class InProcessTransport final : public Transport {
 public:
  using Evaluate = std::function<workers::Outcome(const workers::WorkOrder&)>;

  InProcessTransport(boost::asio::io_context& io, int slots, Evaluate evaluate, CompletionHandler on_completion,
                     std::string what = "in-process");

  int slot_count() const override { return slots_; }
  std::vector<std::string> resources() const override { return {resources_}; }
  int busy_count() const override { return static_cast<int>(running_.size()); }
  WorkerSlot next_slot() const override;
  WorkerSlot submit(workers::WorkOrder order) override;
  void cancel(std::int64_t trial) override;
  void cancel_all() override;
  void shutdown() override;

 private:
  struct Running {
    int attempt = 1;
    int slot = 0;
    bool cancelled = false;
  };
  void complete(std::int64_t trial, workers::Outcome outcome);

  boost::asio::io_context& io_;
  int slots_;
  Evaluate evaluate_;
  CompletionHandler on_completion_;
  std::string resources_;
  std::map<std::int64_t, Running> running_;  ///< by trial
  bool shut_down_ = false;
  /// Completions posted and not yet run see this gone once the transport is.
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);
};

}  // namespace lbo::cluster
