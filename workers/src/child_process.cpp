#include "child_process.hpp"

#include "lbo/jobs/job_spec.hpp"
#include "lbo/workers/runner.hpp"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <string_view>
#include <vector>

extern char** environ;

namespace lbo::workers::detail {

namespace {

// RAII for the spawn attribute objects.
struct SpawnSetup {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attributes);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

std::string errno_text(const char* what, int error) {
  return std::string(what) + ": " + std::strerror(error);
}

// Variables an MPI launcher sets for this process: a child that inherits them and calls
// MPI_Init would try to join lbo's own job.
bool is_launcher_variable(std::string_view entry) {
  for (std::string_view prefix :
       {"OMPI_COMM_WORLD_", "OMPI_UNIVERSE_SIZE=", "OMPI_APP_CTX_", "OMPI_FIRST_RANKS=", "OMPI_NUM_APP_CTX=",
        "OMPI_FILE_LOCATION=", "OMPI_COMMAND=", "OMPI_ARGV=", "OMPI_MCA_ess", "OMPI_MCA_orte_", "OMPI_MCA_pmix",
        "OMPI_MCA_initial_wdir=", "OMPI_MCA_shmem_RUNTIME_QUERY_hint=", "PMIX_", "PMI_"}) {
    if (entry.substr(0, prefix.size()) == prefix) return true;
  }
  return false;
}

}  // namespace

bool SpawnResult::host_limit() const {
  switch (error_number) {
    case EAGAIN: case ENOMEM: case EMFILE: case ENFILE: case ENOSPC: case EIO:
      return true;
    default:
      return false;
  }
}

SpawnResult spawn_child(const SpawnRequest& request) {
  SpawnResult result;
  if (request.argv.empty()) {
    result.error = "empty command";
    return result;
  }
  SpawnSetup setup;
  int rc = 0;
  auto check = [&](int code, const char* what) {
    if (code != 0 && rc == 0) {
      rc = code;
      result.error = errno_text(what, code);
      result.error_number = code;
    }
  };
  check(posix_spawn_file_actions_addopen(&setup.actions, 0, "/dev/null", O_RDONLY, 0), "stdin");
  check(posix_spawn_file_actions_adddup2(&setup.actions, request.stdout_fd, 1), "stdout");
  check(posix_spawn_file_actions_adddup2(&setup.actions, request.stderr_fd, 2), "stderr");
  check(posix_spawn_file_actions_addclosefrom_np(&setup.actions, 3), "close descriptors");
  check(posix_spawn_file_actions_addchdir_np(&setup.actions, request.workdir.c_str()), "chdir");

  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  check(posix_spawnattr_setsigmask(&setup.attributes, &none), "signal mask");
  check(posix_spawnattr_setsigdefault(&setup.attributes, &all), "signal defaults");
  check(posix_spawnattr_setpgroup(&setup.attributes, 0), "process group");
  check(posix_spawnattr_setflags(&setup.attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                                        POSIX_SPAWN_SETSIGDEF),
        "spawn flags");
  if (rc != 0) return result;

  std::vector<char*> argv, envp;
  for (const std::string& a : request.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const std::string& e : request.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  // posix_spawn has no affinity attribute: the child inherits the calling thread's mask, so
  // this thread takes the slot's cores for the spawn and gets its own back right after.
  cpu_set_t own_mask;
  const bool pinned = !request.cores.empty();
  if (pinned) {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    for (int cpu : request.cores) CPU_SET(cpu, &mask);
    if (sched_getaffinity(0, sizeof own_mask, &own_mask) != 0 || sched_setaffinity(0, sizeof mask, &mask) != 0) {
      result.error_number = errno;
      result.error = errno_text("cannot pin the trial to its cores", errno);
      return result;
    }
  }
  // posix_spawnp searches PATH of *this* process for a bare program name.
  pid_t pid = -1;
  rc = posix_spawnp(&pid, argv[0], &setup.actions, &setup.attributes, argv.data(), envp.data());
  if (pinned) sched_setaffinity(0, sizeof own_mask, &own_mask);
  if (rc != 0) {
    result.error = "cannot start " + request.argv[0] + ": " + std::strerror(rc);
    // ENOENT or EACCES for a script that exists: its #! line names what is missing.
    if (rc == ENOENT || rc == EACCES) {
      if (const auto problem = jobs::interpreter_problem(request.argv[0])) {
        result.error = "cannot start " + request.argv[0] + ": " + *problem;
      }
    }
    result.error_number = rc;
    return result;
  }
  result.pid = pid;
  return result;
}

int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  const long fd = ::syscall(SYS_pidfd_open, pid, 0);
  if (fd >= 0) {
    ::fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC);
    return static_cast<int>(fd);
  }
#else
  (void)pid;
#endif
  return -1;
}

