#pragma once
// Shared by the in-process benchmarks (sample_efficiency, lifelong): the test functions and a
// driver that runs a policy exactly as `lbo run --sync` does with one slot, the objective
// evaluated in-process, since these benchmarks measure proposals.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <numbers>
#include <string>
#include <thread>
#include <vector>

#include "lbo/jobs/job_spec.hpp"
#include "lbo/orchestrator/policy.hpp"
#include "lbo/orchestrator/proposal.hpp"
#include "lbo/orchestrator/run_state.hpp"

namespace lbo::bench {

/// Branin–Hoo with its six parameters (the defaults are the standard function, minimum
/// 0.397887 on [-5, 10] × [0, 15]).
struct Branin {
  double a = 1, b = 5.1 / (4 * std::numbers::pi * std::numbers::pi), c = 5 / std::numbers::pi, r = 6, s = 10,
         t = 1 / (8 * std::numbers::pi);
  double operator()(double x1, double x2) const {
    const double u = x2 - b * x1 * x1 + c * x1 - r;
    return a * u * u + s * (1 - t) * std::cos(x1) + s;
  }
};

/// The ABLR paper's quadratic family: f(x) = ½a‖x‖² + bΣx + 3c on [-5, 5]^d.
struct Quadratic {
  double a, b, c;
  double operator()(const std::vector<double>& x) const {
    double sum = 0, squares = 0;
    for (double v : x) sum += v, squares += v * v;
    return 0.5 * a * squares + b * sum + 3 * c;
  }
  /// On [-5, 5]³: separable, each coordinate at clamp(−b/a, −5, 5).
  double minimum() const {
    const double x = std::clamp(-b / a, -5.0, 5.0);
    return 3 * (0.5 * a * x * x + b * x) + 3 * c;
  }
};

/// LiBO's synthetic environment (Kassraie et al., App. G.1): f = Σ_{j∈J*} β_j φ_j on [0, 1]^d
/// with φ_j(x) = cos(jπx) (d = 1, j = 1…50) or cos(iπx₁) cos(jπx₂) (d = 2, i, j = 1…10), |J*| = 5
/// shared by a sequence's tasks, each task its own β (|β_j| ≥ 0.5, ‖β‖ ≤ 10).
struct CosineSum {
  std::vector<std::vector<int>> frequencies;  ///< per active basis, one per dimension
  std::vector<double> beta;
  double operator()(const std::vector<double>& x) const {
    double sum = 0;
    for (std::size_t j = 0; j < beta.size(); ++j) {
      double phi = 1;
      for (std::size_t i = 0; i < x.size(); ++i) phi *= std::cos(frequencies[j][i] * std::numbers::pi * x[i]);
      sum += beta[j] * phi;
    }
    return sum;
  }
};

struct Method {
  std::string name;
  std::string policy;  // [policy] table body
};

/// A minimize job over `space` with `tasks` tasks t0, t1, … of `budget` trials each.
inline std::string job_text(const Method& m, int seed, const std::string& space, int tasks, int budget, int initial) {
  // A method that sets its own design (libo's forced exploration) keeps it.
  const std::string design =
      m.policy.find("initial_random") == std::string::npos ? "\ninitial_random = " + std::to_string(initial) : "";
  std::string text = "name = \"bench\"\nseed = " + std::to_string(seed) +
                     "\n[objective]\ncommand = [\"true\"]\ndirection = \"minimize\"\n[policy]\n" + m.policy + design +
                     "\n[space]\n" + space;
  for (int t = 0; t < tasks; ++t) {
    text += "[[tasks]]\nname = \"t" + std::to_string(t) + "\"\nbudget = " + std::to_string(budget) + "\n";
  }
  return text;
}

/// One run of a job's tasks in order: regret[t][i] is task t's best-so-far regret after i + 1
/// trials (never below 0); seconds[t] the time the policy took on task t (fits and proposals).
struct SequenceRun {
  std::vector<std::vector<double>> regret;
  std::vector<double> seconds;
  int failed_fits = 0;  ///< model fits that failed (proposals then kept the previous model)
};

/// `inspect`, when given, sees the policy and the run after the last trial (e.g. its
/// model_report(state)).
template <class Objective>
SequenceRun run_sequence(const jobs::JobSpec& job, const Objective& value_of, const std::vector<double>& minima,
                         const std::function<void(orchestrator::Policy&, const orchestrator::RunState&)>& inspect = {}) {
  using Clock = std::chrono::steady_clock;
  orchestrator::RunState state;
  state.apply(orchestrator::RunStarted{"bench", 0, 1, orchestrator::JobIdentity::of(job)});
  SequenceRun out;
  const auto log = [&out](const std::string& message) {
    if (message.find("fit failed") != std::string::npos) ++out.failed_fits;
  };
  auto policy = orchestrator::make_policy(job, orchestrator::PolicyOptions{true, log, {}});
  out.regret.resize(job.tasks.size());
  out.seconds.assign(job.tasks.size(), 0.0);
  for (int t = 0; t < static_cast<int>(job.tasks.size()); ++t) {
    double best = INFINITY;
    for (int i = 0; i < job.tasks[t].budget; ++i) {
      const std::int64_t id = static_cast<std::int64_t>(state.trials().size());
      const auto start = Clock::now();
      // As the master: the proposal's source is recorded (LiBO learns from the initial design).
      const orchestrator::Proposal proposal = policy->propose_among(state, {t}, id);
      const jobs::Config& config = proposal.config;
      out.seconds[t] += std::chrono::duration<double>(Clock::now() - start).count();
      state.apply(orchestrator::TrialStarted{id, t, 1, config, "local:0", 0, proposal.source});
      workers::Outcome outcome;
      outcome.status = workers::TrialStatus::ok;
      outcome.objective = value_of(t, config);
      state.apply(orchestrator::TrialFinished{id, 1, true, outcome, "local:0", 0, t, config, proposal.source});
      const auto fit_start = Clock::now();
      policy->results_committed(state);  // as the --sync master, wait for the fit
      while (policy->fitting()) std::this_thread::sleep_for(std::chrono::microseconds(200));
      out.seconds[t] += std::chrono::duration<double>(Clock::now() - fit_start).count();
      best = std::min(best, outcome.objective);
      out.regret[t].push_back(std::max(0.0, best - minima[t]));
    }
  }
  if (inspect) inspect(*policy, state);
  return out;
}

}  // namespace lbo::bench
