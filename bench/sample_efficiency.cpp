// bench/sample_efficiency: best-so-far regret against trials for random search, GP (UCB, EI,
// GP-Hedge) and ABLR, over 10 seeds, on Branin and on the quadratic task family of the ABLR
// paper. The policies run exactly as in `lbo run --sync` with one slot; the objectives are
// evaluated in-process, since this measures proposals, not subprocesses.
//
//   build/bench/sample_efficiency [seeds]
//
// Branin: one task, 50 trials, regret = best − 0.397887.
// Quadratic: f_t(x) = ½a‖x‖² + bΣx + 3c on [-5,5]³ with (a,b,c) ~ U[0.1,10]³ per task; 5 tasks
// in sequence, 50 trials each; the table averages the regret of tasks 2–5 (those with earlier
// tasks to learn from).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "lbo/jobs/job_spec.hpp"
#include "lbo/orchestrator/policy.hpp"
#include "lbo/orchestrator/run_state.hpp"

namespace {

using namespace lbo;

constexpr int kBudget = 50;
constexpr int kQuadraticTasks = 5;
const int kReport[] = {10, 25, 50};

struct Method {
  std::string name;
  std::string policy;  // [policy] table body
};

double branin(double x1, double x2) {
  constexpr double pi = std::numbers::pi;
  const double b = 5.1 / (4 * pi * pi), c = 5 / pi, t = 1 / (8 * pi);
  const double u = x2 - b * x1 * x1 + c * x1 - 6;
  return u * u + 10 * (1 - t) * std::cos(x1) + 10;
}

struct Quadratic {
  double a, b, c;
  double operator()(const std::vector<double>& x) const {
    double sum = 0, squares = 0;
    for (double v : x) sum += v, squares += v * v;
    return 0.5 * a * squares + b * sum + 3 * c;
  }
  double minimum() const {
    const double x = std::clamp(-b / a, -5.0, 5.0);
    return 3 * (0.5 * a * x * x + b * x) + 3 * c;
  }
};

std::string job_text(const Method& m, int seed, const std::string& space, int tasks) {
  std::string text = "name = \"bench\"\nseed = " + std::to_string(seed) +
                     "\n[objective]\ncommand = [\"true\"]\ndirection = \"minimize\"\n[policy]\n" + m.policy +
                     "\ninitial_random = 3\n[space]\n" + space;
  for (int t = 0; t < tasks; ++t) text += "[[tasks]]\nname = \"t" + std::to_string(t) + "\"\nbudget = " + std::to_string(kBudget) + "\n";
  return text;
}

// regret[t][i]: best-so-far regret of task t after i + 1 of its trials.
using Curves = std::vector<std::vector<double>>;

template <class Objective>
Curves run(const jobs::JobSpec& job, const Objective& value_of, const std::vector<double>& minima) {
  orchestrator::RunState state(job);
  auto policy = orchestrator::make_policy(job, orchestrator::PolicyOptions{true, nullptr});
  Curves curves(job.tasks.size());
  for (int t = 0; t < static_cast<int>(job.tasks.size()); ++t) {
    double best = INFINITY;
    for (int i = 0; i < kBudget; ++i) {
      const std::int64_t id = static_cast<std::int64_t>(state.trials().size());
      state.add_trial(t, policy->propose(state, t, id));
      state.start_attempt(id, "local:0");
      workers::Outcome outcome;
      outcome.status = workers::TrialStatus::ok;
      outcome.objective = value_of(t, state.trial(id).config);
      state.end_attempt(id, outcome, "local:0", true);
      policy->results_committed(state);
      best = std::min(best, outcome.objective);
      curves[t].push_back(best - minima[t]);
    }
  }
  return curves;
}

void print_row(const std::string& problem, const std::string& method, const std::vector<std::vector<double>>& per_seed,
               double seconds) {
  std::printf("%-10s %-10s", problem.c_str(), method.c_str());
  for (int at : kReport) {
    double sum = 0;
    for (const auto& curve : per_seed) sum += curve[at - 1];
    std::printf(" %10.3f", sum / static_cast<double>(per_seed.size()));
  }
  std::printf(" %9.1f\n", seconds);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const int seeds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 10;
  const std::vector<Method> methods = {
      {"random", "surrogate = \"random\""},
      {"gp-ucb", "surrogate = \"gp\"\nacquisition = \"ucb\""},
      {"gp-ei", "surrogate = \"gp\"\nacquisition = \"ei\""},
      {"gp-hedge", "surrogate = \"gp\"\nacquisition = \"hedge\""},
      {"ablr-ei", "surrogate = \"ablr\"\nacquisition = \"ei\""},
  };
  std::printf("mean best-so-far regret over %d seeds (quadratic: tasks 2-%d), initial_random = 3, one slot, --sync\n",
              seeds, kQuadraticTasks);
  std::printf("%-10s %-10s %10s %10s %10s %9s\n", "problem", "method", "@10", "@25", "@50", "seconds");
  for (const Method& m : methods) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::vector<double>> curves;
    for (int seed = 1; seed <= seeds; ++seed) {
      const jobs::JobSpec job = jobs::parse_job(
          job_text(m, seed, "x1 = { type = \"float\", low = -5, high = 10 }\nx2 = { type = \"float\", low = 0, high = 15 }\n", 1),
          "branin.toml");
      curves.push_back(run(job,
                           [](int, const jobs::Config& c) { return branin(*c.values[0], *c.values[1]); },
                           {0.397887357729739})[0]);
    }
    print_row("branin", m.name, curves, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  for (const Method& m : methods) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::vector<double>> curves;  // one per (seed, task ≥ 2)
    for (int seed = 1; seed <= seeds; ++seed) {
      std::mt19937_64 rng(static_cast<std::uint64_t>(seed));
      std::uniform_real_distribution<double> u(0.1, 10.0);
      std::vector<Quadratic> tasks;
      std::vector<double> minima;
      for (int t = 0; t < kQuadraticTasks; ++t) {
        tasks.push_back({u(rng), u(rng), u(rng)});
        minima.push_back(tasks.back().minimum());
      }
      const jobs::JobSpec job = jobs::parse_job(job_text(m, seed,
                                                         "x1 = { type = \"float\", low = -5, high = 5 }\n"
                                                         "x2 = { type = \"float\", low = -5, high = 5 }\n"
                                                         "x3 = { type = \"float\", low = -5, high = 5 }\n",
                                                         kQuadraticTasks),
                                                "quadratic.toml");
      const Curves c = run(
          job,
          [&](int t, const jobs::Config& config) {
            return tasks[t]({*config.values[0], *config.values[1], *config.values[2]});
          },
          minima);
      curves.insert(curves.end(), c.begin() + 1, c.end());
    }
    print_row("quadratic", m.name, curves, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return 0;
}
