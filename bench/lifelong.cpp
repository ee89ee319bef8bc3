// bench/lifelong: sequences of related tasks, as the LBO paper's synthetic protocol (§3.1) and
// the ABLR paper's quadratic family (§3.1). The policies run exactly as in `lbo run --sync`
// with one slot; objectives are evaluated in-process, since this measures proposals.
//
//   build/bench/lifelong [--reps N] [--methods lbo,lbo-resid,lbo-pure,lbo-ucb,lbo-copula,lbo-copula-median,lbo-none,ablr,gp,gp-ucb,gp-copula,gp-copula-median,gp-none,random,libo,libo-ucb,libo-pure,libo-kernel,
//                        jumbo,jumbo-ei,jumbo-paper,jumbo-ei-paper][+key=value...]
//                        [--problems branin,quadratic,cosine1d,cosine2d] [--budget N] [--quadratic-tasks N]
//                        [--cosine-tasks N]
//                        [--sigmas 0.01,0.05,0.1,0.5,1] [--detail 1]
//
// Branin sequences: for each σ in {0.01, 0.05, 0.1, 0.5, 1}, a sequence of 5 Branin functions
// whose parameters (a, b, c, r, s, t) each get N(0, σ²) added, minimized on [-5, 10] × [0, 15];
// every task starts from 5 random points, the same for every method (they come from the trial's
// seed). Regret is best-so-far minus the function's own minimum (found by a dense grid and
// Nelder–Mead). The tables average tasks 2–5, which have earlier tasks to learn from.
// Quadratic: f_t(x) = ½a‖x‖² + bΣx + 3c on [-5, 5]³, (a, b, c) ~ U[0.1, 10]³, 30 tasks in
// sequence; the table averages tasks 2–30.
// Cosine (cosine1d, cosine2d; not run unless asked): LiBO's synthetic environment, App. G.1, 10
// tasks in sequence (see run_cosine).
// Fit time: the time spent in the policy (fits and proposals), per task index, summed over reps.

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "sequences.hpp"

