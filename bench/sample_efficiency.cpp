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
#include <random>
#include <string>
#include <vector>

#include "sequences.hpp"

namespace {

using namespace lbo;
using namespace lbo::bench;

constexpr int kBudget = 50;
constexpr int kQuadraticTasks = 5;
const int kReport[] = {10, 25, 50};

void print_row(const std::string& problem, const std::string& method, const std::vector<std::vector<double>>& per_seed,
               double seconds) {
  std::printf("%-10s %-20s", problem.c_str(), method.c_str());
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
  // Each GP acquisition with the job file's default output warping and with none ("-none"),
  // so that a default is measured on these synthetic cases too (bench/README, "Sample
  // efficiency").
  const std::vector<Method> methods = {
      {"random", "surrogate = \"random\""},
      {"gp-ucb", "surrogate = \"gp\"\nacquisition = \"ucb\""},
      {"gp-ucb-none", "surrogate = \"gp\"\nacquisition = \"ucb\"\noutput_warping = \"none\""},
      {"gp-ucb-copula-median", "surrogate = \"gp\"\nacquisition = \"ucb\"\noutput_warping = \"copula_below_median\""},
      {"gp-ei", "surrogate = \"gp\"\nacquisition = \"ei\""},
      {"gp-ei-none", "surrogate = \"gp\"\nacquisition = \"ei\"\noutput_warping = \"none\""},
      {"gp-hedge", "surrogate = \"gp\"\nacquisition = \"hedge\""},
      {"gp-hedge-none", "surrogate = \"gp\"\nacquisition = \"hedge\"\noutput_warping = \"none\""},
      {"ablr-ei", "surrogate = \"ablr\"\nacquisition = \"ei\""},
  };
  std::printf("mean best-so-far regret over %d seeds (quadratic: tasks 2-%d), initial_random = 3, one slot, --sync\n",
              seeds, kQuadraticTasks);
  std::printf("%-10s %-20s %10s %10s %10s %9s\n", "problem", "method", "@10", "@25", "@50", "seconds");
  for (const Method& m : methods) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::vector<double>> curves;
    for (int seed = 1; seed <= seeds; ++seed) {
      const jobs::JobSpec job = jobs::parse_job(
          job_text(m, seed, "x1 = { type = \"float\", low = -5, high = 10 }\nx2 = { type = \"float\", low = 0, high = 15 }\n", 1,
                   kBudget, 3),
          "branin.toml");
      curves.push_back(run_sequence(job,
                                    [](int, const jobs::Config& c) { return Branin{}(*c.values[0], *c.values[1]); },
                                    {0.397887357729739})
                           .regret[0]);
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
                                                         kQuadraticTasks, kBudget, 3),
                                                "quadratic.toml");
      const std::vector<std::vector<double>> c = run_sequence(
          job,
          [&](int t, const jobs::Config& config) {
            return tasks[t]({*config.values[0], *config.values[1], *config.values[2]});
          },
          minima).regret;
      curves.insert(curves.end(), c.begin() + 1, c.end());
    }
    print_row("quadratic", m.name, curves, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return 0;
}
