// bench/checkpoint: checkpoint write time and resume time against the number of trials
// (Google Benchmark).
//
//   build/bench/checkpoint [--benchmark_filter=100000]
//
// write: encode the master state (cereal portable binary + CRC-32), write a temporary file,
// fsync, rename, fsync the folder: what a stop costs, and what the background writer spends
// every checkpoint_every_s. resume: read the newest checkpoint back, replay the journal after it
// (1% of the trials, as if the run died between checkpoints) and rebuild the run state.
// journal_only: the same state from the journal alone (two records a trial), for contrast.
// Trials look like a real run's: 6 parameters, a metrics object, a worker name.

#include <benchmark/benchmark.h>

#include <filesystem>
#include <random>

#include "lbo/jobs/job_spec.hpp"
#include "lbo/orchestrator/checkpoint.hpp"
#include "lbo/orchestrator/journal.hpp"
#include "lbo/orchestrator/recovery.hpp"
#include "lbo/orchestrator/run_directory.hpp"
#include "lbo/orchestrator/run_state.hpp"

namespace {

namespace fs = std::filesystem;
using namespace lbo::orchestrator;

const char* const kJob = R"(name = "bench"
[objective]
command = ["true"]
direction = "maximize"
[space]
model = { type = "categorical", choices = ["xgboost", "logreg", "forest"] }
lr = { type = "float", low = 1e-3, high = 0.5, log = true }
depth = { type = "int", low = 1, high = 10 }
n_estimators = { type = "int", low = 20, high = 500 }
C = { type = "float", low = 1e-3, high = 10, log = true }
subsample = { type = "float", low = 0.5, high = 1 }
[[tasks]]
name = "year-1"
budget = 1000000
)";

class Scratch {
 public:
  Scratch() : path_(fs::temp_directory_path() / ("lbo-bench-checkpoint-" + std::to_string(::getpid()))) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~Scratch() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

const lbo::jobs::JobSpec& job() {
  static const lbo::jobs::JobSpec spec = lbo::jobs::parse_job(kJob, "bench.toml");
  return spec;
}

std::vector<Trial> make_trials(std::int64_t n) {
  std::mt19937_64 rng(1);
  std::vector<Trial> trials;
  trials.reserve(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    Trial t;
    t.id = i;
    t.config = job().space.sample(rng);
    t.attempts = 1;
    t.finished = true;
    t.outcome.status = lbo::workers::TrialStatus::ok;
    t.outcome.objective = std::uniform_real_distribution<double>(0.7, 0.9)(rng);
    t.outcome.metrics_json = R"({"auc_std":0.0213,"fit_time_s":0.84,"n_rows":1275})";
    t.outcome.duration_s = 1.25;
    t.worker = "rank" + std::to_string(i % 64) + ":0";
    trials.push_back(std::move(t));
  }
  return trials;
}

Checkpoint make_checkpoint(std::vector<Trial> trials, std::uint64_t sequence) {
  Checkpoint c;
  c.sequence = sequence;
  c.job = JobIdentity::of(job());
  c.trials = std::move(trials);
  return c;
}

void write(benchmark::State& state) {
  const Scratch dir;
  const Checkpoint c = make_checkpoint(make_trials(state.range(0)), 1);
  std::uint64_t sequence = 0;
  for (auto _ : state) write_checkpoint_file(dir.path(), ++sequence, encode_checkpoint(c));
  state.counters["MiB"] = static_cast<double>(encode_checkpoint(c).size()) / (1 << 20);
}

// Journal records for trials [from, to), two each, after a RunStarted.
void append_trials(JournalWriter& journal, const std::vector<Trial>& trials, std::size_t from, std::size_t to) {
  for (std::size_t i = from; i < to; ++i) {
    const Trial& t = trials[i];
    journal.append(TrialStarted{t.id, 0, 1, t.config, t.worker, 0, ProposalSource::model});
    journal.append(TrialFinished{t.id, 1, true, t.outcome, t.worker, 0, 0, t.config, ProposalSource::model});
  }
  journal.sync();
}

void resume(benchmark::State& state) {
  const Scratch dir;
  const auto n = static_cast<std::size_t>(state.range(0));
  const std::vector<Trial> trials = make_trials(state.range(0));
  const std::size_t at_checkpoint = n - n / 100;
  JournalWriter journal = JournalWriter::create(RunPaths(dir.path()).journal());
  journal.append(RunStarted{"bench", 0, 1, JobIdentity::of(job())});
  append_trials(journal, trials, 0, at_checkpoint);
  Checkpoint c = make_checkpoint({trials.begin(), trials.begin() + static_cast<std::ptrdiff_t>(at_checkpoint)}, 1);
  c.journal_bytes = journal.size_bytes();
  write_checkpoint_file(dir.path(), 1, encode_checkpoint(c));
  append_trials(journal, trials, at_checkpoint, n);
  for (auto _ : state) {
    const RecoveredRun run = recover_run(dir.path());
    benchmark::DoNotOptimize(run.state.tasks()[0].finished);
  }
}

void journal_only(benchmark::State& state) {
  const Scratch dir;
  const std::vector<Trial> trials = make_trials(state.range(0));
  JournalWriter journal = JournalWriter::create(RunPaths(dir.path()).journal());
  journal.append(RunStarted{"bench", 0, 1, JobIdentity::of(job())});
  append_trials(journal, trials, 0, trials.size());
  for (auto _ : state) {
    const RecoveredRun run = recover_run(dir.path());
    benchmark::DoNotOptimize(run.state.tasks()[0].finished);
  }
}

}  // namespace

BENCHMARK(write)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(resume)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(journal_only)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();
