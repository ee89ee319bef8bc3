#pragma once
// The job file (TOML): what to optimise, how to run it, and the tasks, fully validated.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lbo/jobs/objective.hpp"
#include "lbo/jobs/objective_table.hpp"
#include "lbo/jobs/space.hpp"

namespace lbo::jobs {

/// What failed trials teach ([objective] failures): where configurations fail (learn: a
/// classifier every proposal weighs, surrogate/feasibility.hpp), or nothing (ignore).
enum class FailureLearning : std::uint8_t { learn, ignore };
std::string_view to_string(FailureLearning learning);

struct ObjectiveSpec {
  /// argv with placeholders; relative paths that exist next to the job file made absolute.
  /// Empty with a table.
  std::vector<std::string> command;
  /// [objective] table: tabulated evaluations instead of a command (objective_table.hpp).
  std::optional<ObjectiveTableSpec> table;
  /// The table, read with the job file (shared by the spec's copies); null without one.
  std::shared_ptr<const ObjectiveTable> table_data;
  Direction direction = Direction::maximize;
  std::optional<double> timeout_s;  ///< per attempt; none = no limit
  double kill_grace_s = 5.0;        ///< SIGTERM → SIGKILL delay when a trial is stopped
  int retries = 0;                  ///< extra attempts after a failed, crashed or timed-out one
  /// > 0: every result reports "steps" with this many values, one per step function f_1..f_T
  /// (stepwise model selection); each step is modelled as its own task.
  int stepwise = 0;
  FailureLearning failures = FailureLearning::learn;
  /// [objective] objectives: two or more named objectives, the result line giving each by its
  /// name; the first is the primary one (`direction` is its direction, the one early stopping
  /// and a task's single best go by). Empty: one objective, "objective", in `direction`.
  std::vector<Objective> several;
  /// Each objective's `reference` (the hypervolume's reference point), NaN where the job gives
  /// none (derived from the task's results); one per objective of `several`.
  std::vector<double> reference;

