#include "lbo/workers/runner.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <utility>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>

#include "child_process.hpp"
#include "lbo/jobs/error.hpp"
#include "lbo/jobs/protocol.hpp"

namespace fs = std::filesystem;
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
  }
  return "?";
}

namespace {

using Clock = std::chrono::steady_clock;

// A file descriptor that closes itself.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    reset(std::exchange(other.fd_, -1));
    return *this;
  }
  ~UniqueFd() { reset(); }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

std::string system_error_text(const std::string& what, int error_number = errno) {
  return what + ": " + std::strerror(error_number);
}

// Writes all of `data`; false on error (the output file is best effort, the trial goes on).
bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

std::string last_nonempty_line(std::string_view text, std::size_t max_length) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) {
    text.remove_suffix(1);
  }
  const std::size_t start = text.rfind('\n');
  std::string_view line = start == std::string_view::npos ? text : text.substr(start + 1);
  if (line.size() > max_length) return std::string(line.substr(0, max_length)) + "...";
  return std::string(line);
}

// Ended attempts whose escaped processes are still to be looked for (kill_escaped), on a
// thread of its own: one look reads every /proc/<pid>/environ, about 0.2 ms with 80 processes
// and 2 ms with 570 on the machine of bench/README.md, which the event loop that refills the
// slots should not wait for. The attempts that ended meanwhile share one look. An attempt's
// processes carry an id of their own (LBO_ATTEMPT_ID: lbo's pid and a count), so a retry that
// starts meanwhile in the same folder is never taken for its predecessor's leftovers (a retry
// itself first kills what any earlier attempt left, synchronously: kill_leftovers). A kill is
// said on stderr, where lbo logs. The thread lives as long as the process (never joined);
// finish_escaped_sweeps waits for the looks asked for before lbo exits.
class EscapedSweeper {
 public:
  static EscapedSweeper& instance() {
    static EscapedSweeper* sweeper = new EscapedSweeper();  // never destroyed: see above
    return *sweeper;
  }

  // `attempt_id`: its LBO_ATTEMPT_ID; `what`: the attempt, for the log line.
  void add(std::string attempt_id, std::string what) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      pending_.push_back({std::move(attempt_id), std::move(what)});
    }
    wake_.notify_one();
  }

  // Waits until every look asked for so far is done, at most `timeout`; how many are not.
  std::size_t finish(std::chrono::steady_clock::duration timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait_for(lock, timeout, [this] { return pending_.empty() && looking_ == 0; });
    return pending_.size() + looking_;
  }

 private:
  struct Ended {
    std::string attempt_id;
    std::string what;
  };

  EscapedSweeper() { std::thread([this] { run(); }).detach(); }

  void run() {
    for (;;) {
      std::vector<Ended> batch;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [this] { return !pending_.empty(); });
        batch.assign(std::make_move_iterator(pending_.begin()), std::make_move_iterator(pending_.end()));
        pending_.clear();
        looking_ = batch.size();
      }
      std::vector<std::string> ids;
      for (const Ended& e : batch) ids.push_back(e.attempt_id);
      const std::vector<int> killed = kill_escaped(ids);
      for (std::size_t i = 0; i < batch.size(); ++i) {
        if (killed[i] > 0) {
          std::fprintf(stderr, "lbo: killed %d process group(s) that %s left running outside its own\n", killed[i],
                       batch[i].what.c_str());
        }
      }
      {
        const std::lock_guard<std::mutex> lock(mutex_);
        looking_ = 0;
      }
      done_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::deque<Ended> pending_;
  std::size_t looking_ = 0;  // attempts of the look under way
};

// A new LBO_ATTEMPT_ID: unique on this host while this process lives, and after (its pid).
std::string new_attempt_id() {
  static std::atomic<std::uint64_t> count{0};
  return std::to_string(::getpid()) + "-" + std::to_string(++count);
}

