#pragma once
// OncePerTurn: an action asked for any number of times in one turn of the loop runs once, after
// the handlers queued before it (the commit of a turn's results with one fsync; the refill of the
// slots a turn's completions freed, once all of them are applied). Private to master/.

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <functional>
#include <utility>

namespace lbo::orchestrator {

class OncePerTurn {
 public:
  OncePerTurn(boost::asio::io_context& io, std::function<void()> action) : io_(io), action_(std::move(action)) {}

  /// Runs the action after the handlers queued now, unless it is asked for already.
  void ask() {
    if (asked_) return;
    asked_ = true;
    boost::asio::post(io_, [this] { run_if_asked(); });
  }
  /// Runs the action now if it is asked for; the run posted for it then does nothing.
  void run_if_asked() {
    if (std::exchange(asked_, false)) action_();
  }
  /// Asked for and not yet run.
  bool asked() const { return asked_; }

 private:
  boost::asio::io_context& io_;
  std::function<void()> action_;
  bool asked_ = false;
};

}  // namespace lbo::orchestrator
