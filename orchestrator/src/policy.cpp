#include "lbo/orchestrator/policy.hpp"

#include <random>

#include "lbo/orchestrator/model_policy.hpp"

namespace lbo::orchestrator {

jobs::Config RandomPolicy::propose(const RunState& /*state*/, int /*task*/, std::int64_t trial) {
  std::mt19937_64 rng(jobs::trial_seed(seed_, trial));
  return space_.sample(rng);
}

std::unique_ptr<Policy> make_policy(const jobs::JobSpec& job, PolicyOptions options) {
  if (job.policy.surrogate == jobs::SurrogateKind::random) return std::make_unique<RandomPolicy>(job.space, job.seed);
  return std::make_unique<ModelPolicy>(job, std::move(options));
}

}  // namespace lbo::orchestrator
