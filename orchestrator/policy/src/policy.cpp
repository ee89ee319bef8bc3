#include "lbo/orchestrator/policy.hpp"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <string>

#include "lbo/orchestrator/model_policy.hpp"
#include "table_rows.hpp"

namespace lbo::orchestrator {

RandomPolicy::RandomPolicy(jobs::Space space, std::uint64_t seed, std::shared_ptr<const TableRows> rows)
    : space_(std::move(space)), seed_(seed), rows_(std::move(rows)) {}

jobs::Config RandomPolicy::propose(const RunState& state, int task, std::int64_t trial) {
  std::mt19937_64 rng(jobs::trial_seed(seed_, trial));
  if (rows_) {
    // Every row taken (a task added at runtime with a larger budget): a point of the space.
    if (std::optional<jobs::Config> row = rows_->draw(state, task, rng)) return std::move(*row);
  }
  return space_.sample(rng);
}

Proposal RandomPolicy::propose_among(const RunState& state, const std::vector<int>& open, std::int64_t trial) {
  std::mt19937_64 rng(jobs::trial_seed(seed_ ^ 0x7a5c5u, trial));
  const int task = open[std::uniform_int_distribution<std::size_t>(0, open.size() - 1)(rng)];
  return {task, propose(state, task, trial), ProposalSource::random, {}};
}

FitThreads fit_threads(const jobs::JobSpec& job, bool under_mpi) {
  if (job.policy.fit_threads) return {*job.policy.fit_threads, "[policy] fit_threads"};
  if (const char* env = std::getenv("OMP_NUM_THREADS")) {
    char* end = nullptr;
    const long n = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && n >= 1 && n <= 1024) return {static_cast<int>(n), "OMP_NUM_THREADS"};
  }
  cpu_set_t mask;
  CPU_ZERO(&mask);
  const int cores = sched_getaffinity(0, sizeof mask, &mask) == 0 ? std::max(CPU_COUNT(&mask), 1) : 1;
  const std::string of_cores = std::to_string(cores) + " core(s) in lbo's affinity mask";
  if (under_mpi) return {cores, "the " + of_cores};
  // A table's trials are looked up in this process: no objective needs the cores.
  if (job.objective.table) return {cores, "the " + of_cores + "; a tabulated objective starts no process"};
  const int threads = job.workers.threads_per_trial.value_or(1);
  const int left = std::max(cores - job.workers.local_slots * threads, 1);
  return {left, of_cores + " less " + std::to_string(job.workers.local_slots) + " local slot(s)" +
                    (threads > 1 ? " × " + std::to_string(threads) + " thread(s)" : "") + ", at least 1"};
}

std::unique_ptr<Policy> make_policy(const jobs::JobSpec& job, PolicyOptions options) {
  if (job.policy.surrogate == jobs::SurrogateKind::random) {
    return std::make_unique<RandomPolicy>(job.space, job.seed, TableRows::of(job));
  }
  return std::make_unique<ModelPolicy>(job, std::move(options));
}

}  // namespace lbo::orchestrator