namespace {

using namespace lbo;
using namespace lbo::bench;

const std::vector<double> kDefaultSigmas = {0.01, 0.05, 0.1, 0.5, 1.0};
std::vector<double> kSigmas = kDefaultSigmas;

// The seed of σ's sequences: the same whichever --sigmas list σ comes in, so runs of parts of the
// list (in parallel processes) see the same functions as a run of the whole list.
std::uint64_t sequence_seed(double sigma) {
  const auto at = std::find(kDefaultSigmas.begin(), kDefaultSigmas.end(), sigma);
  if (at != kDefaultSigmas.end()) return 1000 * static_cast<std::uint64_t>(at - kDefaultSigmas.begin() + 1);
  return 1000 * (10 + static_cast<std::uint64_t>(std::llround(sigma * 1e6)));
}
const int kReport[] = {10, 25, 50};

// The minimum on [-5, 10] × [0, 15]: a 600 × 600 grid, then Nelder–Mead from the best 5 points
// (clamped to the box). Written here because only this benchmark needs it.
double branin_minimum(const Branin& f) {
  const auto value = [&](double x1, double x2) {
    return f(std::clamp(x1, -5.0, 10.0), std::clamp(x2, 0.0, 15.0));
  };
  std::vector<std::array<double, 3>> grid;
  const int n = 600;
  for (int i = 0; i <= n; ++i) {
    for (int j = 0; j <= n; ++j) {
      const double x1 = -5 + 15.0 * i / n, x2 = 15.0 * j / n;
      grid.push_back({value(x1, x2), x1, x2});
    }
  }
  std::partial_sort(grid.begin(), grid.begin() + 5, grid.end());
  double best = grid.front()[0];
  for (int k = 0; k < 5; ++k) {
    std::array<std::array<double, 3>, 3> simplex;
    const double h = 15.0 / n;
    const double x0 = grid[k][1], y0 = grid[k][2];
    const std::array<std::array<double, 2>, 3> start = {{{x0, y0}, {x0 + h, y0}, {x0, y0 + h}}};
    for (int v = 0; v < 3; ++v) simplex[v] = {value(start[v][0], start[v][1]), start[v][0], start[v][1]};
    for (int it = 0; it < 400; ++it) {
      std::sort(simplex.begin(), simplex.end());
      const double cx = (simplex[0][1] + simplex[1][1]) / 2, cy = (simplex[0][2] + simplex[1][2]) / 2;
      const auto at = [&](double s) {
        const double x = cx + s * (simplex[2][1] - cx), y = cy + s * (simplex[2][2] - cy);
        return std::array<double, 3>{value(x, y), x, y};
      };
      const auto reflected = at(-1);
      if (reflected[0] < simplex[0][0]) {
        const auto expanded = at(-2);
        simplex[2] = expanded[0] < reflected[0] ? expanded : reflected;
      } else if (reflected[0] < simplex[1][0]) {
        simplex[2] = reflected;
      } else {
        const auto contracted = at(0.5);
        if (contracted[0] < simplex[2][0]) {
          simplex[2] = contracted;
        } else {
          for (int v = 1; v < 3; ++v) {
            simplex[v][1] = (simplex[v][1] + simplex[0][1]) / 2;
            simplex[v][2] = (simplex[v][2] + simplex[0][2]) / 2;
            simplex[v][0] = value(simplex[v][1], simplex[v][2]);
          }
        }
      }
    }
    std::sort(simplex.begin(), simplex.end());
    best = std::min(best, simplex[0][0]);
  }
  return best;
}

// Mean over `curves` of the regret after `at` trials.
double mean_at(const std::vector<std::vector<double>>& curves, int at) {
  double sum = 0;
  int n = 0;
  for (const auto& c : curves) {
    if (static_cast<int>(c.size()) < at) continue;
    sum += c[at - 1];
    ++n;
  }
  return n > 0 ? sum / n : NAN;
}

// The mean over the task curves of (a − b) at `at`, with its standard error: a and b ran on the
// same functions from the same initial points, curve for curve, so the pairing removes the
// spread between functions (heavy-tailed in weakly related Branin sequences).
std::pair<double, double> paired_difference(const std::vector<std::vector<double>>& a,
                                            const std::vector<std::vector<double>>& b, int at) {
  std::vector<double> d;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (static_cast<int>(a[i].size()) >= at && static_cast<int>(b[i].size()) >= at) d.push_back(a[i][at - 1] - b[i][at - 1]);
  }
  if (d.size() < 2) return {NAN, NAN};
  double mean = 0;
  for (double v : d) mean += v;
  mean /= static_cast<double>(d.size());
  double ss = 0;
  for (double v : d) ss += (v - mean) * (v - mean);
  return {mean, std::sqrt(ss / static_cast<double>(d.size() - 1) / static_cast<double>(d.size()))};
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream s(list);
  for (std::string item; std::getline(s, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

void print_times(const std::string& problem, const std::string& method, const std::vector<double>& per_task) {
  std::printf("%-10s %-8s policy seconds per task index:", problem.c_str(), method.c_str());
  for (double s : per_task) std::printf(" %.1f", s);
  double total = 0;
  for (double s : per_task) total += s;
  std::printf(" | total %.1f\n", total);
}

// LiBO's synthetic environment (App. G.1), 1-D or 2-D: per sequence, J* is 5 of the first 50
// (1-D) or 100 (2-D) cosine bases; each task draws its own β (random signs, |β_j| ~ U[0.5, 3],
// so ‖β‖ ≤ 6.7 < 10). Evaluations are noise-free here, so regret is exact. Minimum: a grid of
// 20,001 points (1-D) or 401 × 401 (2-D), then the best grid point's neighbourhood on a grid
// 50 times finer.
std::vector<CosineSum> cosine_sequence(int d, int tasks, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<int>> bases;
  if (d == 1) {
    for (int j = 1; j <= 50; ++j) bases.push_back({j});
  } else {
    for (int i = 1; i <= 10; ++i) {
      for (int j = 1; j <= 10; ++j) bases.push_back({i, j});
    }
  }
  std::shuffle(bases.begin(), bases.end(), rng);
  bases.resize(5);
  std::uniform_real_distribution<double> u(0, 1), magnitude(0.5, 3.0);
  std::vector<CosineSum> sequence;
  for (int t = 0; t < tasks; ++t) {
    CosineSum f{bases, {}};
    for (std::size_t j = 0; j < bases.size(); ++j) f.beta.push_back((u(rng) < 0.5 ? -1 : 1) * magnitude(rng));
    sequence.push_back(std::move(f));
  }
  return sequence;
}

double cosine_minimum(const CosineSum& f, int d) {
  const int n = d == 1 ? 20000 : 400;
  double best = INFINITY;
  std::vector<double> at(static_cast<std::size_t>(d), 0.0), x(static_cast<std::size_t>(d));
  const auto scan = [&](const std::vector<double>& low, double step, int points) {
    std::vector<double> found = low;
    double value = INFINITY;
    const int total = d == 1 ? points + 1 : (points + 1) * (points + 1);
    for (int k = 0; k < total; ++k) {
      x[0] = std::clamp(low[0] + step * (k % (points + 1)), 0.0, 1.0);
      if (d == 2) x[1] = std::clamp(low[1] + step * (k / (points + 1)), 0.0, 1.0);
      if (const double v = f(x); v < value) value = v, found = x;
    }
    return std::make_pair(value, found);
  };
  auto [coarse, point] = scan(at, 1.0 / n, n);
  best = coarse;
  std::vector<double> low(point);
  for (double& v : low) v -= 1.0 / n;
  best = std::min(best, scan(low, 2.0 / n / 100, 100).first);
  return best;
}

void run_cosine(int d, const std::vector<Method>& methods, int reps, int tasks, int budget, bool detail) {
  std::printf("LiBO's cosine family, %d-D: %d tasks x %d trials, |J*| = 5 of %d bases, %d reps, --sync, one slot\n", d,
              tasks, budget, d == 1 ? 50 : 100, reps);
  std::printf("mean best-so-far regret\n%-10s %-9s %10s %10s %10s\n", "tasks", "method", "@10", "@25",
              ("@" + std::to_string(budget)).c_str());
  std::vector<std::vector<CosineSum>> sequences;
  std::vector<std::vector<double>> minima;
  for (int rep = 0; rep < reps; ++rep) {
    sequences.push_back(cosine_sequence(d, tasks, 5000 + 100 * static_cast<std::uint64_t>(d) + static_cast<std::uint64_t>(rep)));
    minima.emplace_back();
    for (const CosineSum& f : sequences.back()) minima.back().push_back(cosine_minimum(f, d));
  }
  const std::string space = d == 1 ? "x1 = { type = \"float\", low = 0, high = 1 }\n"
                                   : "x1 = { type = \"float\", low = 0, high = 1 }\nx2 = { type = \"float\", low = 0, high = 1 }\n";
  const int half = std::max(2, tasks / 2 + 1);
  std::map<std::string, std::vector<std::vector<std::vector<double>>>> by_task;  // [method][task][rep curve]
  for (const Method& method : methods) {
    auto& curves = by_task[method.name];
    curves.assign(static_cast<std::size_t>(tasks), {});
    std::vector<double> seconds(static_cast<std::size_t>(tasks), 0.0);
    for (int rep = 0; rep < reps; ++rep) {
      const jobs::JobSpec job = jobs::parse_job(job_text(method, rep + 1, space, tasks, budget, 5), "cosine.toml");
      std::vector<orchestrator::TaskModelReport> reports;  // --detail 1: the kernel each task ended with
      const auto& seq = sequences[static_cast<std::size_t>(rep)];
      const SequenceRun r = run_sequence(
          job,
          [&](int t, const jobs::Config& c) {
            std::vector<double> x;
            for (const auto& v : c.values) x.push_back(*v);
            return seq[static_cast<std::size_t>(t)](x);
          },
          minima[static_cast<std::size_t>(rep)], [&](orchestrator::Policy& policy, const orchestrator::RunState& state) {
            if (detail) reports = policy.model_report(state);
          });
      for (std::size_t t = 0; t < reports.size(); ++t) {
        std::printf("  (%s, sequence %d, task %zu: regret @10 %.3f, @%d %.3f; kernels %s)\n", method.name.c_str(), rep + 1,
                    t + 1, r.regret[t][9], budget, r.regret[t].back(), reports[t].kernels.c_str());
      }
      if (r.failed_fits > 0) std::printf("(%s, sequence %d: %d model fits failed)\n", method.name.c_str(), rep + 1, r.failed_fits);
      for (int t = 0; t < tasks; ++t) {
        curves[static_cast<std::size_t>(t)].push_back(r.regret[static_cast<std::size_t>(t)]);
        seconds[static_cast<std::size_t>(t)] += r.seconds[static_cast<std::size_t>(t)];
      }
    }
    const auto pooled = [&](int from, int to) {
      std::vector<std::vector<double>> out;
      for (int t = from; t <= to; ++t) out.insert(out.end(), curves[t - 1].begin(), curves[t - 1].end());
      return out;
    };
    for (const auto& [label, from, to] : {std::tuple{std::string("1"), 1, 1}, std::tuple{"2-" + std::to_string(tasks), 2, tasks},
                                          std::tuple{std::to_string(half) + "-" + std::to_string(tasks), half, tasks}}) {
      std::printf("%-10s %-9s", label.c_str(), method.name.c_str());
      for (int at : kReport) std::printf(" %10.3f", mean_at(pooled(from, to), std::min(at, budget)));
      std::printf("\n");
    }
    std::printf("%-10s %-9s", "@25 by task", method.name.c_str());
    for (int t = 1; t <= tasks; ++t) std::printf(" %.2f", mean_at(pooled(t, t), std::min(25, budget)));
    std::printf("\n");
    print_times(std::string("cosine") + std::to_string(d) + "d", method.name, seconds);
    std::fflush(stdout);
  }
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 10, budget = 50, quadratic_tasks = 30, cosine_tasks = 10;
  bool detail = false;  // also print every sequence's tasks 2-5 regret @10 / @25 / at the budget
  std::vector<std::string> method_names = {"lbo", "ablr", "gp", "random"};
  std::vector<std::string> problems = {"branin", "quadratic"};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--reps") reps = std::max(1, std::atoi(value.c_str()));
    else if (key == "--budget") budget = std::max(10, std::atoi(value.c_str()));
    else if (key == "--quadratic-tasks") quadratic_tasks = std::max(2, std::atoi(value.c_str()));
    else if (key == "--cosine-tasks") cosine_tasks = std::max(2, std::atoi(value.c_str()));
    else if (key == "--methods") method_names = split(value);
    else if (key == "--problems") problems = split(value);
    else if (key == "--detail") detail = value != "0";
    else if (key == "--sigmas") {
      kSigmas.clear();
      for (const std::string& v : split(value)) kSigmas.push_back(std::atof(v.c_str()));
    }
    else {
      std::fprintf(stderr, "unknown option %s\n", key.c_str());
      return 2;
    }
  }
  const std::map<std::string, std::string> policies = {
      {"lbo", "surrogate = \"lbo\"\nacquisition = \"ei\""},
      {"lbo-pure", "surrogate = \"lbo\"\nresidual_gp = false\ntransfer_gp = false\nacquisition = \"ei\""},
      {"lbo-resid", "surrogate = \"lbo\"\ntransfer_gp = false\nacquisition = \"ei\""},
      {"lbo-ucb", "surrogate = \"lbo\"\nacquisition = \"ucb\""},
      {"lbo-copula", "surrogate = \"lbo\"\nacquisition = \"ei\"\noutput_warping = \"copula\""},
      {"gp-copula", "surrogate = \"gp\"\nacquisition = \"ei\"\noutput_warping = \"copula\""},
      {"lbo-copula-median", "surrogate = \"lbo\"\nacquisition = \"ei\"\noutput_warping = \"copula_below_median\""},
      {"gp-copula-median", "surrogate = \"gp\"\nacquisition = \"ei\"\noutput_warping = \"copula_below_median\""},
      {"lbo-none", "surrogate = \"lbo\"\nacquisition = \"ei\"\noutput_warping = \"none\""},  // before the default
      {"lbo-yj", "surrogate = \"lbo\"\nacquisition = \"ei\"\noutput_warping = \"yeo_johnson\""},
      {"gp-yj", "surrogate = \"gp\"\nacquisition = \"ei\"\noutput_warping = \"yeo_johnson\""},
      {"gp-none", "surrogate = \"gp\"\nacquisition = \"ei\"\noutput_warping = \"none\""},
      {"gp-ucb", "surrogate = \"gp\"\nacquisition = \"ucb\""},
      {"ablr", "surrogate = \"ablr\"\nacquisition = \"ei\""},
      {"gp", "surrogate = \"gp\"\nacquisition = \"ei\""},
      {"random", "surrogate = \"random\""},
      {"libo", "surrogate = \"libo\"\nacquisition = \"ei\"\ninitial_random = \"libo\""},
      {"libo-ucb", "surrogate = \"libo\"\nacquisition = \"ucb\"\ninitial_random = \"libo\""},
      {"libo-pure", "surrogate = \"libo\"\nacquisition = \"ei\"\ninitial_random = \"libo\"\nlibo_full_share = false"},
      {"libo-kernel", "surrogate = \"libo\"\nacquisition = \"ei\"\ninitial_random = \"libo\"\nlibo_gp_switch = false"},
      {"jumbo", "surrogate = \"jumbo\"\nacquisition = \"ucb\""},
      {"jumbo-ei", "surrogate = \"jumbo\"\nacquisition = \"ei\""},
      {"jumbo-paper", "surrogate = \"jumbo\"\nacquisition = \"ucb\"\njumbo_cold_switch = false"},
      {"jumbo-ei-paper", "surrogate = \"jumbo\"\nacquisition = \"ei\"\njumbo_cold_switch = false"},
      {"jumbo-l1", "surrogate = \"jumbo\"\nacquisition = \"ucb\"\njumbo_threshold = 1"},
      {"jumbo-ei-l1", "surrogate = \"jumbo\"\nacquisition = \"ei\"\njumbo_threshold = 1"},
  };
  // "lbo+transfer_best=5": a method with more [policy] keys (each "+key=value", as in
  // bench/transfer and bench/real).
  std::vector<Method> methods;
  for (const std::string& name : method_names) {
    std::string base = name.substr(0, name.find('+')), policy;
    if (!policies.count(base)) {
      std::fprintf(stderr, "unknown method %s\n", base.c_str());
      return 2;
    }
    policy = policies.at(base);
    for (std::size_t at = name.find('+'); at != std::string::npos;) {
      const std::size_t end = name.find('+', at + 1);
      const std::string key_value = name.substr(at + 1, end == std::string::npos ? std::string::npos : end - at - 1);
      if (key_value.find('=') == std::string::npos) {
        std::fprintf(stderr, "method %s: expected +key=value after the method's name\n", name.c_str());
        return 2;
      }
      policy += "\n" + key_value.substr(0, key_value.find('=')) + " = " + key_value.substr(key_value.find('=') + 1);
      at = end;
    }
    methods.push_back({name, policy});
  }
  const std::string branin_space =
      "x1 = { type = \"float\", low = -5, high = 10 }\nx2 = { type = \"float\", low = 0, high = 15 }\n";

  if (std::find(problems.begin(), problems.end(), "branin") != problems.end()) {
    std::printf("Branin sequences: 5 tasks x %d trials, 5 initial random points, %d reps, EI (UCB for the -ucb methods), --sync, one slot\n",
                budget, reps);
    std::printf("mean best-so-far regret of tasks 2-5 (and, with several methods, each one's paired difference from the\n"
                "first, curve by curve on the same functions, ± its standard error)\n");
    const std::string last = "@" + std::to_string(budget);
    std::printf("%-8s %-8s %10s %10s %10s\n", "sigma", "method", "@10", "@25", last.c_str());
    std::fflush(stdout);
    // curves[method][sigma index]: task curves of tasks ≥ 2 over reps; first: of task 1.
    std::map<std::string, std::vector<std::vector<std::vector<double>>>> curves;
    std::map<std::string, std::vector<std::vector<double>>> first;
    std::map<std::string, std::vector<double>> seconds;
    for (std::size_t si = 0; si < kSigmas.size(); ++si) {
      // The sequences, the same for every method.
      std::vector<std::vector<Branin>> sequences;
      std::vector<std::vector<double>> minima;
      for (int rep = 0; rep < reps; ++rep) {
        std::mt19937_64 rng(sequence_seed(kSigmas[si]) + static_cast<std::uint64_t>(rep));
        std::normal_distribution<double> noise(0.0, kSigmas[si]);
        std::vector<Branin> sequence(5);
        std::vector<double> m;
        for (Branin& f : sequence) {
          f.a += noise(rng), f.b += noise(rng), f.c += noise(rng), f.r += noise(rng), f.s += noise(rng), f.t += noise(rng);
          m.push_back(branin_minimum(f));
        }
        sequences.push_back(sequence);
        minima.push_back(m);
      }
      for (const Method& method : methods) {
        std::vector<std::vector<double>> later;  // tasks 2-5 over reps
        seconds[method.name].resize(5, 0.0);
        for (int rep = 0; rep < reps; ++rep) {
          const jobs::JobSpec job = jobs::parse_job(job_text(method, rep + 1, branin_space, 5, budget, 5), "branin.toml");
          const auto& seq = sequences[static_cast<std::size_t>(rep)];
          const SequenceRun r = run_sequence(
              job, [&](int t, const jobs::Config& c) { return seq[static_cast<std::size_t>(t)](*c.values[0], *c.values[1]); },
              minima[static_cast<std::size_t>(rep)]);
          later.insert(later.end(), r.regret.begin() + 1, r.regret.end());
          first[method.name].push_back(r.regret.front());
          if (detail) {
            std::printf("  (%s, sigma %g, sequence %d: tasks 2-5 @10/@25/@%d", method.name.c_str(), kSigmas[si], rep + 1, budget);
            for (std::size_t t = 1; t < r.regret.size(); ++t) {
              std::printf(" %.3f/%.3f/%.3f", r.regret[t][std::min(10, budget) - 1], r.regret[t][std::min(25, budget) - 1],
                          r.regret[t].back());
            }
            std::printf(")\n");
            std::fflush(stdout);
          }
          if (r.failed_fits > 0) std::printf("(%s, sigma %g, sequence %d: %d model fits failed)\n", method.name.c_str(), kSigmas[si], rep + 1, r.failed_fits);
          for (int t = 0; t < 5; ++t) seconds[method.name][t] += r.seconds[t];
        }
        std::printf("%-8g %-8s", kSigmas[si], method.name.c_str());
        for (int at : kReport) std::printf(" %10.3f", mean_at(later, std::min(at, budget)));
        std::printf("\n");
        std::fflush(stdout);
        curves[method.name].push_back(std::move(later));
      }
      if (methods.size() > 1) {
        const Method& reference = methods.front();
        for (std::size_t m = 1; m < methods.size(); ++m) {
          std::printf("%-8g %s", kSigmas[si], (methods[m].name + " − " + reference.name + ":").c_str());
          for (int at : kReport) {
            const auto [mean, se] = paired_difference(curves[methods[m].name][si], curves[reference.name][si], std::min(at, budget));
            std::printf("  %+.3f ± %.3f", mean, se);
          }
          std::printf("\n");
        }
        std::fflush(stdout);
      }
    }
    std::printf("\n%-8s %-8s %10s %10s %10s\n", "group", "method", "@10", "@25", last.c_str());
    for (const char* group : {"strong", "weak"}) {
      for (const Method& method : methods) {
        std::vector<std::vector<double>> pooled;
        for (std::size_t si = 0; si < kSigmas.size(); ++si) {
          const bool strong = kSigmas[si] <= 0.1;
          if (strong != (std::string(group) == "strong")) continue;
          const auto& c = curves[method.name][si];
          pooled.insert(pooled.end(), c.begin(), c.end());
        }
        std::printf("%-8s %-8s", group, method.name.c_str());
        for (int at : kReport) std::printf(" %10.3f", mean_at(pooled, std::min(at, budget)));
        std::printf("\n");
      }
    }
    for (const Method& method : methods) {
      std::printf("%-8s %-8s", "task 1", method.name.c_str());
      for (int at : kReport) std::printf(" %10.3f", mean_at(first[method.name], std::min(at, budget)));
      std::printf("\n");
    }
    std::printf("(strong: sigma <= 0.1, weak: sigma >= 0.5; task 1: the first task of every sequence, no earlier task)\n\n");
    for (const Method& method : methods) print_times("branin", method.name, seconds[method.name]);
    std::printf("\n");
    std::fflush(stdout);
  }

  if (std::find(problems.begin(), problems.end(), "quadratic") != problems.end()) {
    const int qbudget = std::min(budget, 20);
    std::printf("Quadratic family: %d tasks x %d trials, 3 initial random points, %d reps, EI (UCB for the -ucb methods), --sync, one slot\n",
                quadratic_tasks, qbudget, reps);
    std::printf("%-8s %10s %10s %10s\n", "method", "@3", "@5", ("@" + std::to_string(qbudget)).c_str());
    for (const Method& method : methods) {
      std::vector<std::vector<double>> later;
      std::vector<double> seconds(static_cast<std::size_t>(quadratic_tasks), 0.0);
      for (int rep = 0; rep < reps; ++rep) {
        std::mt19937_64 rng(static_cast<std::uint64_t>(rep) + 77);
        std::uniform_real_distribution<double> u(0.1, 10.0);
        std::vector<Quadratic> tasks;
        std::vector<double> minima;
        for (int t = 0; t < quadratic_tasks; ++t) {
          tasks.push_back({u(rng), u(rng), u(rng)});
          minima.push_back(tasks.back().minimum());
        }
        const jobs::JobSpec job = jobs::parse_job(job_text(method, rep + 1,
                                                           "x1 = { type = \"float\", low = -5, high = 5 }\n"
                                                           "x2 = { type = \"float\", low = -5, high = 5 }\n"
                                                           "x3 = { type = \"float\", low = -5, high = 5 }\n",
                                                           quadratic_tasks, qbudget, 3),
                                                  "quadratic.toml");
        const SequenceRun r = run_sequence(
            job,
            [&](int t, const jobs::Config& c) {
              return tasks[static_cast<std::size_t>(t)]({*c.values[0], *c.values[1], *c.values[2]});
            },
            minima);
        later.insert(later.end(), r.regret.begin() + 1, r.regret.end());
        for (int t = 0; t < quadratic_tasks; ++t) seconds[static_cast<std::size_t>(t)] += r.seconds[static_cast<std::size_t>(t)];
      }
      std::printf("%-8s %10.3f %10.3f %10.3f\n", method.name.c_str(), mean_at(later, 3), mean_at(later, 5),
                  mean_at(later, qbudget));
      print_times("quadratic", method.name, seconds);
      std::fflush(stdout);
    }
  }
  for (const int d : {1, 2}) {
    const std::string name = "cosine" + std::to_string(d) + "d";
    if (std::find(problems.begin(), problems.end(), name) == problems.end()) continue;
    run_cosine(d, methods, reps, cosine_tasks, budget, detail);
  }
  return 0;
}