  /// The primary objective: the result line's "objective", or the first of `several`.
  Objective objective() const { return several.empty() ? Objective(direction) : several.front(); }
  /// Every objective, in the job's order (one, "objective", without `several`).
  Objectives objectives() const { return several.empty() ? Objectives({Objective(direction)}) : Objectives(several); }
  /// The names the result line gives values by; empty for the single "objective".
  std::vector<std::string> result_names() const;
};

enum class SurrogateKind : std::uint8_t { random, gp, ablr, lbo, libo, jumbo };
std::string_view to_string(SurrogateKind kind);

enum class AcquisitionKind : std::uint8_t { ucb, ei, pi, hedge };
std::string_view to_string(AcquisitionKind kind);

/// What the models see of each task's results ([policy] output_warping): the values as they
/// are (standardized per task by the models), their Gaussian copula transform, or the copula
/// below the task's median and the values on their own scale above it, or the Yeo–Johnson power
/// transform of the standardized values with its exponent fitted by maximum likelihood (the
/// identity is one of its exponents).
enum class OutputWarping : std::uint8_t { none, copula, copula_below_median, yeo_johnson };
std::string_view to_string(OutputWarping warping);

/// Which earlier bests a new task starts with, and in which order ([policy]
/// transfer_best_choice): the most recent tasks' first, or a portfolio, each next best the one
/// that most improves how well the chosen ones together do on every earlier task (greedy, as
/// Wistuba, Schilling and Schmidt-Thieme's "Sequential model-free hyperparameter tuning", ICDM
/// 2015, and Pfisterer et al.'s "Learning multiple defaults", 2018).
enum class TransferBestChoice : std::uint8_t { recent, portfolio };
std::string_view to_string(TransferBestChoice choice);

/// What the job file knows of a surrogate: its name and the defaults it brings to [policy].
/// One line per model in jobs/src/surrogates.cpp; what runs it (its factory, how it describes
/// a task) is its entry in orchestrator/policy/src/models/.
struct SurrogateTraits {
  SurrogateKind kind = SurrogateKind::gp;
  std::string_view name;
  /// transfer_best unset: the earlier tasks' bests a new task starts with (lbo, ablr: 2). A
  /// model with any learns across tasks, and a new task proposes from the newest earlier
  /// task's posterior (model-prior) until it has a design of its own.
  int transfer_best = 0;
  /// initial_random unset: LiBO's forced exploration, ceil(sqrt(budget) / s^¼).
  bool libo_exploration = false;
  /// acquisition unset: this one (JUMBO's paper uses UCB), else [policy]'s default.
  std::optional<AcquisitionKind> acquisition;
  /// output_warping unset: yeo_johnson where it was measured to help (lbo: the Branin sequences
  /// and level on the transfer table, bench/README.md "Lifelong", decision `lbo-yeo-johnson`),
  /// else none (gp: the half copula cost on the single-task synthetic cases and gained nothing on the transfer table, bench/README.md
  /// "Sample efficiency", decision `gp-output-warping`).
  OutputWarping output_warping = OutputWarping::none;
  /// transfer_best unset: half the earlier tasks' distinct bests when that is more than
  /// transfer_best (lbo: measured on DeepAR,
  /// bench/log/2026-11-28-transfer-published-sixth-run-how-many-earlier-bests.md).
  bool transfer_best_grows = false;
};
/// Every surrogate, in the order the job file's error message names them.
std::span<const SurrogateTraits> surrogate_catalog();
const SurrogateTraits& traits_of(SurrogateKind kind);

struct PolicySpec {
  SurrogateKind surrogate = SurrogateKind::lbo;
  AcquisitionKind acquisition = AcquisitionKind::ei;
  int initial_random = 5;  ///< random trials per task before the surrogate proposes
  /// initial_random = "libo": task s (1-based, earlier warm-start tasks counted) starts with
  /// ceil(sqrt(budget) / s^¼) random trials (LiBO's forced exploration); the default for
  /// surrogate = "libo".
  bool libo_exploration = false;
  /// lbo, ablr: a new task's first trials are the best configurations of up to this many
  /// earlier tasks, in transfer_best_choice's order; unset: the model's SurrogateTraits::transfer_best
  /// (with lbo, half the earlier tasks' distinct bests when that is more).
  std::optional<int> transfer_best;
  /// Which earlier bests and in which order: a portfolio that covers the earlier tasks (the
  /// default since 2026-12-06, decision transfer-best-portfolio in bench/README.md), or the most
  /// recent tasks' first (orchestrator/policy/src/earlier_best.hpp).
  TransferBestChoice transfer_best_choice = TransferBestChoice::portfolio;
  /// Run directories whose finished tasks join the model as earlier tasks (absolute).
  std::vector<std::filesystem::path> warm_start;
  /// Where each warm_start entry is written ("job.toml:14:9: policy.warm_start[0]"), for errors.
  std::vector<std::string> warm_start_places;
  /// UCB: a constant β, or none for the GP-UCB schedule β_t = ucb_scale · 2 log(t^{d/2+2}π²/(3 ucb_delta)).
  std::optional<double> ucb_beta;
  double ucb_scale = 0.2;
  double ucb_delta = 0.1;
  double xi = 0.01;         ///< EI/PI margin over the best value, in standardized units
  /// yeo_johnson: the models learn each task's results through a power transform whose exponent
  /// is fitted to them; copula_below_median: through their Gaussian copula transform below the
  /// task's median, and on their own scale above it; copula: through the copula alone
  /// (orchestrator/policy/src/output_warping.hpp); none: as they are. Measured in bench/README.md,
  /// "Lifelong" and "Transfer, published".
  /// The job file's default is the surrogate's (SurrogateTraits::output_warping); this one is lbo's.
  OutputWarping output_warping = OutputWarping::yeo_johnson;
  double hedge_eta = 1.0;   ///< GP-Hedge learning rate
  /// GP-Hedge: a new task starts with hedge_memory × the gains the latest earlier task had when
  /// it first proposed (0: every task starts from zero, 1: gains carry over undecayed).
  double hedge_memory = 0.5;
  int candidates = 1024;    ///< quasi-random candidates per acquisition maximization
  int refine = 5;           ///< best candidates refined by L-BFGS-B
  /// Threads of the model fits and proposals (OpenMP); unset: OMP_NUM_THREADS, else the cores
  /// of lbo's affinity mask less the local slots (at least 1), or all of them under MPI.
  std::optional<int> fit_threads;
  /// A model task with more usable results is fitted on this many of them: the better half by
  /// value and the rest spread evenly over the others in trial order (a subset of data,
  /// Rasmussen and Williams 2006, sec. 8.3.1), so that a fit's cost stops growing with a task's
  /// results. Unset: every result.
  std::optional<int> max_fit_results;
  int network_width = 50;   ///< ablr, lbo, jumbo: units per layer of each feature map
  int network_depth = 3;    ///< ablr, lbo, jumbo: layers
  int networks = 10;        ///< lbo: M, the most latent feature maps (IBP truncation)
  double ibp_alpha = 2.0;   ///< lbo: the IBP's α, about how many networks a task uses
  /// lbo, ablr: a GP on the feature model's residuals (see surrogate/residual.hpp); unset:
  /// on for lbo, off for ablr.
  std::optional<bool> residual_gp;
  /// lbo, ablr: each task a GP whose prior spans the other tasks' posterior means (see
  /// surrogate/transfer.hpp); unset: on for lbo, off for ablr.
  std::optional<bool> transfer_gp;
  /// libo: each task mixes a share of k_full, fitted on its own data, into the learned kernel
  /// k̂ (surrogate/libo.hpp); false: k̂ alone, as the LiBO paper.
  bool libo_full_share = true;
  /// libo: a task whose own results the plain GP (the gp model) predicts better than its k̂ GP
  /// (leave-one-out) proposes from the plain GP (surrogate/libo.hpp); false: k̂ always.
  bool libo_gp_switch = true;
  /// jumbo: l_α, how far below the warm GP's best acquisition value a point may be and still be
  /// chosen by the cold GP's acquisition (standardized units; 0: the warm GP's choice, inf: the
  /// cold GP's).
  double jumbo_threshold = 0.1;
  /// jumbo: a task whose own results the cold GP predicts better than the warm GP
  /// (leave-one-out) proposes from the cold GP alone from then on (surrogate/jumbo.hpp); false:
  /// JUMBO as in the paper.
  bool jumbo_cold_switch = true;
};

/// How long a simulated trial takes ([workers] simulate_duration): "table" (the nearest row's
/// time, objective.table_time), a number of seconds, "uniform(a, b)", "lognormal(mu, sigma)"
/// (of ln seconds) or "exponential(mean)".
struct SimulatedDuration {
  enum class Kind : std::uint8_t { table, fixed, uniform, lognormal, exponential };
  Kind kind = Kind::table;
  double a = 0, b = 0;  ///< fixed: a; uniform: a..b; lognormal: mu, sigma; exponential: the mean a

