#include "lbo/cluster/local_transport.hpp"

#include <charconv>
#include <stdexcept>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

namespace lbo::cluster {

std::string to_string(WorkerSlot worker) {
  if (worker.rank == 0) return "local:" + std::to_string(worker.slot);
  const std::string rank = "rank" + std::to_string(worker.rank);
  return worker.slot < 0 ? rank : rank + ":" + std::to_string(worker.slot);
}

std::optional<WorkerSlot> parse_worker_slot(std::string_view text) {
  const auto number = [](std::string_view digits) -> std::optional<int> {
    int value = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || value < 0) return std::nullopt;
    return value;
  };
  if (text.starts_with("local:")) {
    const auto slot = number(text.substr(6));
    if (!slot) return std::nullopt;
    return WorkerSlot{0, *slot};
  }
  if (!text.starts_with("rank")) return std::nullopt;
  text.remove_prefix(4);
  const std::size_t colon = text.find(':');
  const auto rank = number(text.substr(0, colon));
  if (!rank || *rank == 0) return std::nullopt;
  if (colon == std::string_view::npos) return WorkerSlot{*rank, -1};
  const auto slot = number(text.substr(colon + 1));
  if (!slot) return std::nullopt;
  return WorkerSlot{*rank, *slot};
}

LocalTransport::LocalTransport(boost::asio::io_context& io, int slots, CompletionHandler on_completion,
                               workers::RunnerOptions options)
    : slots_(slots),
      resources_{"local: " + std::to_string(slots) + " slot(s)"},
      on_completion_(std::move(on_completion)),
      io_(io),
      pool_(std::make_unique<workers::LocalPool>(io, slots, options)) {}

LocalTransport::LocalTransport(boost::asio::io_context& io, const workers::SlotPlan& plan,
                               CompletionHandler on_completion, workers::RunnerOptions options)
    : slots_(static_cast<int>(plan.slots.size())),
      on_completion_(std::move(on_completion)),
      io_(io),
      pool_(std::make_unique<workers::LocalPool>(io, plan.slots, options)) {
  resources_.push_back("local: " + workers::describe(plan));
  resources_.insert(resources_.end(), plan.notes.begin(), plan.notes.end());
}

WorkerSlot LocalTransport::next_slot() const {
  if (!pool_) throw std::logic_error("LocalTransport::next_slot after shutdown");
  return WorkerSlot{0, pool_->free_slot()};
}

WorkerSlot LocalTransport::submit(workers::WorkOrder order) {
  if (!pool_) throw std::logic_error("LocalTransport::submit after shutdown");
  const std::int64_t trial = order.trial;
  const int attempt = order.attempt;
  const int slot = pool_->submit(
      std::move(order),
      [this, trial, attempt](int s, workers::Outcome outcome) {
        flush_reports();  // a trial's reports reach the master before its completion
        on_completion_(Completion{trial, attempt, WorkerSlot{0, s}, std::move(outcome)});
      },
      [this](workers::TrialReport report) {
        if (!on_reports_) return;
        if (reports_.empty()) boost::asio::post(io_, [this] { flush_reports(); });
        reports_.push_back(std::move(report));
      });
  return WorkerSlot{0, slot};
}

void LocalTransport::flush_reports() {
  if (!pool_) reports_.clear();  // shut down: nothing arrives any more
  if (reports_.empty() || !on_reports_) return;
  std::vector<workers::TrialReport> batch;
  batch.swap(reports_);
  on_reports_(std::move(batch));
}

void LocalTransport::cancel(std::int64_t trial) {
  if (pool_) pool_->cancel(trial);
}

void LocalTransport::cancel_all() {
  if (pool_) pool_->cancel_all();
}

}  // namespace lbo::cluster
