#include "lbo/workers/runner.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <optional>
#include <utility>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>

#include "attempt_outcome.hpp"
#include "captured_stream.hpp"
#include "child_process.hpp"
#include "escaped_sweeper.hpp"
#include "launcher.hpp"
#include "lbo/jobs/protocol.hpp"

namespace asio = boost::asio;

namespace lbo::workers {

std::string_view to_string(TrialStatus status) {
  switch (status) {
    case TrialStatus::ok: return "ok";
    case TrialStatus::failed: return "failed";
    case TrialStatus::timeout: return "timeout";
    case TrialStatus::crashed: return "crashed";
    case TrialStatus::cancelled: return "cancelled";
    case TrialStatus::lbo_error: return "lbo-error";
    case TrialStatus::stopped: return "stopped";
    case TrialStatus::paused: return "paused";
  }
  return "?";
}

namespace {

using Clock = std::chrono::steady_clock;
using detail::CapturedStream;
using detail::Stop;

Clock::duration seconds(double s) { return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s)); }

// A report line of `order`'s attempt, parsed; a line that is none says why in `error`.
TrialReport read_report(const WorkOrder& order, std::string_view text, double elapsed_s) {
  TrialReport report{order.trial, order.attempt};
  report.elapsed_s = elapsed_s;
  report.read_unix = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  // A report is a line of a few numbers; a longer one would only fill the journal.
  constexpr std::size_t kMaxReportBytes = 64u << 10;
  if (text.size() > kMaxReportBytes) {
    report.error = "the report line is longer than " + std::to_string(kMaxReportBytes >> 10) + " KiB";
    return report;
  }
  jobs::ParsedReport parsed = jobs::parse_report(text);
  if (!parsed.report) {
    report.error = std::move(parsed.error);
    return report;
  }
  report.step = parsed.report->step;
  report.value = parsed.report->value;
  report.metrics_json = std::move(parsed.report->metrics_json);
  return report;
}

}  // namespace

// One attempt from its spawn to its outcome: the child's streams read into their files, its
// exit watched, its timeout and lbo's stops applied. Owned through shared_ptr by every pending
// handler, so a Runner may be destroyed (or start the next attempt) while late handlers are
// still queued. The folder (trial_folder.hpp) and the outcome (attempt_outcome.hpp) have rooms
// of their own.
class Runner::Attempt : public std::enable_shared_from_this<Runner::Attempt> {
 public:
  Attempt(asio::io_context& io, const RunnerOptions& options, WorkOrder order, DoneHandler done, ReportHandler report)
      : io_(io),
        options_(options),
        order_(std::move(order)),
        done_(std::move(done)),
        stdout_(options.output_limit_bytes, CapturedStream::Keep::json_lines),
        stderr_(options.output_limit_bytes, CapturedStream::Keep::tail),
        stdout_pipe_(io),
        stderr_pipe_(io),
        exit_watch_(io),
        exit_poll_(io),
        deadline_(io),
        kill_timer_(io),
        drain_timer_(io) {
    if (report) {
      stdout_.on_report_line([this, report = std::move(report)](std::string_view text) {
        report(read_report(order_, text, std::chrono::duration<double>(Clock::now() - started_).count()));
      });
    }
  }

  ~Attempt() {
    take_launch_now();
    kill_and_reap();
  }

  // The folder, the pipes and the spawn happen on the launcher's thread (launcher.hpp); the
  // attempt goes on in launched(), on the event loop.
  void start() {
    started_ = Clock::now();
    std::weak_ptr<Attempt> weak = weak_from_this();
    launch_work_.emplace(io_.get_executor());  // the event loop waits for the launch
    launching_ = detail::launch_later(order_, options_, attempt_id_, [weak, &io = io_] {
      asio::post(io, [weak] {
        if (auto self = weak.lock()) self->launched();
      });
    });
  }

  void cancel() {
    if (launching_) {
      stop_asked_ = Stop::cancel;  // applied once the child exists
      return;
    }
    stop(Stop::cancel);
  }
  void kill() {
    if (launching_) {
      stop_asked_ = Stop::cancel;
      kill_asked_ = true;
      return;
    }
    stop(Stop::cancel);
    if (pid_ >= 0 && !reaped_) ::killpg(pid_, SIGKILL);
  }

  // The owner is going away: end the child now and never call `done`.
  void abandon() {
    finished_ = true;
    done_ = nullptr;
    take_launch_now();
    kill_and_reap();
    boost::system::error_code ignored;
    for (asio::posix::stream_descriptor* d : {&stdout_pipe_, &stderr_pipe_, &exit_watch_}) d->close(ignored);
    for (asio::steady_timer* t : {&exit_poll_, &deadline_, &kill_timer_, &drain_timer_}) t->cancel();
  }