  friend bool operator==(const SimulatedDuration&, const SimulatedDuration&) = default;
};
/// As the job file writes it.
std::string to_string(const SimulatedDuration& duration);
/// Reads what to_string writes (spaces allowed); none for anything else or a parameter out of
/// range (a duration < 0, uniform's b < a, sigma <= 0, a mean <= 0).
std::optional<SimulatedDuration> parse_simulated_duration(std::string_view text);

struct WorkersSpec {
  /// Concurrent trials without mpirun; default and "auto": the usable cores / threads_per_trial
  /// (at least 1).
  int local_slots = 1;
  bool local_slots_auto = true;  ///< local_slots was not given or is "auto"
  /// Concurrent trials per MPI worker rank; nullopt: "auto", each rank's cores (its affinity
  /// mask) / threads_per_trial.
  std::optional<int> slots_per_rank = 1;
  /// Cores of one trial: OMP_NUM_THREADS, MKL_NUM_THREADS, OPENBLAS_NUM_THREADS and LBO_THREADS
  /// in its environment, and each slot pinned to its own cores. Unset: 1 for LBO_THREADS and the
  /// slot count, and the thread variables and affinity are left as they were.
  std::optional<int> threads_per_trial;
  int gpus_per_trial = 0;         ///< GPUs of one trial (CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES)
  std::vector<std::string> gpus;  ///< the devices to split; empty: the environment's
  /// Under MPI: a worker rank the master has heard nothing from for this long is taken for lost
  /// (its trials run again elsewhere, without using a retry), and a worker rank that has heard
  /// nothing from the master for ten times this long exits. Both send a heartbeat every tenth
  /// of it.
  double rank_timeout_s = 120;
  /// Virtual slots of a simulated run (`simulate`, `lbo run --simulate N`): a tabulated
  /// objective's trials complete on a virtual clock (cluster/simulated_transport.hpp); 0: a real run.
  int simulate = 0;
  /// How long a simulated trial takes (`simulate_duration`).
  SimulatedDuration simulate_duration;
};

/// How trials are stopped early on their intermediate reports (`[early_stopping]`).
enum class StoppingRule : std::uint8_t {
  asha,       ///< asynchronous successive halving (Li et al., MLSys 2020): one bracket
  hyperband,  ///< ASHA in `brackets` brackets of growing first rungs (Li et al., JMLR 2018)
  median,     ///< the median stopping rule (Golovin et al., KDD 2017), checked at the rungs
  /// stops a trial whose forecast final value is unlikely to beat its task's best, the forecast
  /// learned from the curves of this task's and earlier tasks' trials (fidelity/src/curve_forecast.hpp)
  predictive,
};
std::string_view to_string(StoppingRule rule);

/// What the job file knows of a stopping rule: its name and the keys and mode it takes. One
/// line per rule in jobs/src/stopping_rules.cpp; what decides (its class) is its entry in
/// orchestrator/fidelity/src/stop_rule.cpp.
struct StoppingRuleTraits {
  StoppingRule rule = StoppingRule::asha;
  std::string_view name;
  bool brackets = false;    ///< `brackets`: several brackets of growing first rungs (Hyperband)
  bool promotes = false;    ///< mode = "promotion": ASHA's promotions of paused trials
  bool min_trials = false;  ///< `min_trials`: it judges once that many others reached a rung
  bool transfer = false;    ///< `transfer`: RUSH's hurdles from earlier tasks come first
  bool forecasts = false;   ///< `min_probability`: it stops on a forecast of the final value
};
std::span<const StoppingRuleTraits> stopping_rule_catalog();
const StoppingRuleTraits& traits_of(StoppingRule rule);

/// What a trial that does not make the cut at a rung gets (`[early_stopping] mode`).
enum class StoppingMode : std::uint8_t {
  stop,       ///< it is stopped there for good (status `stopped`)
  /// every trial pauses at each rung of its bracket; the best 1/η of a rung are resumed from
  /// their checkpoints to the next (ASHA's promotions), the rest end `stopped` once their task
  /// has nothing left to run (asha, hyperband)
  promotion,
};
std::string_view to_string(StoppingMode mode);

/// What the model learns from a trial's curve (`[early_stopping] model`).
enum class CurveModel : std::uint8_t {
  /// a trial enters with its last value: a stopped or paused trial's at the step it ended on, as
  /// a searcher hears it in Ray Tune or Optuna (one model task per task)
  last,
  /// every rung of bracket 0 and max_step is a model task of its own (the steps as related
  /// functions sharing features, as in SMS-DKL; MOBSTER's GP over configuration and resource,
  /// discretized at the rungs); proposals maximize the acquisition at max_step
  rungs,
  /// the same model tasks; proposals maximize the acquisition at the highest rung with more
  /// results than the space has dimensions (BOHB's rule, Falkner et al., ICML 2018)
  highest_rung,
  /// as `last`, but a trial the predictive rule stopped or paused enters with the forecast of its
  /// value at max_step it was judged by (Outcome::forecast), where it had one
  forecast,
};
std::string_view to_string(CurveModel model);

struct EarlyStoppingSpec {
  /// Hyperband by default: on bench/fidelity's three problems (bench/README.md) its brackets,
  /// which hedge over the first rung, were ahead of asha's single one (r = 1) at every budget.
  StoppingRule rule = StoppingRule::hyperband;
  StoppingMode mode = StoppingMode::stop;
  std::string step_name = "step";  ///< what a step is ("epoch"), for the log and the report
  std::int64_t min_step = 1;       ///< r: the first rung
  std::int64_t max_step = 1;       ///< R: a trial's full run; a report past it is ignored
  int eta = 3;                     ///< η: each rung keeps the best 1/η
  /// hyperband: brackets 0..brackets-1, bracket b's first rung r·η^b; asha and median: 1.
  int brackets = 1;
  /// median: the trials of the task that must have reached a rung before it stops any there.
  int min_trials = 5;
  /// asha, hyperband: the best value that the task's trials of earlier tasks' best
  /// configurations ([policy] transfer_best) have at a rung is a hurdle there (RUSH).
  bool transfer = true;
  /// predictive: a trial is stopped at a rung (in promotion mode: not promoted) when the
  /// probability that its value at max_step beats its task's best falls below this.
  double min_probability = 0.05;
  /// Measured against the others on bench/fidelity, none is better under every rule yet
  /// (bench/README.md): the default stays what a searcher of Ray Tune or Optuna does.
  CurveModel model = CurveModel::last;
  /// Promotion mode: the checkpoint folders (LBO_CHECKPOINT_DIR) kept once a task is done and
  /// none of its trials can resume. `best`: only the task's best trial's (the model a user may
  /// want); `all`; `none`. A paused trial of 300 MB each left gigabytes behind when all stayed.
  enum class KeepCheckpoints : std::uint8_t { best, all, none } keep_checkpoints = KeepCheckpoints::best;
  /// With several objectives: the index in [objective] objectives of the one the reports give
  /// (`objective = "name"`; the primary, 0, by default). A stopped or paused trial's value is
  /// this objective's.
  std::size_t objective = 0;

