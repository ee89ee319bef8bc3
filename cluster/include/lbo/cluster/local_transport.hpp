#pragma once
// Local slots: the embedded default when lbo is started without mpirun.

#include <memory>
#include <vector>

#include "lbo/cluster/transport.hpp"
#include "lbo/workers/local_pool.hpp"
#include "lbo/workers/resources.hpp"

namespace lbo::cluster {

class LocalTransport final : public Transport {
 public:
  LocalTransport(boost::asio::io_context& io, int slots, CompletionHandler on_completion,
                 workers::RunnerOptions options = {});
  /// The slots of `plan` (at least one), each with its cores, GPUs and threads.
  LocalTransport(boost::asio::io_context& io, const workers::SlotPlan& plan, CompletionHandler on_completion,
                 workers::RunnerOptions options = {});

  int slot_count() const override { return slots_; }
  std::vector<std::string> resources() const override { return resources_; }
  int busy_count() const override { return pool_ ? pool_->busy_count() : 0; }
  WorkerSlot next_slot() const override;
  WorkerSlot submit(workers::WorkOrder order) override;
  void cancel(std::int64_t trial) override;
  void cancel_all() override;
  void on_reports(ReportHandler handler) override { on_reports_ = std::move(handler); }
  /// Destroying the runners kills and reaps their children without calling back.
  void shutdown() override { pool_.reset(); }

 private:
  void flush_reports();

  int slots_;
  std::vector<std::string> resources_;
  CompletionHandler on_completion_;
  ReportHandler on_reports_;
  boost::asio::io_context& io_;
  /// Reports read in this turn of the event loop, handed on together at its end.
  std::vector<workers::TrialReport> reports_;
  std::unique_ptr<workers::LocalPool> pool_;  ///< null after shutdown()
};

}  // namespace lbo::cluster