// Reads a result file; nullopt when it does not exist or is empty.
std::optional<std::string> read_result_file(const fs::path& path, std::string& error) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec || size == 0) return std::nullopt;
  constexpr std::uintmax_t kMaxResultBytes = 16u << 20;
  if (size > kMaxResultBytes) {
    error = "result.json is larger than 16 MiB";
    return std::string();
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

// The state of one attempt. Owned through shared_ptr by every pending handler, so a Runner
// may be destroyed (or start the next attempt) while late handlers are still queued.
class Runner::Attempt : public std::enable_shared_from_this<Runner::Attempt> {
 public:
  Attempt(asio::io_context& io, const RunnerOptions& options, WorkOrder order, DoneHandler done)
      : io_(io),
        options_(options),
        order_(std::move(order)),
        done_(std::move(done)),
        stdout_pipe_(io),
        stderr_pipe_(io),
        exit_watch_(io),
        exit_poll_(io),
        deadline_(io),
        kill_timer_(io),
        drain_timer_(io) {}

  ~Attempt() { kill_and_reap(); }

  void start() {
    started_ = Clock::now();
    if (!prepare_workdir()) return;

    std::array<int, 2> out{-1, -1}, err{-1, -1};
    if (::pipe2(out.data(), O_CLOEXEC) != 0 || ::pipe2(err.data(), O_CLOEXEC) != 0) {
      const int error_number = errno;
      ::close(out[0]), ::close(out[1]);
      fail_before_start(system_error_text("pipe", error_number), error_number);
      return;
    }
    UniqueFd out_write(out[1]), err_write(err[1]);
    stdout_pipe_.assign(out[0]);
    stderr_pipe_.assign(err[0]);

    detail::SpawnRequest request;
    request.argv = order_.argv;
    request.workdir = order_.workdir;
    request.stdout_fd = out_write.get();
    request.stderr_fd = err_write.get();
    request.env = environment();
    request.cores = options_.resources.cores;
    const detail::SpawnResult spawned = detail::spawn_child(request);
    if (spawned.pid < 0) {
      fail_before_start(spawned.error, spawned.host_limit() ? spawned.error_number : 0);
      return;
    }
    pid_ = spawned.pid;
    out_write.reset();  // the child holds the write ends now
    err_write.reset();

    read_stream(stdout_pipe_, stdout_file_, stdout_state_);
    read_stream(stderr_pipe_, stderr_file_, stderr_state_);
    watch_exit();
    if (order_.timeout_s > 0) {
      deadline_.expires_after(seconds(order_.timeout_s));
      deadline_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
        if (!ec) self->stop(Stop::timeout);
      });
    }
  }

  void cancel() { stop(Stop::cancel); }
  void kill() {
    stop(Stop::cancel);
    if (pid_ >= 0 && !reaped_) ::killpg(pid_, SIGKILL);
  }

  // The owner is going away: end the child now and never call `done`.
  void abandon() {
    finished_ = true;
    done_ = nullptr;
    kill_and_reap();
    boost::system::error_code ignored;
    for (asio::posix::stream_descriptor* d : {&stdout_pipe_, &stderr_pipe_, &exit_watch_}) d->close(ignored);
    for (asio::steady_timer* t : {&exit_poll_, &deadline_, &kill_timer_, &drain_timer_}) t->cancel();
  }

 private:
  enum class Stop : std::uint8_t { none, timeout, cancel };

  // What the child wrote to one stream so far.
  struct StreamState {
    std::size_t written = 0;  // bytes in the file
    std::size_t dropped = 0;  // bytes beyond the limit
    bool eof = false;
    std::string partial_line;  // stdout: the line being read
    std::string last_json_line;
    std::string tail;  // stderr: the last few KiB, for the failure reason
    int write_error = 0;  // errno of the first failed write to the file
    std::array<char, 65536> buffer{};
  };

  static Clock::duration seconds(double s) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  }

  fs::path file(std::string_view name) const { return fs::path(order_.workdir) / name; }

  // The trial's folder and files are lbo's to make: a failure here (a full disk, a read-only
  // remount, a quota) is lbo's error, never the objective's, and the objective is not started.
  bool prepare_workdir() {
    std::error_code ec;
    fs::create_directories(order_.workdir, ec);
    if (ec) return fail_before_start("cannot create the trial directory: " + ec.message(), ec.value(), order_.workdir);
    if (order_.attempt > 1) {
      // An earlier lbo killed outright may have left this trial's objective running.
      kill_leftovers(order_.workdir);
      // Keep the previous attempt's output beside the new one: stdout.1, stderr.1, ...
      const std::string suffix = "." + std::to_string(order_.attempt - 1);
      for (std::string_view name : {kStdoutFile, kStderrFile, kResultFile}) {
        fs::rename(file(name), file(std::string(name) + suffix), ec);
      }
    }
    fs::remove(file(kResultFile), ec);
    if (const int error_number = write_params(); error_number != 0) {
      return fail_before_start(system_error_text("cannot write " + std::string(kParamsFile), error_number), error_number,
                               file(kParamsFile).string());
    }
    for (auto [name, fd] : {std::pair{kStdoutFile, &stdout_file_}, std::pair{kStderrFile, &stderr_file_}}) {
      fd->reset(::open(file(name).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
      if (fd->get() < 0) {
        const int error_number = errno;
        return fail_before_start(system_error_text("cannot create " + std::string(name), error_number), error_number,
                                 file(name).string());
      }
    }
    return true;
  }

  // params.json, every byte checked (close included: a network filesystem may report a full
  // disk only there), so an objective never starts on an empty or short file. 0 or an errno.
  int write_params() const {
    UniqueFd fd(::open(file(kParamsFile).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (fd.get() < 0) return errno;
    const std::string text = order_.params_json + "\n";
    if (!write_all(fd.get(), text.data(), text.size())) return errno;
    if (::close(fd.release()) != 0 && errno != EINTR) return errno;
    return 0;
  }

  std::vector<std::string> environment() const {
    std::vector<EnvVar> vars = order_.env;
    vars.push_back({"LBO_PARAMS_FILE", file(kParamsFile).string()});
    vars.push_back({"LBO_RESULT_FILE", file(kResultFile).string()});
    vars.push_back({"LBO_WORKDIR", order_.workdir});
    vars.push_back({"LBO_ATTEMPT", std::to_string(order_.attempt)});
    vars.push_back({"LBO_ATTEMPT_ID", attempt_id_});
    vars.push_back({"LBO_RANK", std::to_string(options_.rank)});
    vars.push_back({"LBO_SLOT", std::to_string(options_.slot)});
    const SlotResources& r = options_.resources;
    vars.push_back({"LBO_THREADS", std::to_string(r.threads)});
    vars.push_back({"LBO_GPUS", device_list(r.gpus)});
    if (r.manage_threads) {
      for (const char* name : {"OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"}) {
        vars.push_back({name, std::to_string(r.threads)});
      }
    }
    if (!r.gpus.empty()) {
      vars.push_back({"CUDA_VISIBLE_DEVICES", device_list(r.gpus)});
      vars.push_back({"ROCR_VISIBLE_DEVICES", device_list(r.gpus)});
    }
    std::vector<std::string> names;
    for (const EnvVar& v : vars) names.push_back(v.name);
    std::vector<std::string> env = detail::inherited_environment(names);
    for (const EnvVar& v : vars) env.push_back(v.name + "=" + v.value);
    return env;
  }

  // Always false, for `return fail_before_start(...)`. `lbo_error_number`: the errno of lbo's
  // own failure, or 0 when the objective's command is at fault.
  // `path`: the file or folder of the trial the reason is about (Outcome::path).
  bool fail_before_start(const std::string& reason, int lbo_error_number = 0, const std::string& path = {}) {
    stdout_state_.eof = stderr_state_.eof = true;
    start_error_ = reason;
    start_error_number_ = lbo_error_number;
    start_error_path_ = path;
    reaped_ = true;
    asio::post(io_, [self = shared_from_this()] { self->finish(); });
    return false;
  }

  void read_stream(asio::posix::stream_descriptor& pipe, UniqueFd& out, StreamState& state) {
    pipe.async_read_some(
        asio::buffer(state.buffer),
        [self = shared_from_this(), &pipe, &out, &state](const boost::system::error_code& ec,
                                                         std::size_t n) {
          if (n > 0) self->consume(out, state, state.buffer.data(), n);
          if (ec) {
            state.eof = true;
            self->maybe_finish();
            return;
          }
          self->read_stream(pipe, out, state);
        });
  }

  void consume(UniqueFd& out, StreamState& state, const char* data, std::size_t n) {
    const std::size_t room = options_.output_limit_bytes - std::min(options_.output_limit_bytes, state.written);
    const std::size_t kept = std::min(room, n);
    if (kept > 0) {
      if (write_all(out.get(), data, kept)) {
        state.written += kept;
      } else if (state.write_error == 0) {
        state.write_error = errno;
      }
    }
    if (kept < n) {
      if (state.dropped == 0) {
        const std::string marker = "\n[lbo: output limit of " + std::to_string(options_.output_limit_bytes) +
                                   " bytes reached; the rest is dropped]\n";
        write_all(out.get(), marker.data(), marker.size());
      }
      state.dropped += n - kept;
    }
    if (&state == &stdout_state_) {
      track_json_lines(state, std::string_view(data, n));
    } else {
      constexpr std::size_t kTail = 4096;
      state.tail.append(data, n);
      if (state.tail.size() > 2 * kTail) state.tail.erase(0, state.tail.size() - kTail);
    }
  }

  // Keeps the last complete stdout line that looks like a JSON object, even past the output
  // limit, so a chatty objective's final result is still found.
  static void track_json_lines(StreamState& state, std::string_view data) {
    constexpr std::size_t kMaxLine = 16u << 20;
    while (!data.empty()) {
      const std::size_t newline = data.find('\n');
      const std::string_view piece = data.substr(0, newline);
      if (state.partial_line.size() + piece.size() <= kMaxLine) state.partial_line.append(piece);
      if (newline == std::string_view::npos) return;
      if (jobs::looks_like_json_object(state.partial_line)) state.last_json_line = state.partial_line;
      state.partial_line.clear();
      data.remove_prefix(newline + 1);
    }
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

  // Kernels without pidfd_open (< 5.3): look every 10 ms whether the child has exited,
  // without reaping it (WNOWAIT), so its process group id stays reserved until on_exit.
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
    if (!(stdout_state_.eof && stderr_state_.eof)) {
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
    if (reaped_ && stdout_state_.eof && stderr_state_.eof) finish();
  }

  void finish() {
    if (finished_) return;
    finished_ = true;
    drain_timer_.cancel();
    exit_poll_.cancel();
    boost::system::error_code ignored;
    exit_watch_.close(ignored);
    stdout_file_.reset();
    stderr_file_.reset();
    Outcome outcome = make_outcome();
    outcome.duration_s = std::chrono::duration<double>((pid_ >= 0 ? ended_ : Clock::now()) - started_).count();
    outcome.cores = cpu_list(options_.resources.cores);
    outcome.gpus = device_list(options_.resources.gpus);
    DoneHandler done = std::move(done_);
    done(std::move(outcome));
  }

  // The last line of stderr, the trial's folder in it written as $LBO_WORKDIR (a traceback
  // names files there): the same failure of many trials reads the same.
  std::string stderr_hint() const {
    std::string line = last_nonempty_line(stderr_state_.tail, 300);
    if (line.empty()) return "";
    const std::string& workdir = order_.workdir;
    for (std::size_t at = workdir.empty() ? std::string::npos : line.find(workdir); at != std::string::npos;
         at = line.find(workdir, at)) {
      line.replace(at, workdir.size(), "$LBO_WORKDIR");
    }
    return "; stderr: " + line;
  }

  // The trial's folder is lbo's: when lbo itself could not write there during the attempt (a
  // full disk, a read-only remount), the attempt's failure is taken for the environment's, not
  // the objective's, and the trial is not charged for it.
  Outcome make_outcome() const {
    Outcome o = objective_outcome();
    if (o.status != TrialStatus::failed && o.status != TrialStatus::crashed) return o;
    for (const auto& [name, state] : {std::pair{kStdoutFile, &stdout_state_}, std::pair{kStderrFile, &stderr_state_}}) {
      if (state->write_error == 0 || !IoError::may_pass(state->write_error)) continue;
      o.reason = "lbo could not write " + std::string(name) + " during the attempt: " + std::strerror(state->write_error) +
                 " (the attempt " + std::string(to_string(o.status)) + ": " + o.reason + ")";
      o.path = file(name).string();
      o.status = TrialStatus::lbo_error;
      o.error_number = state->write_error;
      break;
    }
    return o;
  }

  Outcome objective_outcome() const {
    Outcome o;
    if (!start_error_.empty()) {
      o.status = start_error_number_ != 0 ? TrialStatus::lbo_error : TrialStatus::failed;
      o.reason = start_error_;
      o.error_number = start_error_number_;
      o.path = start_error_path_;
      return o;
    }
    if (stop_ == Stop::cancel) {
      o.status = TrialStatus::cancelled;
      o.reason = "cancelled by lbo";
      return o;
    }
    if (stop_ == Stop::timeout) {
      o.status = TrialStatus::timeout;
      std::ostringstream reason;
      reason << "timed out after " << order_.timeout_s << " s";
      o.reason = reason.str();
      return o;
    }
    if (WIFSIGNALED(wait_status_)) {
      o.status = TrialStatus::crashed;
      o.reason = "killed by " + detail::signal_name(WTERMSIG(wait_status_)) + stderr_hint();
      return o;
    }
    if (const int code = WEXITSTATUS(wait_status_); code != 0) {
      o.status = TrialStatus::failed;
      o.reason = "exit status " + std::to_string(code) + stderr_hint();
      return o;
    }
    std::string file_error;
    std::optional<std::string> text = read_result_file(file(kResultFile), file_error);
    std::string source = "result.json";
    if (!file_error.empty()) {
      o.status = TrialStatus::failed;
      o.reason = file_error;
      return o;
    }
    if (!text) {
      std::string last = stdout_state_.last_json_line;
      // The final line may lack its newline.
      if (jobs::looks_like_json_object(stdout_state_.partial_line)) last = stdout_state_.partial_line;
      if (last.empty()) {
        o.status = TrialStatus::failed;
        o.reason = "no result: write a JSON object to $LBO_RESULT_FILE or print it as the last "
                   "JSON line of stdout" + stderr_hint();
        return o;
      }
      text = std::move(last);
      source = "stdout";
    }
    const jobs::ParsedResult parsed = jobs::parse_objective_result(*text);
    if (!parsed.result) {
      o.status = TrialStatus::failed;
      o.reason = source + ": " + parsed.error;
      return o;
    }
    o.status = TrialStatus::ok;
    o.objective = parsed.result->objective;
    o.steps = parsed.result->steps;
    o.metrics_json = parsed.result->metrics_json;
    return o;
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
    EscapedSweeper::instance().add(attempt_id_, "trial " + std::to_string(order_.trial) + " attempt " +
                                                    std::to_string(order_.attempt) + " (" + order_.workdir + ")");
  }

  asio::io_context& io_;
  RunnerOptions options_;
  WorkOrder order_;
  DoneHandler done_;

  asio::posix::stream_descriptor stdout_pipe_, stderr_pipe_, exit_watch_;
  asio::steady_timer exit_poll_, deadline_, kill_timer_, drain_timer_;
  UniqueFd stdout_file_, stderr_file_;
  StreamState stdout_state_, stderr_state_;

  pid_t pid_ = -1;
  int wait_status_ = 0;
  bool reaped_ = false;
  bool finished_ = false;
  Stop stop_ = Stop::none;
  const std::string attempt_id_ = new_attempt_id();  // LBO_ATTEMPT_ID
  std::string start_error_;
  int start_error_number_ = 0;
  std::string start_error_path_;
  Clock::time_point started_, ended_;
};

std::size_t finish_escaped_sweeps(double timeout_s) {
  return EscapedSweeper::instance().finish(
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(timeout_s)));
}

Runner::Runner(asio::io_context& io, RunnerOptions options) : io_(io), options_(options) {}

Runner::~Runner() {
  if (current_) current_->abandon();
}

void Runner::start(WorkOrder order, DoneHandler done) {
  // The attempt drops its own reference from current_ when it is done, before `done` runs,
  // so that `done` may start the next attempt on this runner.
  auto wrapped = [this, done = std::move(done)](Outcome outcome) {
    current_.reset();
    done(std::move(outcome));
  };
  current_ = std::make_shared<Attempt>(io_, options_, std::move(order), std::move(wrapped));
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
