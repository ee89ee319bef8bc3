#include "lbo/orchestrator/policy.hpp"

#include <random>

#include "lbo/orchestrator/model_policy.hpp"

namespace lbo::orchestrator {

jobs::Config RandomPolicy::propose(const RunState& /*state*/, int /*task*/, std::int64_t trial) {
  std::mt19937_64 rng(jobs::trial_seed(seed_, trial));
  return space_.sample(rng);
}

Proposal RandomPolicy::propose_among(const RunState& state, const std::vector<int>& open, std::int64_t trial) {
  std::mt19937_64 rng(jobs::trial_seed(seed_ ^ 0x7a5c5u, trial));
  const int task = open[std::uniform_int_distribution<std::size_t>(0, open.size() - 1)(rng)];
  return {task, propose(state, task, trial), ProposalSource::random, {}};
}

std::unique_ptr<Policy> make_policy(const jobs::JobSpec& job, PolicyOptions options) {
  if (job.policy.surrogate == jobs::SurrogateKind::random) return std::make_unique<RandomPolicy>(job.space, job.seed);
  return std::make_unique<ModelPolicy>(job, std::move(options));
}

}  // namespace lbo::orchestrator