  /// The rung steps of `bracket`: r·η^(bracket+k) for k = 0, 1, ... while below max_step.
  std::vector<std::int64_t> rungs(int bracket) const;
  /// promotion: the step an attempt of a trial in `bracket` runs to when it resumes after
  /// step `resume` (its next rung, or max_step).
  std::int64_t target_step(int bracket, std::int64_t resume) const;
  /// The steps the model learns at (model = rungs, highest_rung): bracket 0's rungs and
  /// max_step. Every bracket's rungs are among them.
  std::vector<std::int64_t> model_steps() const;
};

/// Where a task came from: the job file, `lbo add-task`, or a file in the watched folder.
enum class TaskOrigin : std::uint8_t { job_file, added, watched };
std::string_view to_string(TaskOrigin origin);

/// The most trials a task may have (tasks[].budget, default_budget, add-task --budget).
inline constexpr int kMaxBudget = 100'000'000;
/// The most virtual slots a simulated run may have ([workers] simulate, --simulate).
inline constexpr int kMaxSimulatedSlots = 1'000'000;

struct TaskSpec {
  std::string name;
  std::optional<std::filesystem::path> dataset;  ///< absolute
  int budget = 1;                                ///< trials that count for this task
  /// The resource it may spend, in [early_stopping] steps summed over its trials (0: no limit):
  /// once spent, it starts no new trial and ends when those running have.
  std::int64_t budget_steps = 0;
  TaskOrigin origin = TaskOrigin::job_file;
};

struct ScheduleSpec {
  /// Every new file in this folder whose name matches watch_pattern becomes a task (absolute;
  /// none when unset).
  std::optional<std::filesystem::path> watch;
  std::string watch_pattern = "*.csv";  ///< a glob (fnmatch(3)) over file names in `watch`
  int default_budget = 20;   ///< of watched tasks and of `lbo add-task` without --budget
  int concurrent_tasks = 1;  ///< tasks open at once; > 1: the Hedge policy picks among them
  double idle_timeout_s = 0; ///< with every task done, how long to wait for a new one before exiting
};

struct JobSpec {
  std::string name;  ///< run directory name
  std::uint64_t seed = 0;
  double checkpoint_every_s = 60;  ///< period of checkpoints while running (also written at every stop)
  double grace_s = 30;             ///< after a stop signal, how long running trials may finish
  std::filesystem::path job_file;  ///< absolute path of the file read
  std::string source_text;         ///< the file's text, frozen into the run directory
  ObjectiveSpec objective;
  PolicySpec policy;
  WorkersSpec workers;
  ScheduleSpec schedule;
  Space space;
  std::vector<TaskSpec> tasks;
  /// `[early_stopping]`; none: every trial runs to its end.
  std::optional<EarlyStoppingSpec> early_stopping;
  /// `[[constraints]]`: limits on values the result reports in "metrics", in the file's order.
  std::vector<Constraint> constraints;

