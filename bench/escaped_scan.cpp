// The cost of looking for an ended attempt's escaped processes (workers::kill_escaped): one
// read of every /proc/<pid>/environ. Runs with the machine's processes plus N idle ones
// (`sleep`), N = 0, 250, 500, 1000, as a node running many objectives would have.
//   build/bench/escaped_scan

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>
#include <vector>

#include "lbo/workers/runner.hpp"

extern char** environ;

namespace {

int process_count() {
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    n += name.find_first_not_of("0123456789") == std::string::npos ? 1 : 0;
  }
  return n;
}

void BM_kill_escaped(benchmark::State& state) {
  std::vector<pid_t> sleepers;
  char sleep[] = "sleep";
  char seconds[] = "600";
  char* argv[] = {sleep, seconds, nullptr};
  for (int i = 0; i < state.range(0); ++i) {
    pid_t pid = -1;
    if (posix_spawnp(&pid, "sleep", nullptr, nullptr, argv, environ) == 0) sleepers.push_back(pid);
  }
  for (auto _ : state) benchmark::DoNotOptimize(lbo::workers::kill_escaped("no-such-attempt"));
  state.counters["processes"] = process_count();
  for (pid_t pid : sleepers) ::kill(pid, SIGKILL);
  for (pid_t pid : sleepers) ::waitpid(pid, nullptr, 0);
}
BENCHMARK(BM_kill_escaped)->Arg(0)->Arg(250)->Arg(500)->Arg(1000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
