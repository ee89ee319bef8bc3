// bench/surrogate_scaling: time to fit and to propose one configuration against the number of
// observations N, spread over 20 tasks, for ABLR and the GP (Google Benchmark).
//
//   build/bench/surrogate_scaling [--benchmark_filter=ablr]
//
// fit_cold: a fresh model. fit_warm: a refit after one more observation, warm-started from the
// previous fit (what a running lbo does after each result). propose: one acquisition
// maximization (EI, 1024 Sobol candidates, 5 L-BFGS-B refinements) on a task posterior with 3
// running trials hallucinated. The GP is cubic per task, so it stops at N = 5000.

#include <benchmark/benchmark.h>

#include <random>

#include "lbo/surrogate/ablr.hpp"
#include "lbo/surrogate/acquisition.hpp"
#include "lbo/surrogate/maximizer.hpp"
#include "lbo/surrogate/surrogate.hpp"

namespace {

using namespace lbo::surrogate;

constexpr int kTasks = 20;
constexpr int kDimension = 4;

// Related tasks: a bowl whose centre and scale move from task to task, plus noise.
TaskData make_data(int total, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> noise(0.0, 0.01);
  TaskData data;
  for (int t = 0; t < kTasks; ++t) {
    const int n = total / kTasks + (t < total % kTasks ? 1 : 0);
    Eigen::VectorXd centre(kDimension);
    for (int j = 0; j < kDimension; ++j) centre(j) = 0.3 + 0.4 * u(rng);
    const double scale = 0.5 + u(rng);
    Observations o{Eigen::MatrixXd(n, kDimension), Eigen::VectorXd(n)};
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < kDimension; ++j) o.X(i, j) = u(rng);
      o.y(i) = -scale * (o.X.row(i).transpose() - centre).squaredNorm() + noise(rng);
    }
    data.tasks.push_back(std::move(o));
  }
  return data;
}

// The same data minus one observation of task 0 (the state before the last result arrived).
TaskData without_last(TaskData data) {
  Observations& o = data.tasks[0];
  const Eigen::Index n = o.y.size() - 1;
  o.X.conservativeResize(n, Eigen::NoChange);
  o.y.conservativeResize(n);
  return data;
}

std::unique_ptr<Surrogate> make(bool ablr) {
  if (ablr) return std::make_unique<Ablr>(kDimension);
  return std::make_unique<GpSurrogate>();
}

void fit_cold(benchmark::State& state, bool ablr) {
  const TaskData data = make_data(static_cast<int>(state.range(0)), 1);
  for (auto _ : state) {
    auto model = make(ablr);
    model->fit(data, 7);
    benchmark::DoNotOptimize(model->posterior(0));
  }
  state.counters["N"] = static_cast<double>(state.range(0));
}

void fit_warm(benchmark::State& state, bool ablr) {
  const TaskData data = make_data(static_cast<int>(state.range(0)), 1);
  auto model = make(ablr);
  model->fit(without_last(data), 7);
  for (auto _ : state) {
    model->fit(data, 8);
    benchmark::DoNotOptimize(model->posterior(0));
  }
  state.counters["N"] = static_cast<double>(state.range(0));
}

void propose(benchmark::State& state, bool ablr) {
  const TaskData data = make_data(static_cast<int>(state.range(0)), 1);
  auto model = make(ablr);
  model->fit(data, 7);
  std::vector<CoordinateGroup> groups;
  for (int j = 0; j < kDimension; ++j) groups.push_back({CoordinateGroup::Kind::continuous, j, 1, 0});
  const BoxSpace space(groups);
  AcquisitionParams params;
  params.incumbent = (data.tasks[0].y.maxCoeff() - model->posterior(0)->standardization().offset) /
                     model->posterior(0)->standardization().scale;
  const Eigen::MatrixXd pending = Eigen::MatrixXd::Constant(3, kDimension, 0.5) + 0.1 * Eigen::MatrixXd::Random(3, kDimension);
  std::uint64_t seed = 0;
  for (auto _ : state) {
    auto acquisition = std::make_shared<Acquisition>(AcquisitionKind::ei, params, model->posterior(0));
    acquisition->set_pending(pending);
    BoxObjective objective;
    objective.values = [acquisition](const Eigen::MatrixXd& X) { return acquisition->evaluate(X); };
    objective.gradient = [acquisition](const Eigen::VectorXd& x, Eigen::VectorXd& g) { return acquisition->evaluate(x, g); };
    benchmark::DoNotOptimize(maximize(objective, space, MaximizerOptions{}, ++seed));
  }
  state.counters["N"] = static_cast<double>(state.range(0));
}

void register_all() {
  for (const bool ablr : {true, false}) {
    const std::string name = ablr ? "ablr" : "gp";
    const std::vector<int> sizes = ablr ? std::vector<int>{100, 1000, 5000, 20000} : std::vector<int>{100, 1000, 5000};
    for (int n : sizes) {
      const int repeats = n >= 5000 ? 1 : 3;
      benchmark::RegisterBenchmark((name + "/fit_cold").c_str(), fit_cold, ablr)
          ->Arg(n)->Iterations(repeats)->Unit(benchmark::kMillisecond)->UseRealTime();
      benchmark::RegisterBenchmark((name + "/fit_warm").c_str(), fit_warm, ablr)
          ->Arg(n)->Iterations(repeats)->Unit(benchmark::kMillisecond)->UseRealTime();
      benchmark::RegisterBenchmark((name + "/propose").c_str(), propose, ablr)
          ->Arg(n)->Iterations(5)->Unit(benchmark::kMillisecond)->UseRealTime();
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
