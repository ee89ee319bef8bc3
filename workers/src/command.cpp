#include "lbo/workers/command.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "child_process.hpp"

extern char** environ;

namespace lbo::workers {

namespace {

constexpr std::size_t kMostOutput = 65536;

std::vector<std::string> this_environment() {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) env.emplace_back(*e);
  return env;
}

}  // namespace

CommandOutput run_captured(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  CommandOutput result;
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    result.error = std::string("cannot make a pipe: ") + std::strerror(errno);
    return result;
  }
  const detail::SpawnResult spawned = detail::spawn_child({argv, this_environment(), ".", pipe_fds[1], pipe_fds[1], {}});
  ::close(pipe_fds[1]);
  if (spawned.pid < 0) {
    ::close(pipe_fds[0]);
    result.error = spawned.error;
    return result;
  }
  const pid_t pid = spawned.pid;
  const auto give_up = std::chrono::steady_clock::now() + timeout;
  int fd = pipe_fds[0];
  int status = 0;
  bool exited = false;
  while (fd >= 0 || !exited) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(give_up - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    if (fd >= 0) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 50))) > 0) {
        char buffer[4096];
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n > 0 && result.output.size() < kMostOutput) result.output.append(buffer, static_cast<std::size_t>(n));
        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
          ::close(fd);
          fd = -1;
        }
      }
    } else {
      ::usleep(10'000);
    }
    if (!exited && ::waitpid(pid, &status, WNOHANG) == pid) exited = true;
  }
  // Out of time: whatever of its process group still runs goes (a child that keeps its output
  // open as well as the command itself).
  const bool killed = fd >= 0 || !exited;
  if (killed) ::kill(-pid, SIGKILL);
  if (fd >= 0) ::close(fd);
  if (!exited) {
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (killed) {
    // SIGKILL is delivered when each member next runs: on a loaded machine a child of the
    // command may still be alive when the command is reaped. Wait until the group is gone (at
    // most a second: a member left a zombie that no one reaps still counts).
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (::kill(-pid, 0) == 0 && std::chrono::steady_clock::now() < until) ::usleep(1'000);
  }
  if (!exited) {
    result.error = "gave no answer within " + std::to_string(timeout.count()) + " ms";
    return result;
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    result.error = "exited with status " + std::to_string(WEXITSTATUS(status));
  } else if (WIFSIGNALED(status)) {
    result.error = std::string("was killed by SIG") + sigabbrev_np(WTERMSIG(status));
  }
  return result;
}

}  // namespace lbo::workers