namespace {

// What /proc/<pid>/stat says of a process that matters to a sweep.
struct ProcessStat {
  char state = 0;
  pid_t group = 0;
  bool kernel_thread = false;
  bool environment_mapped = false;  // env_start is set: not in the middle of an execve, not exiting
};

std::optional<ProcessStat> read_stat(const std::filesystem::path& dir) {
  std::ifstream stat(dir / "stat");
  std::string line;
  if (!std::getline(stat, line)) return std::nullopt;
  const auto close = line.rfind(')');
  if (close == std::string::npos || close + 2 > line.size()) return std::nullopt;
  // The fields after the name, from field 3 on (proc(5)): state ppid pgrp session tty_nr tpgid
  // flags ...; env_start is field 50. Read as words: some are signed, rsslim may be 2^64 - 1.
  std::istringstream rest(line.substr(close + 2));
  const std::vector<std::string> fields{std::istream_iterator<std::string>(rest), std::istream_iterator<std::string>()};
  const auto field = [&](std::size_t number) { return number - 3 < fields.size() ? fields[number - 3] : std::string(); };
  constexpr unsigned long kPfKthread = 0x00200000;  // PF_KTHREAD of linux/sched.h
  ProcessStat s;
  s.state = field(3).empty() ? 0 : field(3)[0];
  s.group = static_cast<pid_t>(std::strtol(field(5).c_str(), nullptr, 10));
  s.kernel_thread = (std::strtoul(field(9).c_str(), nullptr, 10) & kPfKthread) != 0;
  s.environment_mapped = std::strtoul(field(50).c_str(), nullptr, 10) != 0;
  return s;
}

// Calls `visit(environment, group)` for every live process outside our own process group, with
// its whole /proc/<pid>/environ (NUL-separated entries) and its process group id.
//
// A process in the middle of an execve reads as an empty environment until the kernel has laid
// out the new image's (env_start is still 0): under load that lasts milliseconds, and a daemon
// caught exec'ing `sleep` went unseen and outlived its attempt (integration_escaped, once in CI).
// Such a process is read again until its environment is mapped or it is gone, at most 2 s; a
// process whose environment is really empty (env -i) has env_start set and is passed at once,
// one whose environment is not ours to read (another user's) fails to open and is passed too.
void for_each_process(const std::function<void(std::string_view, pid_t)>& visit) {
  std::error_code ec;
  std::string environment;
  for (const auto& dir : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = dir.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::optional<ProcessStat> stat;
    const auto read_environment = [&] {  // false: not ours to read (another user's) or gone
      std::ifstream environ_file(dir.path() / "environ", std::ios::binary);
      environment.assign(std::istreambuf_iterator<char>(environ_file), std::istreambuf_iterator<char>());
      return environ_file.is_open();
    };
    for (int look = 0; look < 2000; ++look) {
      if (look > 0) ::usleep(1000);
      if (!read_environment()) break;
      stat = read_stat(dir.path());
      if (!stat || stat->state == 'Z' || stat->state == 'X' || stat->kernel_thread || !environment.empty()) break;
      if (stat->environment_mapped) {  // mapped now: an execve may have ended between the two reads
        read_environment();
        break;
      }
    }
    if (!stat || environment.empty() || stat->state == 'Z' || stat->kernel_thread) continue;
    if (stat->group <= 1 || stat->group == ::getpgrp()) continue;
    visit(environment, stat->group);
  }
}

void add_group(std::vector<pid_t>& groups, pid_t group) {
  if (std::find(groups.begin(), groups.end(), group) == groups.end()) groups.push_back(group);
}

// Process groups (other than ours) of live processes whose environment `matches`.
std::vector<pid_t> groups_with_environment(const std::function<bool(std::string_view)>& matches) {
  std::vector<pid_t> groups;
  for_each_process([&](std::string_view environment, pid_t group) {
    if (matches(environment)) add_group(groups, group);
  });
  return groups;
}

// The value of the entry `name`= in the NUL-separated `environment`, if it has one.
std::optional<std::string_view> entry_value(std::string_view environment, std::string_view name) {
  for (std::size_t at = environment.find(name); at != std::string_view::npos; at = environment.find(name, at + 1)) {
    if ((at != 0 && environment[at - 1] != '\0') || environment.substr(at + name.size(), 1) != "=") continue;
    const std::size_t begin = at + name.size() + 1;
    const std::size_t end = environment.find('\0', begin);
    return environment.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin);
  }
  return std::nullopt;
}

}  // namespace

}  // namespace lbo::workers::detail

