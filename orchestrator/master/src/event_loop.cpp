#include "event_loop.hpp"

#include <algorithm>
#include <chrono>
#include <optional>

#include <boost/asio/io_context.hpp>

#include "lbo/cluster/transport.hpp"
#include "lbo/orchestrator/policy.hpp"

namespace lbo::orchestrator {

void run_event_loop(boost::asio::io_context& io, cluster::Transport& transport, const Policy& policy) {
  if (!transport.simulated()) {
    io.run();
    return;
  }
  constexpr std::chrono::duration<double> kFitStep{0.002};
  while (!io.stopped()) {
    transport.deliver_completions(false);
    if (io.poll_one() > 0 || io.stopped()) continue;
    const std::optional<double> next = transport.next_completion_in();
    if (!next) {
      io.run_one();  // nothing simulated is running: real events only
    } else if (!policy.fitting()) {
      transport.deliver_completions(true);
    } else {
      const auto step = std::min(kFitStep, std::chrono::duration<double>(std::max(*next, 0.0)));
      io.run_one_for(std::chrono::duration_cast<std::chrono::steady_clock::duration>(step));
    }
  }
}

}  // namespace lbo::orchestrator