 private:
  void launched() {
    if (!launching_) return;
    std::optional<detail::Launch> made = launching_->take();
    launching_.reset();
    launch_work_.reset();
    if (made) run(std::move(*made));
  }

  // A launch still under way when the attempt goes away: waited for, and its child (if any)
  // left for kill_and_reap.
  void take_launch_now() {
    if (!launching_) return;
    if (std::optional<detail::Launch> made = launching_->wait_and_take(); made && made->pid >= 0) pid_ = made->pid;
    launching_.reset();
    launch_work_.reset();
  }

  // The child runs: its streams are read, its exit watched, its timeout and any stop asked for
  // meanwhile applied.
  void run(detail::Launch made) {
    started_ = made.began;
    if (made.folder_ready) {
      stdout_.attach(std::move(made.stdout_file));
      stderr_.attach(std::move(made.stderr_file));
    }
    if (made.pid < 0) {
      fail_before_start(made.error, made.error_number, made.path);
      return;
    }
    pid_ = made.pid;
    stdout_pipe_.assign(made.stdout_read.release());
    stderr_pipe_.assign(made.stderr_read.release());
    read_stream(stdout_pipe_, stdout_);
    read_stream(stderr_pipe_, stderr_);
    watch_exit();
    if (order_.timeout_s > 0) {
      deadline_.expires_after(seconds(order_.timeout_s));
      deadline_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
        if (!ec) self->stop(Stop::timeout);
      });
    }
    if (stop_asked_ != Stop::none) stop(stop_asked_);
    if (kill_asked_) ::killpg(pid_, SIGKILL);
  }

  // `lbo_error_number`: the errno of lbo's own failure, or 0 when the objective's command is at
  // fault. `path`: the file or folder of the trial the reason is about (Outcome::path).
  void fail_before_start(const std::string& reason, int lbo_error_number = 0, const std::string& path = {}) {
    stdout_.eof = stderr_.eof = true;
    start_error_ = reason;
    start_error_number_ = lbo_error_number;
    start_error_path_ = path;
    reaped_ = true;
    asio::post(io_, [self = shared_from_this()] { self->finish(); });
  }

  void read_stream(asio::posix::stream_descriptor& pipe, CapturedStream& stream) {
    pipe.async_read_some(asio::buffer(stream.buffer()), [self = shared_from_this(), &pipe, &stream](
                                                            const boost::system::error_code& ec, std::size_t n) {
      if (n > 0) stream.consume(stream.buffer().data(), n);
      if (ec) {
        stream.eof = true;
        self->maybe_finish();
        return;
      }
      self->read_stream(pipe, stream);
    });
  }

  void watch_exit() {
    const int pidfd = detail::open_pidfd(pid_);
    if (pidfd >= 0) {
      exit_watch_.assign(pidfd);
      wait_for_pidfd();
      return;
    }
    poll_exit();
  }

  // A readable pidfd is taken as a hint, never as proof: on_exit first asks the kernel whether
  // the leader has exited. Boost 1.74's epoll reactor recycles a closed descriptor's state while
  // an event for it may still be queued, and that event then completes whatever waits on the
  // descriptor that gets the state next. A wait on a pidfd, unlike a read, completes on any
  // event, and Linux signals a pidfd twice (at exit and when it is reaped), so a live trial
  // started right after another one ended was taken for exited and killed (issue 31).
  void wait_for_pidfd() {
    exit_watch_.async_wait(asio::posix::stream_descriptor::wait_read,
                           [self = shared_from_this()](const boost::system::error_code& ec) {
                             if (!ec) self->on_exit();
                           });
  }

  // Whether the leader has exited, without reaping it (so its process group id stays reserved).
  bool leader_exited() const {
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
      return errno != EINTR;  // ECHILD: not ours to wait for (never expected); do not wait forever
    }
    return info.si_pid != 0;
  }

  // Kernels without pidfd_open (< 5.3): look every 10 ms whether the child has exited.
  void poll_exit() {
    exit_poll_.expires_after(std::chrono::milliseconds(10));
    exit_poll_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (ec) return;
      if (self->leader_exited()) {
        self->on_exit();
      } else {
        self->poll_exit();
      }
    });
  }

  void on_exit() {
    if (reaped_) return;
    if (!leader_exited()) {  // a stale event (see wait_for_pidfd): keep waiting
      if (exit_watch_.is_open()) {
        wait_for_pidfd();
      } else {
        poll_exit();
      }
      return;
    }
    // Closed before the reap, so the reap's own pidfd event is never queued for a descriptor
    // that might get this one's reactor state.
    boost::system::error_code ignored;
    exit_watch_.close(ignored);
    // The leader has exited but is not reaped, so its pid still names the group: kill what it
    // left behind, then reap it.
    ::killpg(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    wait_status_ = status;
    reaped_ = true;
    ended_ = Clock::now();
    sweep_escaped();
    deadline_.cancel();
    kill_timer_.cancel();
    if (!(stdout_.eof && stderr_.eof)) {
      // A descendant that left the group (setsid) may hold the pipes open: stop waiting soon.
      drain_timer_.expires_after(seconds(options_.drain_timeout_s));
      drain_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
        if (ec) return;
        self->stdout_pipe_.close();
        self->stderr_pipe_.close();
      });
    }
    maybe_finish();
  }

  void stop(Stop why) {
    if (reaped_ || stop_ != Stop::none || pid_ < 0) return;
    stop_ = why;
    ::killpg(pid_, SIGTERM);
    kill_timer_.expires_after(seconds(order_.kill_grace_s));
    kill_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (!ec && !self->reaped_) ::killpg(self->pid_, SIGKILL);
    });
  }

  void maybe_finish() {
    if (reaped_ && stdout_.eof && stderr_.eof) finish();
  }

  void finish() {
    if (finished_) return;
    finished_ = true;
    drain_timer_.cancel();
    exit_poll_.cancel();
    boost::system::error_code ignored;
    exit_watch_.close(ignored);
    stdout_.close_file();
    stderr_.close_file();
    Outcome outcome = detail::outcome_of(
        {order_, start_error_, start_error_number_, start_error_path_, stop_, wait_status_, stdout_, stderr_});
    outcome.duration_s = std::chrono::duration<double>((pid_ >= 0 ? ended_ : Clock::now()) - started_).count();
    outcome.cores = cpu_list(options_.resources.cores);
    outcome.gpus = device_list(options_.resources.gpus);
    DoneHandler done = std::move(done_);
    done(std::move(outcome));
  }

  void kill_and_reap() {
    if (pid_ < 0 || reaped_) return;
    ::killpg(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
    sweep_escaped();
  }

  // What the ended attempt left outside its group is looked for on the sweeper's thread.
  void sweep_escaped() const {
    detail::sweep_escaped_later(attempt_id_, "trial " + std::to_string(order_.trial) + " attempt " +
                                                 std::to_string(order_.attempt) + " (" + order_.workdir + ")");
  }

  asio::io_context& io_;
  RunnerOptions options_;
  WorkOrder order_;
  DoneHandler done_;

  CapturedStream stdout_, stderr_;
  asio::posix::stream_descriptor stdout_pipe_, stderr_pipe_, exit_watch_;
  asio::steady_timer exit_poll_, deadline_, kill_timer_, drain_timer_;

  std::shared_ptr<detail::PendingLaunch> launching_;  // while the launcher makes the child
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> launch_work_;
  Stop stop_asked_ = Stop::none;                       // a stop asked for while launching
  bool kill_asked_ = false;
  pid_t pid_ = -1;
  int wait_status_ = 0;
  bool reaped_ = false;
  bool finished_ = false;
  Stop stop_ = Stop::none;
  const std::string attempt_id_ = detail::new_attempt_id();  // LBO_ATTEMPT_ID
  std::string start_error_;
  int start_error_number_ = 0;
  std::string start_error_path_;
  Clock::time_point started_, ended_;
};

Runner::Runner(asio::io_context& io, RunnerOptions options) : io_(io), options_(options) {}

Runner::~Runner() {
  if (current_) current_->abandon();
}

void Runner::start(WorkOrder order, DoneHandler done, ReportHandler report) {
  // The attempt drops its own reference from current_ when it is done, before `done` runs,
  // so that `done` may start the next attempt on this runner.
  auto wrapped = [this, done = std::move(done)](Outcome outcome) {
    current_.reset();
    done(std::move(outcome));
  };
  current_ = std::make_shared<Attempt>(io_, options_, std::move(order), std::move(wrapped), std::move(report));
  current_->start();
}

void Runner::cancel() {
  if (current_) current_->cancel();
}

void Runner::kill() {
  if (current_) current_->kill();
}

bool Runner::busy() const { return current_ != nullptr; }

}  // namespace lbo::workers