  int total_budget() const;
  /// The objective intermediate reports give and early stopping ranks by: with several
  /// objectives the one [early_stopping] objective names (the primary by default), else the one.
  Objective stopping_objective() const;
};

/// Reads and validates a job file. Throws InputError listing every problem found, each as
/// `file:line:column: key: what is wrong` (relative paths resolve against the file's folder),
/// and before reading when `path` is not a regular file or holds more than kMaxJobFileBytes.
JobSpec load_job_file(const std::filesystem::path& path);

/// A job file is a few kilobytes; a bigger one is a mistake (a dataset named instead of the
/// job, /dev/zero), and reading it whole would hold it all in memory.
inline constexpr std::uintmax_t kMaxJobFileBytes = 16u << 20;

/// As load_job_file, for text already in memory; `path` names it in messages and gives the
/// folder relative paths resolve against.
JobSpec parse_job(std::string_view text, const std::filesystem::path& path);

/// Names usable as run and task names: letters, digits, '.', '_' and '-', not starting with '.'.
bool is_valid_name(std::string_view name);
/// A usable task name for a dataset file: its stem with every other character made '_'.
std::string task_name_for(const std::filesystem::path& dataset);
/// The [schedule] default_budget a job file's text sets (a run's frozen job.toml), if any; no
/// other validation.
std::optional<int> default_budget_in(std::string_view job_text);
/// The [early_stopping] table's max_step and step_name in a job file's text (a run's frozen
/// job.toml), unset keys at their defaults; nullopt without the table. No other validation.
struct StepsOfJob {
  std::int64_t max_step = 1;
  std::string step_name = "step";
};
std::optional<StepsOfJob> early_stopping_steps_in(std::string_view job_text);
/// LiBO's forced exploration: ceil(sqrt(budget) / s^¼) for the s-th task (1-based).
int libo_initial_random(int budget, int s);

/// Why `seconds` cannot be the period of checkpoints (the job file's checkpoint_every_s,
/// --checkpoint-every), or empty when it can: a number of seconds in
/// [kMinCheckpointEvery_s, kMaxSeconds].
std::string checkpoint_every_problem(double seconds);
/// Checkpoints closer than this would be written back to back: each takes about this long.
inline constexpr double kMinCheckpointEvery_s = 0.1;
/// The longest time a job file may give (about 31 years): a timer that long still fits the
/// clocks' 64-bit nanoseconds.
inline constexpr double kMaxSeconds = 1e9;

/// What is wrong with the interpreter that `program` (a path, or a name looked up on PATH) names
/// on its `#!` line, e.g. "its #! interpreter /usr/bin/pyhton3 does not exist": the reason the
/// kernel cannot start a script that exists. Nullopt when the program is no script or its
/// interpreter can run.
std::optional<std::string> interpreter_problem(const std::string& program);

/// Usable cores for this process (CPU affinity), at least 1.
int usable_cores();

/// Why `job` cannot run simulated, with `where` naming what asked for it ("workers.simulate",
/// "--simulate"): no tabulated objective, or a duration from a table without a time column;
/// empty when it can.
std::string simulation_problem(const JobSpec& job, std::string_view where);

}  // namespace lbo::jobs