namespace lbo::workers {

namespace {

// Whether the NUL-separated `environment` holds `entry` ("NAME=value") as a whole entry.
bool has_entry(std::string_view environment, std::string_view entry) {
  for (std::size_t at = environment.find(entry); at != std::string_view::npos; at = environment.find(entry, at + 1)) {
    const std::size_t end = at + entry.size();
    if ((at == 0 || environment[at - 1] == '\0') && (end == environment.size() || environment[end] == '\0')) return true;
  }
  return false;
}

// Whether it holds an entry that starts with `prefix`.
bool has_entry_prefix(std::string_view environment, std::string_view prefix) {
  for (std::size_t at = environment.find(prefix); at != std::string_view::npos; at = environment.find(prefix, at + 1)) {
    if (at == 0 || environment[at - 1] == '\0') return true;
  }
  return false;
}

int kill_groups(const std::function<bool(std::string_view)>& matches, bool wait) {
  const std::vector<pid_t> groups = detail::groups_with_environment(matches);
  for (pid_t g : groups) ::killpg(g, SIGKILL);
  for (int i = 0; wait && i < 100 && !groups.empty() && !detail::groups_with_environment(matches).empty(); ++i) {
    ::usleep(20'000);
  }
  return static_cast<int>(groups.size());
}

}  // namespace

int kill_leftovers(const std::string& workdir) {
  const std::string entry = "LBO_WORKDIR=" + workdir;
  return kill_groups([&](std::string_view environment) { return has_entry(environment, entry); }, true);
}

int kill_leftovers_under(const std::string& folder) {
  const std::string prefix = "LBO_WORKDIR=" + folder + "/";
  return kill_groups([&](std::string_view environment) { return has_entry_prefix(environment, prefix); }, true);
}

int kill_escaped(const std::string& attempt_id) { return kill_escaped(std::vector<std::string>{attempt_id}).front(); }

std::vector<int> kill_escaped(const std::vector<std::string>& attempt_ids) {
  std::map<std::string, std::vector<pid_t>, std::less<>> groups;
  for (const std::string& id : attempt_ids) groups[id];
  detail::for_each_process([&](std::string_view environment, pid_t group) {
    const auto id = detail::entry_value(environment, "LBO_ATTEMPT_ID");
    if (!id) return;
    if (const auto it = groups.find(*id); it != groups.end()) detail::add_group(it->second, group);
  });
  std::vector<int> killed;
  for (const std::string& id : attempt_ids) {
    for (pid_t g : groups[id]) ::killpg(g, SIGKILL);
    killed.push_back(static_cast<int>(groups[id].size()));
    groups[id].clear();  // an id given twice is counted once
  }
  return killed;
}

}  // namespace lbo::workers

namespace lbo::workers::detail {

std::string signal_name(int signal_number) {
  const char* abbrev = sigabbrev_np(signal_number);
  return abbrev != nullptr ? "SIG" + std::string(abbrev) : "signal " + std::to_string(signal_number);
}

std::vector<std::string> inherited_environment(const std::vector<std::string>& overridden) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    if (is_launcher_variable(entry)) continue;
    const std::string_view name = entry.substr(0, entry.find('='));
    if (std::find(overridden.begin(), overridden.end(), name) != overridden.end()) continue;
    env.emplace_back(entry);
  }
  return env;
}

}  // namespace lbo::workers::detail
