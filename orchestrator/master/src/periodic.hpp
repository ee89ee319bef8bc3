#pragma once
// Periodic: an action every period on the loop's thread until cancelled (the progress line,
// the loop's one-second tick). Private to master/.

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>

namespace lbo::orchestrator {

class Periodic {
 public:
  Periodic(boost::asio::io_context& io, std::chrono::steady_clock::duration period, std::function<void()> action)
      : timer_(io), period_(period), action_(std::move(action)) {}

  void start() { arm(); }
  /// No action runs after this, even one whose time has come.
  void cancel() {
    cancelled_ = true;
    timer_.cancel();
  }

 private:
  void arm() {
    timer_.expires_after(period_);
    timer_.async_wait([this](const boost::system::error_code& ec) {
      if (ec || cancelled_) return;
      action_();
      if (!cancelled_) arm();
    });
  }

  boost::asio::steady_timer timer_;
  std::chrono::steady_clock::duration period_;
  std::function<void()> action_;
  bool cancelled_ = false;
};

}  // namespace lbo::orchestrator
