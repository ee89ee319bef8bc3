#include "checkpointing.hpp"

#include <algorithm>
#include <chrono>

#include "lbo/jobs/error.hpp"

namespace lbo::orchestrator {

Checkpointing::Checkpointing(boost::asio::io_context& io, const RunPaths& run, JournalWriter& journal, const RunState& state,
                             Policy& policy, std::function<double()> clock, std::uint64_t next, Console& console)
    : run_(run),
      journal_(journal),
      state_(state),
      policy_(policy),
      clock_(std::move(clock)),
      next_(next),
      console_(console),
      writer_(run.path()),
      timer_(io) {}

void Checkpointing::write(bool now) {
  journal_.sync();
  Checkpoint c;
  c.sequence = next_;
  c.unix_time = clock_();
  c.job = state_.job();
  c.trials = state_.trials();
  c.retries = state_.retries();
  c.interrupted = state_.interrupted();
  c.journal_bytes = journal_.size_bytes();
  c.round_handed_out = state_.round_handed_out();
  c.policy = policy_.state(state_);
  if (now) {
    writer_.write_now(c);
  } else if (!writer_.write_async(std::move(c))) {
    return;  // the previous one is still being written: try again next period
  }
  ++next_;
}

bool Checkpointing::try_now() {
  try {
    write(true);
    return true;
  } catch (const IoError& e) {
    console_.warn(std::string("cannot write a checkpoint: ") + e.what() + "; a resume starts from the journal");
    return false;
  }
}

void Checkpointing::schedule(double period_s, std::function<void(const IoError&)> failed, std::function<void()> after) {
  timer_.expires_after(std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(period_s)));
  timer_.async_wait([this, period_s, failed = std::move(failed), after = std::move(after)](const boost::system::error_code& ec) {
    if (ec || cancelled_) return;
    if (const auto error = writer_.take_error()) console_.warn("checkpoint failed: " + *error);
    try {
      write(false);
    } catch (const IoError& e) {
      failed(e);
    }
    after();
    schedule(period_s, failed, after);
  });
}

}  // namespace lbo::orchestrator
