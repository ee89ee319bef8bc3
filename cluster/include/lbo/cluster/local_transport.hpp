#pragma once
// Local slots: the embedded default when lbo is started without mpirun.

#include <memory>

#include "lbo/cluster/transport.hpp"
#include "lbo/workers/local_pool.hpp"

namespace lbo::cluster {

class LocalTransport final : public Transport {
 public:
  LocalTransport(boost::asio::io_context& io, int slots, CompletionHandler on_completion,
                 workers::RunnerOptions options = {});

  int slot_count() const override { return slots_; }
  int busy_count() const override { return pool_ ? pool_->busy_count() : 0; }
  WorkerSlot next_slot() const override;
  WorkerSlot submit(workers::WorkOrder order) override;
  void cancel(std::int64_t trial) override;
  void cancel_all() override;
  /// Destroying the runners kills and reaps their children without calling back.
  void shutdown() override { pool_.reset(); }

 private:
  int slots_;
  CompletionHandler on_completion_;
  std::unique_ptr<workers::LocalPool> pool_;  ///< null after shutdown()
};

}  // namespace lbo::cluster
